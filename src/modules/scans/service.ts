import type { AuthContext } from '../../core/identity.js'
import { ownedBy } from '../../db/scope.js'
import type { Db, Executor, Trx } from '../../db/types.js'
import { newId } from '../../lib/ids.js'
import { parseInstant } from '../../lib/time.js'
import { type DeviceRow, resolveDevice } from '../devices/service.js'
import { recordEvent } from '../events/outbox.js'
import { type OperatorRow, resolveOperator } from '../operators/service.js'
import {
  checkIn,
  checkInWorkDate,
  checkOut,
  inClosedPeriod,
  isOutOfOrder,
  openSessionAt,
  scanInstant,
} from '../sessions/lifecycle.js'
import type { SessionRow } from '../sessions/service.js'
import { listService, retrieveResource } from '../shared/resources.js'
import {
  findAcceptedScanNear,
  findScan,
  insertScan,
  listScanRows,
  type ScanRow,
  toScan,
} from './repository.js'
import type { CreateScanBody, Scan, ScanFlagReason } from './schemas.js'

/** A repeat scan of the same operator within this window changes nothing. */
export const DUPLICATE_WINDOW_MS = 60_000

type Outcome =
  | { result: 'checked_in'; sessionId: string }
  | { result: 'checked_out'; open: SessionRow }
  | { result: 'flagged'; reason: ScanFlagReason; sessionId?: string }

/**
 * A scan at a device: `auto` checks the operator out when it has an open session and in otherwise;
 * `in` and `out` force the direction. Flagged scans change no session. Scans of one operator are
 * serialised by the sessions' per-operator lock, and the partial unique index on open sessions
 * makes a second open session impossible even so.
 */
export async function recordScan(trx: Trx, auth: AuthContext, input: CreateScanBody): Promise<Scan> {
  const at = scanInstant(input.time)
  const device = await resolveDevice(trx, auth, input.device_id)
  // Read under the operator's lock (see lockOperators in sessions/lifecycle.ts): a concurrent PATCH
  // that deactivates the operator commits before this read or waits until this scan commits.
  const operator = await resolveOperator(trx, auth, input, { lock: true })
  const direction = input.direction ?? 'auto'

  const outcome = await decide(trx, auth, { operator, device, at, direction })
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
    session_id: outcome.result === 'checked_out' ? outcome.open.id : (outcome.sessionId ?? null),
    created_at: Date.now(),
  }
  await insertScan(trx, row)
  const scan = toScan(row)
  await recordEvent(trx, auth, `scan.${outcome.result}`, scan)
  // Completed after the scan is recorded, so a receiver reads `scan.checked_out`, then the
  // `session.completed` it caused.
  if (outcome.result === 'checked_out') await checkOut(trx, auth, outcome.open, at)
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
  const { open, closed } = await openSessionAt(trx, auth, operator.id, at)
  // An `out` cannot check in after the closure: the scan reports the closure it caused.
  if (closed && direction === 'out') {
    return { result: 'flagged', reason: 'max_shift_exceeded', sessionId: closed.id }
  }
  // A late scan from before the session now open belongs to a past the record has moved on from.
  if (open && at < open.check_in_at) return { result: 'flagged', reason: 'out_of_order' }
  if (open && direction !== 'in') {
    if (at === open.check_in_at) return { result: 'flagged', reason: 'invalid_time_range' }
    // Completing a session of a closed pay period would change payroll's closed month.
    if (await inClosedPeriod(trx, auth, open.work_date)) return { result: 'flagged', reason: 'period_closed' }
    return { result: 'checked_out', open }
  }
  if (open) return { result: 'flagged', reason: 'already_checked_in' }
  if (await isOutOfOrder(trx, auth, operator.id, at, direction !== 'out')) {
    return { result: 'flagged', reason: 'out_of_order' }
  }
  if (direction === 'out') return { result: 'flagged', reason: 'no_open_session' }
  const workDate = await checkInWorkDate(trx, auth, scan.device, at)
  if (await inClosedPeriod(trx, auth, workDate)) return { result: 'flagged', reason: 'period_closed' }
  return { result: 'checked_in', sessionId: (await checkIn(trx, auth, { ...scan, workDate })).id }
}

/** One scan of a batch: the scan it recorded, or what refused it (an `ApiError`, or a failure). */
export type BatchOutcome = { scan: Scan } | { error: unknown }

/**
 * Scans a device synced at once (it was offline): applied in `time` order, ties in the order given,
 * so an offline day replays as it happened; each in a transaction of its own, exactly as
 * `POST /v1/scans` applies it, so one refused scan never stops the others. Answers in input order.
 */
export async function recordScanBatch(
  db: Db,
  auth: AuthContext,
  scans: CreateScanBody[],
): Promise<BatchOutcome[]> {
  const now = Date.now()
  // A scan without a time happens now; an unreadable time sorts first and is refused when applied.
  const timeOf = (scan: CreateScanBody) =>
    scan.time === undefined ? now : (parseInstant(scan.time) ?? Number.NEGATIVE_INFINITY)
  const order = scans.map((scan, index) => ({ scan, index, at: timeOf(scan) }))
  order.sort((a, b) => a.at - b.at || a.index - b.index)
  const outcomes: BatchOutcome[] = new Array(scans.length)
  for (const { scan, index } of order) {
    try {
      outcomes[index] = { scan: await db.transaction().execute((trx) => recordScan(trx, auth, scan)) }
    } catch (error) {
      outcomes[index] = { error }
    }
  }
  return outcomes
}

export function retrieveScan(db: Executor, auth: AuthContext, id: string): Promise<Scan> {
  return retrieveResource(db, auth, { name: 'scan', find: findScan, toApi: toScan }, id)
}

export const listScans = listService(listScanRows, toScan)
