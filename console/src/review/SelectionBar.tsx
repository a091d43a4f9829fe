import { useState } from 'preact/hooks'
import { Field } from '../components/Field.js'
import { count } from '../format.js'
import { type Decision, missingNote } from './reviews.js'

/** Approve or reject every selected session with one note; each refusal shows on its own row. */
export function SelectionBar({
  selected,
  busy,
  outcome,
  onReview,
}: {
  /** Sessions selected. */
  selected: number
  busy: boolean
  /** What the last selection review did, in words. */
  outcome: string | undefined
  onReview: (decision: Decision, note: string) => void
}) {
  const [note, setNote] = useState('')
  const [problem, setProblem] = useState<string | undefined>()
  const decide = (decision: Decision) => {
    const refused = missingNote(decision, note)
    setProblem(refused)
    if (refused) return
    onReview(decision, note)
    setNote('')
  }
  const disabled = busy || selected === 0
  return (
    <section class="selection-bar" aria-label="Review the selection">
      <p>{`${count(selected, 'session')} selected`}</p>
      <Field id="selection-note" label="Note for the selection" value={note} onValue={setNote} />
      <button type="button" disabled={disabled} onClick={() => decide('approve')}>
        Approve selected
      </button>
      <button type="button" class="secondary" disabled={disabled} onClick={() => decide('reject')}>
        Reject selected
      </button>
      <p class="muted" aria-live="polite">
        {problem ?? outcome}
      </p>
    </section>
  )
}
