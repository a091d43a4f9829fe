import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { instantOf } from '../../core/instants.js'
import type { Trx } from '../../db/connection.js'
import { isUniqueViolation, supportsRowLocks } from '../../db/connection.js'
import { ownedBy } from '../../db/scope.js'
import { newId } from '../../lib/ids.js'
import type { DeviceRow } from '../devices/repository.js'
import { resolveDevice } from '../devices/service.js'
import { recordEvent } from '../events/outbox.js'
import type { OperatorRow } from '../operators/repository.js'
import { resolveOperator } from '../operators/resolve.js'
import {
  findOpenSession,
  insertRevision,
  insertSession,
  type SessionRow,
  toSession,
  updateSessionRow,
} from '../sessions/repository.js'
import { AWAITING_REVIEW, NO_REVIEW_NEEDED, scanMayWrite, workDateOf } from '../sessions/review.js'
import { findAcceptedScanNear, insertScan, type ScanRow, toScan } from './repository.js'
import type { CreateScanBody, Scan, ScanFlagReason } from './schemas.js'

/** A repeat scan of the same operator within this window changes nothing. */
export const DUPLICATE_WINDOW_MS = 60_000
/** An open session older than this is closed as flagged when the operator's next scan arrives. */
export const MAX_SHIFT_MS = 16 * 60 * 60 * 1000

type Outcome =
  | { result: 'checked_in'; session: SessionRow }
  | { result: 'checked_out'; session: SessionRow }
  | { result: 'flagged'; reason: ScanFlagReason; session?: SessionRow }

/**
 * A scan at a device: `auto` checks the operator out when it has an open session and in otherwise;
 * `in` and `out` force the direction. Flagged scans change no session. Scans of one operator are
 * serialised by a lock on the operator row (PostgreSQL) or the write lock (SQLite), and the partial
 * unique index on open sessions makes a second open session impossible even so.
 */
export async function recordScan(trx: Trx, auth: AuthContext, input: CreateScanBody): Promise<Scan> {
  const device = await resolveDevice(trx, auth, input.device_id)
  const resolved = await resolveOperator(trx, auth, input)
  const operator = await lockOperator(trx, auth, resolved)
  const at = input.time === undefined ? Date.now() : instantOf(input.time, 'time')
  const direction = input.direction ?? 'auto'

  const outcome = await decide(trx, auth, { operator, device, at, direction })
  const now = Date.now()
  const row: ScanRow = {
    id: newId('scn'),
    ...ownedBy(auth),
    device_code: device.code,
    operator_id: operator.id,
    operator_ident: operator.ident,
    scanned_at: at,
    direction,
    result: outcome.result,
    flag_reason: outcome.result === 'flagged' ? outcome.reason : null,
    session_id: outcome.session?.id ?? null,
    created_at: now,
  }
  await insertScan(trx, row)
  const scan = toScan(row)
  await recordEvent(trx, auth, `scan.${outcome.result}`, scan)
  if (outcome.result === 'checked_out')
    await recordEvent(trx, auth, 'session.completed', toSession(outcome.session))
  return scan
}

async function decide(
  trx: Trx,
  auth: AuthContext,
  scan: { operator: OperatorRow; device: DeviceRow; at: number; direction: 'auto' | 'in' | 'out' },
): Promise<Outcome> {
  const { operator, at, direction } = scan
  if (operator.is_active !== 1) return { result: 'flagged', reason: 'inactive_operator' }
  if (await findAcceptedScanNear(trx, auth, operator.id, at, DUPLICATE_WINDOW_MS)) {
    return { result: 'flagged', reason: 'duplicate_scan' }
  }
  let open = await findOpenSession(trx, auth, operator.id)
  if (open && at - open.check_in_at > MAX_SHIFT_MS) {
    const closed = await closeOverlongSession(trx, auth, open)
    // An `out` cannot check in after the closure: the scan reports the closure it caused.
    if (direction === 'out') return { result: 'flagged', reason: 'max_shift_exceeded', session: closed }
    open = undefined
  }
  if (open && direction !== 'in') {
    if (at <= open.check_in_at) return { result: 'flagged', reason: 'invalid_time_range' }
    if (!(await scanMayWrite(trx, auth, open.work_date)))
      return { result: 'flagged', reason: 'period_closed' }
    return { result: 'checked_out', session: await checkOut(trx, auth, open, at) }
  }
  if (open) return { result: 'flagged', reason: 'already_checked_in' }
  if (direction === 'out') return { result: 'flagged', reason: 'no_open_session' }
  const workDate = await workDateOf(trx, auth, at, scan.device.location_id)
  if (!(await scanMayWrite(trx, auth, workDate))) return { result: 'flagged', reason: 'period_closed' }
  return { result: 'checked_in', session: await checkIn(trx, auth, scan, workDate) }
}

async function checkIn(
  trx: Trx,
  auth: AuthContext,
  scan: { operator: OperatorRow; device: DeviceRow; at: number },
  workDate: string,
): Promise<SessionRow> {
  const now = Date.now()
  const row: SessionRow = {
    id: newId('ses'),
    ...ownedBy(auth),
    operator_id: scan.operator.id,
    operator_ident: scan.operator.ident,
    device_code: scan.device.code,
    location_id: scan.device.location_id,
    check_in_at: scan.at,
    check_out_at: null,
    break_minutes: 0,
    notes: null,
    is_flagged: 0,
    flag_reason: null,
    source: 'scan',
    status: 'open',
    deleted_at: null,
    created_at: now,
    updated_at: now,
    work_date: workDate,
    ...NO_REVIEW_NEEDED,
  }
  try {
    await insertSession(trx, row)
  } catch (error) {
    // Only reachable when two processes race past the operator lock (SQLite files shared by
    // processes); the index refuses the second open session and the client may retry the scan.
    if (isUniqueViolation(error)) throw errors.openSessionExists(scan.operator.ident)
    throw error
  }
  await insertRevision(trx, auth, row.id, 'checked_in', null, toSession(row))
  return row
}

async function checkOut(trx: Trx, auth: AuthContext, open: SessionRow, at: number): Promise<SessionRow> {
  const changes = { check_out_at: at, status: 'completed' as const, updated_at: Date.now() }
  const completed: SessionRow = { ...open, ...changes }
  await updateSessionRow(trx, open.id, changes)
  await insertRevision(trx, auth, open.id, 'checked_out', toSession(open), toSession(completed))
  return completed
}

/**
 * A session left open for more than 16 hours: nobody knows when the operator really left, so it is
 * closed without a check-out time (total_hours stays null) and flagged `max_shift_exceeded` for a
 * manager to complete.
 */
async function closeOverlongSession(trx: Trx, auth: AuthContext, open: SessionRow): Promise<SessionRow> {
  const changes = {
    status: 'completed' as const,
    is_flagged: 1 as const,
    flag_reason: 'max_shift_exceeded',
    ...AWAITING_REVIEW,
    updated_at: Date.now(),
  }
  const closed: SessionRow = { ...open, ...changes }
  await updateSessionRow(trx, open.id, changes)
  const session = toSession(closed)
  await insertRevision(trx, auth, open.id, 'closed', toSession(open), session)
  await recordEvent(trx, auth, 'session.flagged', session, {
    status: 'open',
    is_flagged: false,
    flag_reason: null,
  })
  return closed
}

/** Serialises scans of one operator across processes; re-reads the row under the lock. */
async function lockOperator(trx: Trx, auth: AuthContext, operator: OperatorRow): Promise<OperatorRow> {
  if (!supportsRowLocks(trx)) return operator
  return trx
    .selectFrom('operators')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
    .where('id', '=', operator.id)
    .forUpdate()
    .executeTakeFirstOrThrow()
}
