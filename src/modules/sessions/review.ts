/**
 * Review and work dates of sessions (docs/review-and-timesheets.md): the steps the session
 * lifecycle runs when it writes a session, and the approve/reject transitions. Each rule is one
 * named step here; the lifecycle calls them.
 */
import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Executor, Trx } from '../../db/connection.js'
import type { ReviewStatus } from '../../db/schema.js'
import { previousAttributes } from '../../lib/changes.js'
import { calendarDate } from '../../lib/dates.js'
import { recordEvent } from '../events/outbox.js'
import { findLocation } from '../locations/repository.js'
import { assertPeriodOpen, closedPeriodHolding } from '../pay-periods/service.js'
import { findSession, insertRevision, type SessionRow, toSession, updateSessionRow } from './repository.js'
import type { Session } from './schemas.js'

export const REVIEW_STATUSES = [
  'pending',
  'not_required',
  'approved',
  'rejected',
] as const satisfies readonly ReviewStatus[]

type ReviewFields = Pick<SessionRow, 'review_status' | 'reviewed_at' | 'reviewed_by' | 'review_note'>

/**
 * A session written through the API (create or edit) or closed by the service with a flag: it
 * awaits a manager's review, whatever review it had before (an edit re-flags it, as the spec says).
 */
export const AWAITING_REVIEW: ReviewFields = {
  review_status: 'pending',
  reviewed_at: null,
  reviewed_by: null,
  review_note: null,
}

/** A session a scan opened without a flag: nothing to review. */
export const NO_REVIEW_NEEDED: ReviewFields = {
  review_status: 'not_required',
  reviewed_at: null,
  reviewed_by: null,
  review_note: null,
}

/**
 * The work date of a session: the calendar date of its check-in in its location's time zone (UTC
 * without a location, or when the location was deleted). Computed when the session is written and
 * stored, so a location whose zone changes later does not move past sessions.
 */
export async function workDateOf(
  db: Executor,
  auth: AuthContext,
  checkInAt: number,
  locationId: string | null,
): Promise<string> {
  const location = locationId === null ? undefined : await findLocation(db, auth, locationId)
  return calendarDate(checkInAt, location?.timezone ?? 'UTC')
}

/**
 * The work date after an edit: recomputed when the check-in or the location changes, kept
 * otherwise (a later change of the location's zone moves nothing).
 */
export async function workDateAfterEdit(
  db: Executor,
  auth: AuthContext,
  current: SessionRow,
  changes: Partial<SessionRow>,
): Promise<string> {
  if (changes.check_in_at === undefined && changes.location_id === undefined && current.work_date) {
    return current.work_date
  }
  const locationId = changes.location_id !== undefined ? changes.location_id : current.location_id
  return workDateOf(db, auth, changes.check_in_at ?? current.check_in_at, locationId)
}

/**
 * 409 `period_closed` when the session's work date before or after the change lies in a closed pay
 * period. Run in the writing transaction, before the write (it takes the pay-period lock).
 */
export async function assertWorkDatesOpen(
  trx: Trx,
  auth: AuthContext,
  before: string | null | undefined,
  after: string | null | undefined,
): Promise<void> {
  await assertPeriodOpen(trx, auth, [before, after])
}

/** Whether a scan may open or complete a session of this work date (false: flag `period_closed`). */
export async function scanMayWrite(trx: Trx, auth: AuthContext, workDate: string): Promise<boolean> {
  return (await closedPeriodHolding(trx, auth, [workDate])) === undefined
}

/**
 * Approves or rejects a completed session (409 `session_open` while open; `period_closed` in a
 * closed period). A reviewed session may be reviewed again (a rejection overturned). Writes a
 * revision (`approved` / `rejected`) and emits `session.updated` with `previous_attributes`.
 */
export async function reviewSession(
  trx: Trx,
  auth: AuthContext,
  id: string,
  decision: 'approved' | 'rejected',
  note: string | null | undefined,
): Promise<Session> {
  if (decision === 'rejected' && (note === undefined || note === null || note.trim() === '')) {
    throw errors.missingParam('note', 'A rejection needs a note: say why the session does not count.')
  }
  const current = await findSession(trx, auth, id, true)
  if (!current) throw errors.notFound('session', id)
  if (current.status === 'open') throw errors.sessionOpen(id)
  await assertWorkDatesOpen(trx, auth, current.work_date, current.work_date)
  const now = Date.now()
  const changes: ReviewFields & { updated_at: number } = {
    review_status: decision,
    reviewed_at: now,
    reviewed_by: auth.keyId,
    review_note: note ?? null,
    updated_at: now,
  }
  await updateSessionRow(trx, id, changes)
  const before = toSession(current)
  const session = toSession({ ...current, ...changes })
  await insertRevision(trx, auth, id, decision, before, session)
  await recordEvent(trx, auth, 'session.updated', session, {
    previousAttributes: previousAttributes(before, session),
  })
  return session
}
