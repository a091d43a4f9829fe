import { useState } from 'preact/hooks'
import type { Session } from '../../../packages/client/src/types.js'
import { Badge } from '../components/Badge.js'
import { hours, localTime, words } from '../format.js'
import { useLocation } from '../locations.js'
import { Link } from '../router.js'
import { type Decision, missingNote, type RowReview, reviewProblem } from './reviews.js'

/** How a session of the queue is named to a screen reader: its operator and check-in. */
function describe(session: Session): string {
  return `${session.operator_ident} on ${session.work_date}`
}

function ReviewControls({
  session,
  state,
  onReview,
}: {
  session: Session
  state: RowReview | undefined
  onReview: (decision: Decision, note: string) => void
}) {
  const [note, setNote] = useState('')
  const [problem, setProblem] = useState<string | undefined>()
  if (session.review_status !== 'pending') {
    return <Badge tone={session.review_status === 'approved' ? 'good' : 'bad'}>{session.review_status}</Badge>
  }
  const decide = (decision: Decision) => {
    const refused = missingNote(decision, note)
    setProblem(refused?.message)
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
      <button
        type="button"
        disabled={state?.pending}
        onClick={() => decide('approve')}
        aria-label={`Approve ${describe(session)}`}
      >
        Approve
      </button>
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

export function ReviewRow({
  session,
  state,
  selected,
  onSelect,
  onReview,
}: {
  session: Session
  state: RowReview | undefined
  selected: boolean
  onSelect: (selected: boolean) => void
  onReview: (decision: Decision, note: string) => void
}) {
  const { location, ready, timeZone } = useLocation(session.location_id)
  const time = (iso: string) => (ready ? localTime(iso, timeZone) : '…')
  return (
    <tr>
      <td>
        <input
          type="checkbox"
          checked={selected}
          disabled={session.review_status !== 'pending'}
          onChange={(event) => onSelect(event.currentTarget.checked)}
          aria-label={`Select ${describe(session)}`}
        />
      </td>
      <td>{session.work_date}</td>
      <td>
        <Link to={`/sessions/${encodeURIComponent(session.id)}`}>{time(session.check_in.time)}</Link>
        <div>{session.check_out ? `to ${time(session.check_out.time)}` : 'still open'}</div>
      </td>
      <td>{session.operator_ident}</td>
      <td>{location?.name ?? session.location_id ?? '—'}</td>
      <td class="number">{hours(session.total_hours)}</td>
      <td>{words(session.flag_reason)}</td>
      <td>
        <ReviewControls session={session} state={state} onReview={onReview} />
      </td>
    </tr>
  )
}
