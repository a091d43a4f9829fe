import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import type { Session } from '../../../packages/client/src/client.js'
import { Badge } from '../components/Badge.js'
import { type Decision, missingNote, type RowReview, reviewProblem } from './reviews.js'

/** How a session is named to a screen reader on its buttons: its operator and work date. */
export function describe(session: Session): string {
  return `${session.operator_ident} on ${session.work_date}`
}

/**
 * A note, **Approve** and **Reject** for a pending session; its status once reviewed. A session
 * without a check-out cannot be approved (the API answers `check_out_missing`), so it is not
 * offered: `noCheckOut` says where to set one.
 */
export function ReviewControls({
  session,
  state,
  onReview,
  noCheckOut,
}: {
  session: Session
  state: RowReview | undefined
  onReview: (decision: Decision, note: string) => void
  noCheckOut: ComponentChildren
}) {
  const [note, setNote] = useState('')
  const [problem, setProblem] = useState<string | undefined>()
  if (session.review_status !== 'pending') {
    return <Badge tone={session.review_status === 'rejected' ? 'bad' : 'good'}>{session.review_status}</Badge>
  }
  const decide = (decision: Decision) => {
    const refused = missingNote(decision, note)
    setProblem(refused)
    if (!refused) onReview(decision, note)
  }
  const error = problem ?? (state?.error && reviewProblem(state.error))
  const noteId = `note-${session.id}`
  return (
    <div class="review-controls">
      <label for={noteId} class="visually-hidden">
        {`Note for ${describe(session)}`}
      </label>
      <input
        id={noteId}
        placeholder="Note"
        value={note}
        onInput={(event) => setNote(event.currentTarget.value)}
      />
      {session.check_out ? (
        <button
          type="button"
          disabled={state?.pending}
          onClick={() => decide('approve')}
          aria-label={`Approve ${describe(session)}`}
        >
          Approve
        </button>
      ) : (
        <p class="row-note">{noCheckOut}</p>
      )}
      <button
        type="button"
        class="secondary"
        disabled={state?.pending}
        onClick={() => decide('reject')}
        aria-label={`Reject ${describe(session)}`}
      >
        Reject
      </button>
      {error && (
        <p class="row-error" role="alert">
          {error}
        </p>
      )}
    </div>
  )
}
