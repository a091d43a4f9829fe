import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { ownedBy } from '../../db/scope.js'
import { savepoint } from '../../db/transaction-connection.js'
import type { Executor, Trx } from '../../db/types.js'
import { newId } from '../../lib/ids.js'
import { parseInstant, toIso } from '../../lib/time.js'
import { type DeviceRow, decryptPin, resolveScanDevice } from '../devices/service.js'
import { recordEvent } from '../events/outbox.js'
import { checkOperatorPin, type OperatorRow, resolveOperator } from '../operators/service.js'
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
  findScanByClientId,
  insertScan,
  listScanRows,
  type ScanRow,
  toScan,
} from './repository.js'
import type { CreateScanBatchBody, CreateScanBody, Scan, ScanFlagReason } from './schemas.js'

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
export async function recordScan(
  trx: Trx,
  auth: AuthContext,
  input: CreateScanBody,
  clockSkewMs: number | null = null,
): Promise<Scan> {
  const at = scanInstant(input.time)
  const device = await resolveScanDevice(trx, auth, input.device_id)
  // Read under the operator's lock (see lockOperators in sessions/lifecycle.ts): a concurrent PATCH
  // that deactivates the operator commits before this read or waits until this scan commits. The
  // same lock makes a replay of a `client_scan_id` wait for the first one to commit, then find it.
  const operator = await resolveOperator(trx, auth, input, { lock: true })
  if (input.client_scan_id !== undefined) {
    const first = await findScanByClientId(trx, auth, device.code, input.client_scan_id)
    if (first) return toScan(first)
  }
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
    client_scan_id: input.client_scan_id ?? null,
    clock_skew_ms: clockSkewMs,
    operator_name: operator.name,
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

/**
 * What a scan must pass before its transaction (`before` of `POST /v1/scans`): at a device that
 * requires PINs, the operator's PIN, sent as `pin` or, captured offline, as `pin_ciphertext`. Outside
 * the transaction because a wrong PIN is counted although the scan is refused, and the hash is slow.
 * A replay of a recorded `client_scan_id` needs no PIN: it answers the scan recorded then.
 */
export async function checkScanPin(db: Executor, auth: AuthContext, input: CreateScanBody): Promise<void> {
  await checkPinAt(db, auth, await resolveScanDevice(db, auth, input.device_id), input)
}

async function checkPinAt(db: Executor, auth: AuthContext, device: DeviceRow, input: CreateScanBody) {
  if (device.require_pin !== 1) return
  if (input.client_scan_id !== undefined) {
    if (await findScanByClientId(db, auth, device.code, input.client_scan_id)) return
  }
  let pin = input.pin
  if (pin === undefined) {
    if (input.pin_ciphertext === undefined) {
      throw errors.missingParam(
        'pin',
        "This device requires the operator's PIN: send pin (or pin_ciphertext).",
      )
    }
    pin = await decryptPin(db, auth, input.pin_ciphertext)
    if (pin === undefined) throw errors.invalidPin('pin_ciphertext')
  }
  const operator = await resolveOperator(db, auth, input)
  await checkOperatorPin(db, operator, pin, input.pin === undefined ? 'pin_ciphertext' : 'pin')
}

/** How far a batch's `sent_at` may be from the service's clock before its times are corrected. */
export const MAX_CLOCK_SKEW_MS = 2 * 60 * 1000

/** One scan of a batch: the scan it recorded, or what refused it (an `ApiError`, or a failure). */
export type BatchOutcome = { scan: Scan } | { error: unknown }

/** A batch checked before its transaction: the scans to apply, in order, and those refused already. */
export interface CheckedBatch {
  /** In application order: `time` order, ties in the order given. */
  apply: Array<{ scan: CreateScanBody; index: number }>
  refused: Map<number, unknown>
  clockSkewMs: number | null
  size: number
}

/**
 * A batch's checks before its transaction: the device clock's correction (`sent_at` more than
 * 2 minutes off: every given `time` moves by the difference), then each scan's PIN, in the order the
 * scans will apply, so the per-operator count of wrong PINs runs as the day did.
 */
export async function checkScanBatch(
  db: Executor,
  auth: AuthContext,
  body: CreateScanBatchBody,
): Promise<CheckedBatch> {
  const now = Date.now()
  let clockSkewMs: number | null = null
  if (body.sent_at !== undefined) {
    const sentAt = parseInstant(body.sent_at)
    if (sentAt === undefined) throw errors.invalidTimestamp('sent_at')
    if (Math.abs(now - sentAt) > MAX_CLOCK_SKEW_MS) clockSkewMs = now - sentAt
  }
  const order = body.scans.map((given, index) => {
    // A scan without a time happens now; an unreadable time sorts first and is refused when applied.
    const parsed = given.time === undefined ? now : (parseInstant(given.time) ?? Number.NEGATIVE_INFINITY)
    const moved = clockSkewMs !== null && given.time !== undefined && Number.isFinite(parsed)
    const scan = moved ? { ...given, time: toIso(parsed + (clockSkewMs ?? 0)) } : given
    return { scan, index, at: moved ? parsed + (clockSkewMs ?? 0) : parsed }
  })
  order.sort((a, b) => a.at - b.at || a.index - b.index)
  const refused = new Map<number, unknown>()
  const devices = new Map<string, DeviceRow>()
  const apply: CheckedBatch['apply'] = []
  for (const { scan, index } of order) {
    try {
      let device = devices.get(scan.device_id)
      if (!device) {
        device = await resolveScanDevice(db, auth, scan.device_id)
        devices.set(scan.device_id, device)
      }
      await checkPinAt(db, auth, device, scan)
      apply.push({ scan, index })
    } catch (error) {
      refused.set(index, error)
    }
  }
  return { apply, refused, clockSkewMs, size: body.scans.length }
}

/**
 * Scans a device synced at once (it was offline), checked by `checkScanBatch`: applied in `time`
 * order, so an offline day replays as it happened, in one transaction with a savepoint each, so
 * one refused scan never stops the others while 500 scans cost one commit, not 500. Each is
 * applied exactly as `POST /v1/scans` applies it (its operator locked until the batch commits).
 * Answers in input order.
 */
export async function recordScanBatch(
  trx: Trx,
  auth: AuthContext,
  batch: CheckedBatch,
): Promise<BatchOutcome[]> {
  const outcomes: BatchOutcome[] = new Array(batch.size)
  for (const [index, error] of batch.refused) outcomes[index] = { error }
  for (const { scan, index } of batch.apply) {
    const before = await savepoint(trx, 'batch_scan')
    try {
      outcomes[index] = {
        scan: await recordScan(trx, auth, scan, scan.time === undefined ? null : batch.clockSkewMs),
      }
    } catch (error) {
      await before.rollback()
      outcomes[index] = { error }
    }
    await before.release()
  }
  return outcomes
}

export function retrieveScan(db: Executor, auth: AuthContext, id: string): Promise<Scan> {
  return retrieveResource(db, auth, { name: 'scan', find: findScan, toApi: toScan }, id)
}

export const listScans = listService(listScanRows, toScan)
