import type { AuthContext } from '../../core/identity.js'
import { ownedBy } from '../../db/scope.js'
import type { Db, Executor, Trx } from '../../db/types.js'
import { newId } from '../../lib/ids.js'
import { parseInstant } from '../../lib/time.js'
import { type DeviceRow, resolveDevice } from '../devices/service.js'
import { recordEvent } from '../events/outbox.js'
import { type OperatorRow, resolveOperator } from '../operators/service.js'
import {
  breakScanOf,
  checkIn,
  checkInWorkDate,
  checkOut,
  checkOutFollowsBreaks,
  inClosedPeriod,
  isOutOfOrder,
  openSessionAt,
  recordBreakScan,
  scanInstant,
} from '../sessions/lifecycle.js'
import type { SessionRow, StoredBreak } from '../sessions/service.js'
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

type Direction = NonNullable<CreateScanBody['direction']>

type Outcome =
  | { result: 'checked_in'; sessionId: string }
  | { result: 'checked_out'; open: SessionRow }
  | { result: 'break_started' | 'break_ended'; open: SessionRow; breaks: StoredBreak[] }
  | { result: 'flagged'; reason: ScanFlagReason; sessionId?: string }

/**
 * A scan at a device: `auto` checks the operator out when it has an open session and in otherwise;
 * `in` and `out` force the direction; `break_start` and `break_end` start and end a break of the
 * open session (never chosen by `auto`). Flagged scans change no session. Scans of one operator are
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
    session_id: 'open' in outcome ? outcome.open.id : (outcome.sessionId ?? null),
    created_at: Date.now(),
  }
  await insertScan(trx, row)
  const scan = toScan(row)
  await recordEvent(trx, auth, `scan.${outcome.result}`, scan)
  // Changed after the scan is recorded, so a receiver reads `scan.checked_out` (or the break's
  // scan event), then the `session.completed` (`session.updated`) it caused.
  if (outcome.result === 'checked_out') await checkOut(trx, auth, outcome.open, at)
  if (outcome.result === 'break_started' || outcome.result === 'break_ended') {
    await recordBreakScan(trx, auth, outcome.open, outcome.breaks, outcome.result)
  }
  return scan
}

async function decide(
  trx: Trx,
  auth: AuthContext,
  scan: { operator: OperatorRow; device: DeviceRow; at: number; direction: Direction },
): Promise<Outcome> {
  const { operator, at, direction } = scan
  if (operator.is_active !== 1) return { result: 'flagged', reason: 'inactive_operator' }
  if (await findAcceptedScanNear(trx, auth, operator.id, at, DUPLICATE_WINDOW_MS)) {
    return { result: 'flagged', reason: 'duplicate_scan' }
  }
  const { open, closed } = await openSessionAt(trx, auth, operator.id, at)
  // Only `auto` and `in` check in after the closure: any other scan reports the closure it caused.
  if (closed && direction !== 'auto' && direction !== 'in') {
    return { result: 'flagged', reason: 'max_shift_exceeded', sessionId: closed.id }
  }
  // A late scan from before the session now open belongs to a past the record has moved on from.
  if (open && at < open.check_in_at) return { result: 'flagged', reason: 'out_of_order' }
  if (direction === 'break_start' || direction === 'break_end') {
    return decideBreak(trx, auth, operator, open, direction, at)
  }
  if (open && direction !== 'in') {
    if (at === open.check_in_at) return { result: 'flagged', reason: 'invalid_time_range' }
    // A check-out before a break the session already recorded comes late, as one before its check-in.
    if (!checkOutFollowsBreaks(open, at)) return { result: 'flagged', reason: 'out_of_order' }
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

/**
 * A break scan: it changes the operator's open session (none: `no_open_session`, or `out_of_order`
 * for a late scan inside a completed session, as a check-out's), by the session's break rules
 * (`breakScanOf`), unless that session's work date is in a closed pay period.
 */
async function decideBreak(
  trx: Trx,
  auth: AuthContext,
  operator: OperatorRow,
  open: SessionRow | undefined,
  direction: 'break_start' | 'break_end',
  at: number,
): Promise<Outcome> {
  if (!open) {
    const late = await isOutOfOrder(trx, auth, operator.id, at, false)
    return { result: 'flagged', reason: late ? 'out_of_order' : 'no_open_session' }
  }
  const change = breakScanOf(open, direction, at)
  if ('reason' in change) return { result: 'flagged', reason: change.reason }
  if (await inClosedPeriod(trx, auth, open.work_date)) return { result: 'flagged', reason: 'period_closed' }
  return {
    result: direction === 'break_start' ? 'break_started' : 'break_ended',
    open,
    breaks: change.breaks,
  }
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
