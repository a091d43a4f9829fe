import type { Session } from '../../../packages/client/src/client.js'
import { checkOutText, flagReason, hours, localTime } from '../format.js'
import { useLocation } from '../locations.js'
import { OperatorName } from '../operators.js'
import { Link } from '../router.js'
import { describe, ReviewControls } from './ReviewControls.js'
import type { Decision, RowReview } from './reviews.js'

/** One session of the queue, with what a manager needs to decide: who, when, how long, why flagged, notes. */
export function ReviewRow({
  session,
  reviewing,
  state,
  selected,
  onSelect,
  onReview,
}: {
  session: Session
  /** Whether the one signed in may approve: the row's box and review controls, else neither. */
  reviewing: boolean
  state: RowReview | undefined
  selected: boolean
  onSelect: (selected: boolean) => void
  onReview: (decision: Decision, note: string) => void
}) {
  const { location, ready, timeZone } = useLocation(session.location_id)
  const time = (iso: string) => (ready ? localTime(iso, timeZone) : '…')
  const page = `/sessions/${encodeURIComponent(session.id)}`
  return (
    <tr>
      {reviewing && (
        <td>
          <input
            type="checkbox"
            checked={selected}
            disabled={session.review_status !== 'pending'}
            onChange={(event) => onSelect(event.currentTarget.checked)}
            aria-label={`Select ${describe(session)}`}
          />
        </td>
      )}
      <td>
        <OperatorName id={session.operator_id} ident={session.operator_ident} />
      </td>
      <td class="date">{session.work_date}</td>
      <td>
        <Link to={page} class="time">
          {time(session.check_in.time)}
        </Link>
        <div class="time">
          {session.check_out && 'to '}
          {checkOutText(session, time)}
        </div>
        <div class="muted">{location?.name ?? session.location_id ?? 'no location'}</div>
      </td>
      <td class="number">{hours(session.total_hours)}</td>
      <td>{flagReason(session.flag_reason)}</td>
      <td class="notes">{session.notes ?? '—'}</td>
      {reviewing && (
        <td>
          <ReviewControls
            session={session}
            state={state}
            onReview={onReview}
            noCheckOut={
              <Link to={page} aria-label={`Set the check-out to approve ${describe(session)}`}>
                Set the check-out to approve
              </Link>
            }
          />
        </td>
      )}
    </tr>
  )
}
