import { errors } from '../../core/errors.js'
import { type AuthContext, seesLocation } from '../../core/identity.js'
import { instantOf } from '../../core/instants.js'
import { holdWrites } from '../../db/held-writes.js'
import type { ReviewStatus, StoredBreak } from '../../db/schema.js'
import type { Executor, Trx } from '../../db/types.js'
import { changedFields, previousAttributes } from '../../lib/changes.js'
import { clock } from '../../lib/clock.js'
import { calendarDate } from '../../lib/dates.js'
import { type DeviceRow, resolveDevice, resolveDeviceWithZone } from '../devices/service.js'
import { recordEvent, recordEvents } from '../events/outbox.js'
import { resolveLocation, timeZoneAt } from '../locations/service.js'
import { lockOperatorsById, type OperatorRow, resolveOperator } from '../operators/service.js'
import { assertPeriodOpen } from '../pay-periods/service.js'
import {
  atSeenLocations,
  createResource,
  lockResource,
  type ResourceRow,
  type ResourceStore,
  updateResource,
} from '../shared/resources.js'
import { breaksFromInput, checkBreaks, endOpenBreak, parseBreaks, serializeBreaks } from './breaks.js'
import { breakMinutesOf } from './hours.js'
import {
  findOpenSession,
  findOverlappingSession,
  findSession,
  insertRevision,
  insertSession,
  type SessionRow,
  toSession,
  updateSessionRow,
} from './repository.js'
import { MAX_SHIFT_MS } from './scan-decision.js'
import type { CreateSessionBody, Session, UpdateSessionBody } from './schemas.js'

/** The longest an open session stays open (the scan decision's rule): the sweep and the overlap rule read it too. */
export { MAX_SHIFT_MS }

/**
 * The life of a session, in one place: opened by a check-in scan or created through the API,
 * completed by a check-out scan or an edit, closed when a shift runs too long, edited, deleted.
 * Every change writes its revision and emits its events here; the rules a session obeys are checked
 * here, under the operator's lock.
 */

const HOUR_MS = 60 * 60 * 1000
/** A session entered or edited through the API lasts at most this long (3 days). */
export const MAX_API_SESSION_MS = 72 * HOUR_MS
/**
 * How far ahead of the server's clock a recorded time may be: device clocks drift a little, but an
 * attendance record is written after the fact, so a time beyond this (a device a week ahead) is
 * refused rather than opening a session that blocks every real scan after it.
 */
export const FUTURE_TOLERANCE_MS = 5 * 60 * 1000

export const sessions: ResourceStore<SessionRow, Session> = {
  name: 'session',
  prefix: 'ses',
  // To a principal held to sites, a session elsewhere (or without a location) does not exist.
  find: atSeenLocations(findSession, (row) => row.location_id),
  insert: insertSession,
  write: updateSessionRow,
  toApi: toSession,
  // The partial unique index allows one open session per operator. It refuses an edit that moves
  // an open session to an operator who has one, and a check-in of two processes that raced past
  // the operator lock (SQLite files shared by processes); the client may retry that scan.
  duplicate: (row) => errors.openSessionExists(row.operator_ident),
}

/**
 * The per-operator serialisation. Every change to an operator's sessions (a scan, an API create or
 * edit) takes it first and holds it to the end of its transaction, so a rule that reads the
 * operator's other sessions sees them as they will be when the change commits. On PostgreSQL it
 * locks the operators' rows; SQLite's write transactions already run one at a time. It is taken
 * before any session row, in id order, so no two changes wait on each other in a cycle.
 * Returns the operators as read under the lock. A create or a scan, which names one operator,
 * takes it with the operator's look-up instead (`resolveOperator` with `lock`): one read, not two.
 */
export async function lockOperators(
  trx: Trx,
  auth: AuthContext,
  ids: ReadonlyArray<string | undefined>,
): Promise<OperatorRow[]> {
  const distinct = [...new Set(ids)].filter((id) => id !== undefined)
  return lockOperatorsById(trx, auth, distinct)
}

/**
 * An instant of the record (a check-in, a check-out, a scan): not before 1970 (`invalid_time_range`)
 * and not more than 5 minutes after `now` (`time_in_future`), each naming `param`.
 */
function checkRecordedInstant(at: number, param: string, now: number): void {
  if (at < 0) throw errors.invalidTimeRange(param, `${param} must not be before 1970-01-01.`)
  if (at > now + FUTURE_TOLERANCE_MS) throw errors.timeInFuture(param, FUTURE_TOLERANCE_MS / 60_000)
}

/** A scan's `time` (or now, when it has none), parsed and checked like every recorded instant. */
export function scanInstant(time: string | undefined, now = clock.now()): number {
  if (time === undefined) return now
  const at = instantOf(time, 'time')
  checkRecordedInstant(at, 'time', now)
  return at
}

type Times = Pick<SessionRow, 'check_in_at' | 'check_out_at' | 'break_minutes' | 'breaks'>

/** The rules every stored session obeys, checked on the merged state of a create or an edit. */
function checkTimes(row: Times, now = clock.now()): void {
  checkRecordedInstant(row.check_in_at, 'check_in.time', now)
  const breaks = parseBreaks(row.breaks)
  if (row.check_out_at !== null) {
    checkRecordedInstant(row.check_out_at, 'check_out.time', now)
    if (row.check_out_at <= row.check_in_at) {
      throw errors.invalidTimeRange('check_out.time', 'check_out.time must be later than check_in.time.')
    }
    if (row.check_out_at - row.check_in_at > MAX_API_SESSION_MS) {
      throw errors.invalidTimeRange('check_out.time', 'A session lasts at most 72 hours.')
    }
    // With records, break_minutes is their total, and the records lying inside the session is the
    // rule (checked below): a rounded total may pass the length of a session of a minute or two.
    if (breaks.length === 0 && row.break_minutes * 60_000 > row.check_out_at - row.check_in_at) {
      throw errors.breakExceedsDuration()
    }
  }
  // Without a check-out (open, or closed for an over-long shift) a break may reach the latest
  // instant anything may be recorded at.
  checkBreaks(breaks, row.check_in_at, row.check_out_at ?? now + FUTURE_TOLERANCE_MS)
}

/**
 * The break columns of a session whose records are `breaks`: the list, and `break_minutes` as their
 * unpaid total (0 for a list emptied by a PATCH).
 */
function breakFields(breaks: readonly StoredBreak[]): Pick<SessionRow, 'breaks' | 'break_minutes'> {
  return { breaks: serializeBreaks(breaks), break_minutes: breakMinutesOf(breaks) }
}

/**
 * `break_minutes` and `breaks` in one body, or `break_minutes` on a session with break records
 * (`stored`): 422 `conflicting_param`, as the records are what `break_minutes` is computed from.
 */
function refuseConflictingBreakMinutes(
  input: Pick<CreateSessionBody, 'break_minutes' | 'breaks'>,
  stored: readonly StoredBreak[],
): void {
  if (input.break_minutes === undefined) return
  if (input.breaks !== undefined) {
    throw errors.conflictingParam('break_minutes', 'Send break_minutes or breaks, not both.')
  }
  if (stored.length > 0) {
    throw errors.conflictingParam(
      'break_minutes',
      'This session has break records: break_minutes is their unpaid total. Send breaks instead.',
    )
  }
}

type Placed = Pick<SessionRow, 'operator_id' | 'check_in_at' | 'check_out_at' | 'status'>

/**
 * The time a session occupies, [start, end): an open session has no end yet (it extends to now
 * and goes on while the operator is there, so nothing may be recorded after its check-in); a
 * completed one ends at its check-out, or 16 hours after its check-in when it was closed without
 * one. `findOverlappingSession` reads stored sessions the same way.
 */
function intervalOf(session: Placed): { start: number; end: number | null } {
  if (session.status === 'open') return { start: session.check_in_at, end: null }
  return { start: session.check_in_at, end: session.check_out_at ?? session.check_in_at + MAX_SHIFT_MS }
}

/** The session of the operator's record (its id and location) that `session` (not itself) would overlap. */
function overlappingSession(trx: Trx, auth: AuthContext, session: Placed & { id?: string }) {
  return findOverlappingSession(trx, auth, {
    operatorId: session.operator_id,
    ...intervalOf(session),
    excludeId: session.id,
    closedShiftMs: MAX_SHIFT_MS,
    longestSessionMs: MAX_API_SESSION_MS,
  })
}

/**
 * No operator is in two sessions at once: 409 `overlapping_session` naming the other one (or
 * "another session", when the principal is held to sites that session is not at). Run under the
 * operator's lock, so two concurrent changes cannot both pass it.
 */
async function refuseOverlap(trx: Trx, auth: AuthContext, session: Placed & { id?: string }) {
  const other = await overlappingSession(trx, auth, session)
  if (other !== undefined)
    throw errors.overlappingSession(seesLocation(auth, other.location_id) ? other.id : undefined)
}

/**
 * Whether a scan at `at`, of an operator with no open session, comes too late to change the record
 * (`out_of_order`): a check-in would open a session overlapping one already recorded (the scan
 * falls inside it, or before it), a check-out falls inside one. A device that was offline syncs
 * such scans after the record moved on; applying them would make sessions that cannot have
 * happened.
 */
export async function isOutOfOrder(
  trx: Trx,
  auth: AuthContext,
  operatorId: string,
  at: number,
  checksIn: boolean,
): Promise<boolean> {
  const other = await overlappingSession(trx, auth, {
    operator_id: operatorId,
    check_in_at: at,
    check_out_at: checksIn ? null : at + 1,
    status: checksIn ? 'open' : 'completed',
  })
  return other !== undefined
}

type NewSession = Omit<SessionRow, keyof ResourceRow | 'deleted_at'>

/** Stores a new session with its first revision: the one way a session row comes to be. */
async function startSession(
  trx: Trx,
  auth: AuthContext,
  fields: NewSession,
  action: 'created' | 'checked_in',
): Promise<Session> {
  const session = await createResource(trx, auth, sessions, { ...fields, deleted_at: null })
  await insertRevision(trx, auth, session.id, action, null, session)
  return session
}

/** A change to a session already locked (by the scan that found it), written with its revision. */
async function changeSession(
  trx: Trx,
  auth: AuthContext,
  current: SessionRow,
  changes: Partial<SessionRow>,
  action: 'checked_out' | 'closed' | 'break_started' | 'break_ended',
): Promise<Session> {
  const updated: SessionRow = { ...current, ...changes, updated_at: clock.now() }
  await updateSessionRow(trx, current.id, { ...changes, updated_at: updated.updated_at })
  const session = toSession(updated)
  await insertRevision(trx, auth, current.id, action, toSession(current), session)
  return session
}

/**
 * The location a request names: its row, `null` (in a PATCH, removing it), or undefined when the
 * request names none.
 */
async function namedLocation(
  trx: Trx,
  auth: AuthContext,
  input: { location_id?: string | null; location_name?: string },
): Promise<{ id: string; timezone: string } | null | undefined> {
  if (input.location_id === null) {
    // A session without a location does not exist for a principal held to sites: it cannot make one.
    if (auth.locationIds !== null)
      throw errors.invalidValue(
        'location_id',
        'A key or person held to some locations keeps a session at one of them: location_id cannot be null.',
      )
    return null
  }
  if (input.location_id === undefined && input.location_name === undefined) return undefined
  return resolveLocation(trx, auth, { id: input.location_id, name: input.location_name })
}

/** The location an edit sets: the one named in the request; `null` removes it. */
async function locationFor(
  trx: Trx,
  auth: AuthContext,
  input: { location_id?: string | null; location_name?: string },
): Promise<string | null | undefined> {
  const location = await namedLocation(trx, auth, input)
  return location ? location.id : location
}

/** A session entered through the API: completed, and flagged `manual_api_entry` for review. */
export async function createSession(trx: Trx, auth: AuthContext, input: CreateSessionBody): Promise<Session> {
  // The operator's lock (see lockOperators) is taken by the look-up itself.
  const operator = await resolveOperator(trx, auth, input, { lock: true })
  const device = await resolveDeviceWithZone(trx, auth, input.device_id)
  // The location the request names, else the device's own (a create has none to remove: `null` too).
  const location = (await namedLocation(trx, auth, input)) ?? {
    id: device.location_id,
    timezone: device.location_timezone,
  }
  const checkInAt = instantOf(input.check_in.time, 'check_in.time')
  refuseConflictingBreakMinutes(input, [])
  const fields: NewSession = {
    operator_id: operator.id,
    operator_ident: operator.ident,
    device_code: device.code,
    location_id: location.id,
    check_in_at: checkInAt,
    check_out_at: instantOf(input.check_out.time, 'check_out.time'),
    break_minutes: input.break_minutes ?? 0,
    breaks: '[]',
    ...(input.breaks === undefined ? {} : breakFields(breaksFromInput(input.breaks, []))),
    notes: input.notes ?? null,
    is_flagged: 1,
    flag_reason: 'manual_api_entry',
    source: 'api',
    status: 'completed',
    // UTC without a location, as `timeZoneAt` says.
    work_date: calendarDate(checkInAt, location.timezone ?? 'UTC'),
    ...AWAITING_REVIEW,
  }
  checkTimes(fields)
  await refuseOverlap(trx, auth, fields)
  await assertWorkDatesOpen(trx, auth, null, fields.work_date)
  // Every check is done: on PostgreSQL the row, its revision and its events go as one statement,
  // with the transaction's next one (db/held-writes.ts). None of them can be refused but by a bug:
  // the session is completed, so the one-open-session index does not hold it, and the rest are new ids.
  await holdWrites(trx)
  const session = await startSession(trx, auth, fields, 'created')
  await recordEvents(trx, auth, ['session.completed', 'session.flagged'], session)
  return session
}

/**
 * An edit through the API: the request is merged into the stored session, the merged state is
 * checked (`total_hours` follows from it), and the session is flagged `manual_api_edit`. An edit
 * that sets `check_out` on a session without one completes it.
 */
export async function updateSession(
  trx: Trx,
  auth: AuthContext,
  id: string,
  input: UpdateSessionBody,
): Promise<Session> {
  const operator =
    input.operator_id !== undefined || input.operator_ident !== undefined
      ? await resolveOperator(trx, auth, input)
      : undefined
  await lockSessionOperators(trx, auth, id, operator?.id)
  return updateResource(trx, auth, sessions, id, {
    changes: async (current) => {
      const device =
        input.device_id === undefined ? undefined : await resolveDevice(trx, auth, input.device_id)
      const checkOutAt =
        input.check_out === undefined ? undefined : instantOf(input.check_out.time, 'check_out.time')
      const stored = parseBreaks(current.breaks)
      refuseConflictingBreakMinutes(input, stored)
      const breaks = input.breaks === undefined ? stored : breaksFromInput(input.breaks, stored)
      const changes = changedFields(current, {
        operator_id: operator?.id,
        operator_ident: operator?.ident,
        device_code: device?.code,
        location_id: await locationFor(trx, auth, input),
        check_in_at:
          input.check_in === undefined ? undefined : instantOf(input.check_in.time, 'check_in.time'),
        check_out_at: checkOutAt,
        break_minutes: input.break_minutes,
        // A check-out set during a break that is going on ends the break at its time.
        ...(input.breaks !== undefined || stored.length > 0
          ? breakFields(checkOutAt === undefined ? breaks : endOpenBreak(breaks, checkOutAt))
          : {}),
        notes: input.notes,
        status: checkOutAt === undefined ? undefined : 'completed',
        is_flagged: 1,
        flag_reason: 'manual_api_edit',
        ...AWAITING_REVIEW,
      })
      const workDate = await workDateAfterEdit(trx, auth, current, changes)
      if (workDate !== current.work_date) changes.work_date = workDate
      if (Object.keys(changes).length > 0) {
        await assertWorkDatesOpen(trx, auth, current.work_date, changes.work_date ?? current.work_date)
      }
      return changes
    },
    check: async (updated) => {
      checkTimes(updated)
      await refuseOverlap(trx, auth, updated)
    },
    afterWrite: async ({ current, updated, before, after, previous }) => {
      await insertRevision(trx, auth, id, 'updated', before, after)
      await recordEvent(trx, auth, 'session.updated', after, { previousAttributes: previous })
      // A session gets its check-out by this edit (an open one, or one closed for an over-long
      // shift): only now is it complete with hours, so this is when `session.completed` is due.
      if (current.check_out_at === null && updated.check_out_at !== null) {
        await recordEvent(trx, auth, 'session.completed', after)
      }
      await recordEvent(trx, auth, 'session.flagged', after, { previousAttributes: previous })
    },
  })
}

/**
 * Locks the operator a session belongs to (and `target`, the one an edit moves it to) before the
 * session row, the order scans take them in. Which operator it is, only the session says, and a
 * concurrent edit may move it to another operator between the unlocked read and the lock: read
 * again under the lock, and lock that operator too until the session's operator is one held. It
 * cannot change after that: every move locks the session's operator first.
 */
async function lockSessionOperators(trx: Trx, auth: AuthContext, id: string, target: string | undefined) {
  const held = new Set<string>()
  const wanted = [target]
  for (;;) {
    const session = await sessions.find(trx, auth, id)
    if (!session) throw errors.notFound('session', id)
    if (held.has(session.operator_id)) return
    wanted.push(session.operator_id)
    const locked = await lockOperators(
      trx,
      auth,
      wanted.filter((operatorId) => operatorId !== undefined && !held.has(operatorId)),
    )
    for (const operator of locked) held.add(operator.id)
    // An operator row that no longer exists cannot be locked; the session is then read as it is.
    if (!locked.some((operator) => operator.id === session.operator_id)) return
  }
}

/** Soft delete: gone from the API, its revisions kept, `session.deleted` emitted. */
export async function deleteSession(trx: Trx, auth: AuthContext, id: string) {
  const current = await lockResource(trx, auth, sessions, id)
  await assertWorkDatesOpen(trx, auth, current.work_date, null)
  const now = clock.now()
  await updateSessionRow(trx, id, { deleted_at: now, updated_at: now })
  const session = toSession(current)
  await insertRevision(trx, auth, id, 'deleted', session, null)
  await recordEvent(trx, auth, 'session.deleted', session)
  return { object: 'session' as const, id, deleted: true as const }
}

/**
 * A check-in scan opens a session at the device's location: not flagged, no check-out yet, no review
 * needed. `workDate` is the one the scan's decision checked against closed periods (scanning.ts).
 */
export function checkIn(
  trx: Trx,
  auth: AuthContext,
  scan: { operator: OperatorRow; device: DeviceRow; at: number; workDate: string },
): Promise<Session> {
  const fields: NewSession = {
    operator_id: scan.operator.id,
    operator_ident: scan.operator.ident,
    device_code: scan.device.code,
    location_id: scan.device.location_id,
    check_in_at: scan.at,
    check_out_at: null,
    break_minutes: 0,
    breaks: '[]',
    notes: null,
    is_flagged: 0,
    flag_reason: null,
    source: 'scan',
    status: 'open',
    work_date: scan.workDate,
    ...NO_REVIEW_NEEDED,
  }
  return startSession(trx, auth, fields, 'checked_in')
}

/**
 * A check-out scan completes the open session at the scan's time: `session.completed`. A break going
 * on ends at the same time.
 */
export async function checkOut(trx: Trx, auth: AuthContext, open: SessionRow, at: number): Promise<Session> {
  const breaks = parseBreaks(open.breaks)
  const session = await changeSession(
    trx,
    auth,
    open,
    {
      check_out_at: at,
      status: 'completed',
      ...(breaks.length > 0 ? breakFields(endOpenBreak(breaks, at)) : {}),
    },
    'checked_out',
  )
  await recordEvent(trx, auth, 'session.completed', session)
  return session
}

/**
 * A break scan's change to the open session (`breaks`, as the scan's decision gave them): written with its
 * revision (`break_started` / `break_ended`), and `session.updated` with `previous_attributes`. The
 * session stays as it was otherwise: a scan is not an edit, so nothing is re-flagged.
 */
export async function recordBreakScan(
  trx: Trx,
  auth: AuthContext,
  open: SessionRow,
  breaks: StoredBreak[],
  action: 'break_started' | 'break_ended',
): Promise<Session> {
  const session = await changeSession(trx, auth, open, breakFields(breaks), action)
  await recordEvent(trx, auth, 'session.updated', session, {
    previousAttributes: previousAttributes(toSession(open), session),
  })
  return session
}

/**
 * A session left open for more than 16 hours: nobody knows when the operator really left, so it is
 * closed without a check-out time (total_hours stays null) and flagged `max_shift_exceeded` for a
 * manager to complete.
 */
export async function closeOverlongShift(trx: Trx, auth: AuthContext, open: SessionRow): Promise<Session> {
  const session = await changeSession(
    trx,
    auth,
    open,
    { status: 'completed', is_flagged: 1, flag_reason: 'max_shift_exceeded', ...AWAITING_REVIEW },
    'closed',
  )
  await recordEvent(trx, auth, 'session.flagged', session, {
    previousAttributes: { status: 'open', is_flagged: false, flag_reason: null },
  })
  return session
}

// ---------------------------------------------------------------------------------------------
// Work dates, review and closed pay periods (docs/review-and-timesheets.md). Each rule is one step
// here, which the transitions above call.
// ---------------------------------------------------------------------------------------------

type ReviewFields = Pick<SessionRow, 'review_status' | 'reviewed_at' | 'reviewed_by' | 'review_note'>

/**
 * A session written through the API (create or edit) or closed by the service with a flag: it
 * awaits a manager's review, whatever review it had before (an edit re-flags it, as the spec says).
 */
const AWAITING_REVIEW: ReviewFields = {
  review_status: 'pending',
  reviewed_at: null,
  reviewed_by: null,
  review_note: null,
}

/** A session a scan opened without a flag: nothing to review. */
const NO_REVIEW_NEEDED: ReviewFields = {
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
async function workDateOf(
  db: Executor,
  auth: AuthContext,
  checkInAt: number,
  locationId: string | null,
): Promise<string> {
  return calendarDate(checkInAt, await timeZoneAt(db, auth, locationId))
}

/**
 * The work date after an edit: recomputed when the check-in or the location changes, kept
 * otherwise (a later change of the location's zone moves nothing).
 */
async function workDateAfterEdit(
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
 * period. Run in the writing transaction before the write: it takes the pay-period lock (shared),
 * so a period cannot close between this check and the commit.
 */
async function assertWorkDatesOpen(
  trx: Trx,
  auth: AuthContext,
  before: string | null | undefined,
  after: string | null | undefined,
): Promise<void> {
  await assertPeriodOpen(trx, auth, [before, after])
}

/**
 * Whether `operatorId`'s work is the principal's own (decisions.md, "Nobody approves their own
 * work"): a signed-in person whose membership in this account is that operator. A key is no one's.
 */
function isOwnWork(auth: AuthContext, operatorId: string | null): boolean {
  return auth.operatorId !== undefined && auth.operatorId !== null && auth.operatorId === operatorId
}

/**
 * Approves or rejects a completed session (409 `session_open` while open; `period_closed` in a
 * closed period; `check_out_missing` to approve one without a check-out; a rejection needs a
 * note; 403 `self_approval` for the person whose own session it is). A reviewed session may be
 * reviewed again (a rejection overturned). `is_flagged` and `flag_reason` stay: they say how the
 * session came to be. Writes a revision (`approved` / `rejected`) and emits `session.updated` with
 * `previous_attributes`.
 */
export async function reviewSession(
  trx: Trx,
  auth: AuthContext,
  id: string,
  decision: Extract<ReviewStatus, 'approved' | 'rejected'>,
  note: string | null | undefined,
): Promise<Session> {
  if (decision === 'rejected' && (note === undefined || note === null || note.trim() === '')) {
    throw errors.missingParam('note', 'A rejection needs a note: say why the session does not count.')
  }
  // Approving a rejected session puts it back in the operator's record, where it must not overlap
  // what was recorded meanwhile: the operator is locked first, as every session write does.
  if (decision === 'approved') await lockSessionOperators(trx, auth, id, undefined)
  return updateResource(trx, auth, sessions, id, {
    changes: async (current) => {
      // Nobody approves their own work: a person whose membership is this session's operator.
      if (isOwnWork(auth, current.operator_id)) throw errors.selfApproval()
      if (current.status === 'open') throw errors.sessionOpen(id)
      await assertWorkDatesOpen(trx, auth, current.work_date, current.work_date)
      // Closed for an over-long shift: approving would pay a session nobody knows the end of. A
      // PATCH sets the check-out (and re-flags it); rejecting it needs no check-out.
      if (decision === 'approved' && current.check_out_at === null) throw errors.checkOutMissing(id)
      if (decision === 'approved' && current.review_status === 'rejected')
        await refuseOverlap(trx, auth, current)
      return {
        review_status: decision,
        reviewed_at: clock.now(),
        reviewed_by: auth.principalId,
        review_note: note ?? null,
      }
    },
    event: 'session.updated',
    afterWrite: async ({ before, after }) => {
      await insertRevision(trx, auth, id, decision, before, after)
    },
  })
}

/**
 * The sweep's closure of a forgotten check-out: the operator's open session, if it was checked in
 * before `before`, closed as an over-long shift. Taken under the operator's lock and read again
 * under it, so when several workers (or a scan) reach the same session, one closes it and the others
 * find it closed: `session.flagged` is emitted once. Undefined when there was nothing to close.
 */
export async function closeForgottenCheckOut(
  trx: Trx,
  auth: AuthContext,
  operatorId: string,
  before: number,
): Promise<Session | undefined> {
  await lockOperators(trx, auth, [operatorId])
  const open = await findOpenSession(trx, auth, operatorId)
  if (!open || open.check_in_at >= before) return undefined
  return closeOverlongShift(trx, auth, open)
}
