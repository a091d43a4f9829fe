import { ApiError, errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { ownedBy } from '../../db/scope.js'
import { savepoint } from '../../db/transaction-connection.js'
import type { Executor, Trx } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { calendarDate } from '../../lib/dates.js'
import { newId } from '../../lib/ids.js'
import { parseInstant, toIso } from '../../lib/time.js'
import { type DeviceRow, decryptPin, resolveScanDevice } from '../devices/service.js'
import { recordEvent } from '../events/outbox.js'
import { timeZoneAt } from '../locations/service.js'
import { checkOperatorPin, type OperatorRow, refusePinLocked, resolveOperator } from '../operators/service.js'
import { closedPeriodHolding } from '../pay-periods/service.js'
import {
  breakScanOf,
  checkIn,
  checkInWorkDate,
  checkOut,
  checkOutFollowsBreaks,
  inClosedPeriod,
  isOutOfOrder,
  MAX_API_SESSION_MS,
  MAX_SHIFT_MS,
  openSessionAt,
  recordBreakScan,
  scanInstant,
} from '../sessions/lifecycle.js'
import type { SessionRow, StoredBreak } from '../sessions/service.js'
import { listService, retrieveResource } from '../shared/resources.js'
import {
  findAcceptedScanNear,
  findAcceptedScanTimes,
  findScan,
  findScanByClientId,
  findScansByClientIds,
  insertScan,
  insertScans,
  latestSessionEnds,
  listScanRows,
  lockOpenSessionsOf,
  lockOperatorsNamed,
  type ScanRow,
  type ScanWindow,
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
 * What a scan reads, and the row it writes, besides its session's steps (sessions/lifecycle.ts).
 * A scan alone asks the database each time (`readEachTime`); the items of a batch ask what the
 * batch read for all of them at once (`readForBatch`), which asks the database only where that read
 * does not answer. Either answers exactly as the database would at that point of the transaction.
 */
interface ScanReads {
  device(code: string): Promise<DeviceRow>
  /** The operator the scan names, locked until the transaction ends (see lockOperators). */
  operator(input: CreateScanBody): Promise<OperatorRow>
  /** The scan the device recorded with this `client_scan_id`, if any. */
  recorded(deviceCode: string, clientScanId: string): Promise<ScanRow | undefined>
  /** Whether the operator has an accepted scan within `DUPLICATE_WINDOW_MS` of `at`. */
  acceptedScanNear(operatorId: string, at: number): Promise<boolean>
  openSessionAt(operatorId: string, at: number): ReturnType<typeof openSessionAt>
  /** isOutOfOrder: asked right after `openSessionAt` found no open session. */
  outOfOrder(operatorId: string, at: number, checksIn: boolean): Promise<boolean>
  /** The work date a check-in at `at` on `device` gives its session (checkInWorkDate). */
  workDate(device: DeviceRow, at: number): Promise<string>
  inClosedPeriod(workDate: string): Promise<boolean>
  insert(row: ScanRow): Promise<void>
}

function readEachTime(trx: Trx, auth: AuthContext): ScanReads {
  return {
    device: (code) => resolveScanDevice(trx, auth, code),
    operator: (input) => resolveOperator(trx, auth, input, { lock: true }),
    recorded: (deviceCode, clientScanId) => findScanByClientId(trx, auth, deviceCode, clientScanId),
    acceptedScanNear: async (operatorId, at) =>
      (await findAcceptedScanNear(trx, auth, operatorId, at, DUPLICATE_WINDOW_MS)) !== undefined,
    openSessionAt: (operatorId, at) => openSessionAt(trx, auth, operatorId, at),
    outOfOrder: (operatorId, at, checksIn) => isOutOfOrder(trx, auth, operatorId, at, checksIn),
    workDate: (device, at) => checkInWorkDate(trx, auth, device, at),
    inClosedPeriod: (workDate) => inClosedPeriod(trx, auth, workDate),
    insert: (row) => insertScan(trx, row),
  }
}

/** A scan whose references are resolved: nothing written yet. `replay`: its `client_scan_id` was recorded. */
interface PreparedScan {
  input: CreateScanBody
  at: number
  device: DeviceRow
  operator: OperatorRow
  replay: ScanRow | undefined
}

/**
 * A scan at a device: `auto` checks the operator out when it has an open session and in otherwise;
 * `in` and `out` force the direction; `break_start` and `break_end` start and end a break of the
 * open session (never chosen by `auto`). Flagged scans change no session. Scans of one operator are
 * serialised by the sessions' per-operator lock, and the partial unique index on open sessions
 * makes a second open session impossible even so.
 */
export async function recordScan(trx: Trx, auth: AuthContext, input: CreateScanBody): Promise<Scan> {
  const reads = readEachTime(trx, auth)
  return applyScan(trx, auth, await prepareScan(reads, input), null, reads)
}

/**
 * A scan's time and references, checked and resolved: what refuses a scan before it writes
 * anything (only `ApiError`s, after reads that cannot fail otherwise).
 */
async function prepareScan(reads: ScanReads, input: CreateScanBody): Promise<PreparedScan> {
  const at = scanInstant(input.time)
  const device = await reads.device(input.device_id)
  // Read under the operator's lock (see lockOperators in sessions/lifecycle.ts): a concurrent PATCH
  // that deactivates the operator commits before this read or waits until this scan commits. The
  // same lock makes a replay of a `client_scan_id` wait for the first one to commit, then find it.
  const operator = await reads.operator(input)
  const replay =
    input.client_scan_id === undefined ? undefined : await reads.recorded(device.code, input.client_scan_id)
  // A replay answers the scan recorded before the lock; anything new waits out the lock.
  if (replay === undefined) refusePinLocked(operator)
  return { input, at, device, operator, replay }
}

/** Applies a prepared scan: its outcome, its row and event, and its session's change. */
async function applyScan(
  trx: Trx,
  auth: AuthContext,
  prepared: PreparedScan,
  clockSkewMs: number | null,
  reads: ScanReads,
): Promise<Scan> {
  if (prepared.replay) return toScan(prepared.replay)
  const { input, at, device, operator } = prepared
  const direction = input.direction ?? 'auto'

  const outcome = await decide(trx, auth, { operator, device, at, direction }, reads)
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
    created_at: clock.now(),
    client_scan_id: input.client_scan_id ?? null,
    clock_skew_ms: clockSkewMs,
    operator_name: operator.name,
  }
  await reads.insert(row)
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
  reads: ScanReads,
): Promise<Outcome> {
  const { operator, at, direction } = scan
  if (operator.is_active !== 1) return { result: 'flagged', reason: 'inactive_operator' }
  if (await reads.acceptedScanNear(operator.id, at)) {
    return { result: 'flagged', reason: 'duplicate_scan' }
  }
  const { open, closed } = await reads.openSessionAt(operator.id, at)
  // Only `auto` and `in` check in after the closure: any other scan reports the closure it caused.
  if (closed && direction !== 'auto' && direction !== 'in') {
    return { result: 'flagged', reason: 'max_shift_exceeded', sessionId: closed.id }
  }
  // A late scan from before the session now open belongs to a past the record has moved on from.
  if (open && at < open.check_in_at) return { result: 'flagged', reason: 'out_of_order' }
  if (direction === 'break_start' || direction === 'break_end') {
    return decideBreak(operator, open, direction, at, reads)
  }
  if (open && direction !== 'in') {
    if (at === open.check_in_at) return { result: 'flagged', reason: 'invalid_time_range' }
    // A check-out before a break the session already recorded comes late, as one before its check-in.
    if (!checkOutFollowsBreaks(open, at)) return { result: 'flagged', reason: 'out_of_order' }
    // Completing a session of a closed pay period would change payroll's closed month.
    if (await reads.inClosedPeriod(open.work_date)) return { result: 'flagged', reason: 'period_closed' }
    return { result: 'checked_out', open }
  }
  if (open) return { result: 'flagged', reason: 'already_checked_in' }
  if (await reads.outOfOrder(operator.id, at, direction !== 'out')) {
    return { result: 'flagged', reason: 'out_of_order' }
  }
  if (direction === 'out') return { result: 'flagged', reason: 'no_open_session' }
  const workDate = await reads.workDate(scan.device, at)
  if (await reads.inClosedPeriod(workDate)) return { result: 'flagged', reason: 'period_closed' }
  return { result: 'checked_in', sessionId: (await checkIn(trx, auth, { ...scan, workDate })).id }
}

/**
 * A break scan: it changes the operator's open session (none: `no_open_session`, or `out_of_order`
 * for a late scan inside a completed session, as a check-out's), by the session's break rules
 * (`breakScanOf`), unless that session's work date is in a closed pay period.
 */
async function decideBreak(
  operator: OperatorRow,
  open: SessionRow | undefined,
  direction: 'break_start' | 'break_end',
  at: number,
  reads: ScanReads,
): Promise<Outcome> {
  if (!open) {
    const late = await reads.outOfOrder(operator.id, at, false)
    return { result: 'flagged', reason: late ? 'out_of_order' : 'no_open_session' }
  }
  const change = breakScanOf(open, direction, at)
  if ('reason' in change) return { result: 'flagged', reason: change.reason }
  if (await reads.inClosedPeriod(open.work_date)) return { result: 'flagged', reason: 'period_closed' }
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
  const now = clock.now()
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
 * order, so an offline day replays as it happened, each exactly as `POST /v1/scans` applies it
 * (its operator locked until the batch commits), in one transaction: 500 scans cost one commit,
 * not 500. Answers in input order.
 *
 * One refused scan never stops the others. A scan is refused before it writes anything (a bad time,
 * an unknown operator: `prepareScan`), so the items are applied together, reading what they need
 * in a few statements for all of them (`readForBatch`) rather than a dozen each, with no savepoint
 * of their own. A failure once an item writes (a statement that fails) is unexpected: the batch's
 * work is rolled back to its savepoint and done again item by item, each in a savepoint of its own,
 * so that item's slot is its error and the others keep their outcome.
 */
export async function recordScanBatch(
  trx: Trx,
  auth: AuthContext,
  batch: CheckedBatch,
): Promise<BatchOutcome[]> {
  const outcomes: BatchOutcome[] = new Array(batch.size)
  for (const [index, error] of batch.refused) outcomes[index] = { error }
  const start = await savepoint(trx, 'scan_batch')
  try {
    await applyTogether(trx, auth, batch, outcomes)
  } catch {
    await start.rollback()
    await applyEachInSavepoint(trx, auth, batch, outcomes)
  }
  await start.release()
  return outcomes
}

const skewOf = (scan: CreateScanBody, batch: CheckedBatch) =>
  scan.time === undefined ? null : batch.clockSkewMs

async function applyTogether(trx: Trx, auth: AuthContext, batch: CheckedBatch, outcomes: BatchOutcome[]) {
  const reads = await readForBatch(trx, auth, batch.apply)
  for (const { scan, index } of batch.apply) {
    let prepared: PreparedScan
    try {
      prepared = await prepareScan(reads, scan)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      outcomes[index] = { error }
      continue
    }
    outcomes[index] = { scan: await applyScan(trx, auth, prepared, skewOf(scan, batch), reads) }
  }
  await reads.flush()
}

async function applyEachInSavepoint(
  trx: Trx,
  auth: AuthContext,
  batch: CheckedBatch,
  outcomes: BatchOutcome[],
) {
  const reads = readEachTime(trx, auth)
  for (const { scan, index } of batch.apply) {
    const before = await savepoint(trx, 'batch_scan')
    try {
      outcomes[index] = {
        scan: await applyScan(trx, auth, await prepareScan(reads, scan), skewOf(scan, batch), reads),
      }
    } catch (error) {
      await before.rollback()
      outcomes[index] = { error }
    }
    await before.release()
  }
}

/** `readForBatch`'s reads, and the scans it holds back to write together. */
type BatchReads = ScanReads & { flush(): Promise<void> }

/**
 * What a batch's items read, read once for all of them at the start of its transaction:
 * - its devices (one, from a kiosk) and their locations' time zones;
 * - its operators, by id or ident, locked in one statement (in id order, as lockOperators does);
 * - after those locks, as `prepareScan` reads one: the scans of its `client_scan_id`s, each
 *   operator's accepted scans around the items' times (the duplicate window), its operators'
 *   open sessions, locked, and how late their completed sessions can end (whether a check-in
 *   comes late);
 * - whether a closed pay period holds any of the work dates the items can touch (it takes the
 *   pay-period lock, shared, as each item would, so no period closes before the batch commits).
 * The scans the items record are kept here (a replay later in the batch, the duplicate window)
 * and written together at the end (`flush`). An operator's open session is known from the batch's
 * read until an item of that operator reads it: that item may change it, so the open sessions of
 * the operators so touched are read again, together, when an item next needs one of them. Whatever
 * the batch's reads do not answer (an operator named in a way the read missed, a scan without a
 * time, a date not read, a shift to close), the database answers, as for a scan alone.
 */
async function readForBatch(trx: Trx, auth: AuthContext, items: CheckedBatch['apply']): Promise<BatchReads> {
  const alone = readEachTime(trx, auth)
  const now = clock.now()
  const scans = items.map(({ scan }) => scan)

  const devices = new Map<string, DeviceRow | ApiError>()
  for (const code of new Set(scans.map((scan) => scan.device_id))) {
    devices.set(code, await resolveScanDevice(trx, auth, code).catch(refusal))
  }
  const deviceOf = (code: string) => {
    const device = devices.get(code)
    return device === undefined || device instanceof ApiError ? undefined : device
  }

  const ids = scans.flatMap((scan) => (scan.operator_id === undefined ? [] : [scan.operator_id]))
  const idents = scans.flatMap((scan) =>
    scan.operator_id === undefined && scan.operator_ident !== undefined ? [scan.operator_ident] : [],
  )
  const operators =
    ids.length + idents.length === 0 ? [] : await lockOperatorsNamed(trx, auth, unique(ids), unique(idents))
  const byId = new Map(operators.map((operator) => [operator.id, operator]))
  const byIdent = new Map(operators.map((operator) => [operator.ident, operator]))
  /** The operator a scan names, as `resolveOperator` would answer it; undefined: ask it. */
  const operatorOf = (scan: CreateScanBody) => {
    const { operator_id: id, operator_ident: ident } = scan
    const operator = id !== undefined ? byId.get(id) : ident !== undefined ? byIdent.get(ident) : undefined
    return operator && (ident === undefined || operator.ident === ident) ? operator : undefined
  }

  const recorded = new Map<string, ScanRow>()
  const clientKey = (deviceCode: string, clientScanId: string) => `${deviceCode}\n${clientScanId}`
  const clientIds = new Map<string, Set<string>>()
  for (const scan of scans) {
    const device = deviceOf(scan.device_id)
    if (device && scan.client_scan_id !== undefined) {
      const set = clientIds.get(device.code) ?? new Set()
      clientIds.set(device.code, set.add(scan.client_scan_id))
    }
  }
  for (const [deviceCode, set] of clientIds) {
    for (const row of await findScansByClientIds(trx, auth, deviceCode, [...set])) {
      if (row.client_scan_id !== null) recorded.set(clientKey(deviceCode, row.client_scan_id), row)
    }
  }

  // Per operator, one window of scan times that covers every duplicate window its items can ask
  // about: [earliest − 60 s, latest + 60 s], open-ended for a scan without a time (it is now,
  // whenever it is applied).
  const windows = new Map<string, ScanWindow>()
  const workDates = new Set<string>()
  const zones = new Map<string | null, string>()
  const zoneOf = async (locationId: string | null) => {
    let zone = zones.get(locationId)
    if (zone === undefined) {
      zone = await timeZoneAt(trx, auth, locationId)
      zones.set(locationId, zone)
    }
    return zone
  }
  let earliest = now
  for (const scan of scans) {
    const operator = operatorOf(scan)
    const device = deviceOf(scan.device_id)
    const at = scan.time === undefined ? now : timeOf(scan.time)
    if (!operator || !device || at === undefined) continue
    earliest = Math.min(earliest, at)
    const from = at - DUPLICATE_WINDOW_MS
    const to = scan.time === undefined ? undefined : at + DUPLICATE_WINDOW_MS
    const known = windows.get(operator.id)
    windows.set(
      operator.id,
      known === undefined
        ? { operatorId: operator.id, from, to }
        : {
            operatorId: operator.id,
            from: Math.min(from, known.from),
            to: known.to === undefined || to === undefined ? undefined : Math.max(to, known.to),
          },
    )
    if (scan.time !== undefined) workDates.add(calendarDate(at, await zoneOf(device.location_id)))
  }
  const accepted = new Map<string, number[]>()
  const addAccepted = (operatorId: string, at: number) => {
    const times = accepted.get(operatorId)
    if (times) times.push(at)
    else accepted.set(operatorId, [at])
  }
  if (windows.size > 0) {
    for (const row of await findAcceptedScanTimes(trx, auth, [...windows.values()])) {
      addAccepted(row.operator_id, row.scanned_at)
    }
  }
  const covers = (operatorId: string, at: number) => {
    const window = windows.get(operatorId)
    return (
      window !== undefined &&
      window.from <= at - DUPLICATE_WINDOW_MS &&
      (window.to === undefined || at + DUPLICATE_WINDOW_MS <= window.to)
    )
  }

  // Each operator's open session (null: none), as last read; `stale`: those an item may have
  // changed since, read again together when an item needs one of them.
  const openSessions = new Map<string, SessionRow | null>()
  const stale = new Set(operators.map((operator) => operator.id))
  const readOpenSessions = async () => {
    const ids = [...stale]
    stale.clear()
    for (const id of ids) openSessions.set(id, null)
    for (const session of await lockOpenSessionsOf(trx, auth, ids)) {
      openSessions.set(session.operator_id, session)
      workDates.add(session.work_date)
    }
  }
  if (stale.size > 0) await readOpenSessions()
  // Whether a check-in comes late (isOutOfOrder): whether a session of the operator's record ends
  // after it. None that began before `since` can end after `earliest`, as no completed session
  // lasts longer than MAX_API_SESSION_MS (the bound isOutOfOrder's own query reads by): the latest
  // end of the others, bounded from above, answers for an operator's first check-in with no open
  // session (`firstWithoutOpen`); a bound past the scan's time leaves it to isOutOfOrder.
  const since = earliest - MAX_API_SESSION_MS
  const latestEnds = new Map<string, number>()
  if (operators.length > 0) {
    const ids = operators.map((operator) => operator.id)
    for (const row of await latestSessionEnds(trx, auth, ids, since, MAX_API_SESSION_MS)) {
      latestEnds.set(row.operator_id, row.latest_end)
    }
  }
  const reachedOpenSession = new Set<string>()
  const firstWithoutOpen = new Set<string>()
  // Not `workDates` itself: it grows as open sessions are read again, unchecked.
  const openDates =
    workDates.size > 0 && (await closedPeriodHolding(trx, auth, [...workDates])) === undefined
      ? new Set(workDates)
      : new Set<string>()

  const pending: ScanRow[] = []
  return {
    device: async (code) => {
      const device = devices.get(code)
      if (device instanceof ApiError) throw device
      return device ?? alone.device(code)
    },
    operator: async (input) => operatorOf(input) ?? alone.operator(input),
    recorded: async (deviceCode, clientScanId) => {
      // Every `client_scan_id` of the batch was read for its device, and the batch's own are kept:
      // one of those not found is not recorded.
      const row = recorded.get(clientKey(deviceCode, clientScanId))
      if (row || clientIds.get(deviceCode)?.has(clientScanId)) return row
      return alone.recorded(deviceCode, clientScanId)
    },
    acceptedScanNear: async (operatorId, at) => {
      const times = accepted.get(operatorId) ?? []
      if (times.some((t) => t > at - DUPLICATE_WINDOW_MS && t < at + DUPLICATE_WINDOW_MS)) return true
      return covers(operatorId, at) ? false : alone.acceptedScanNear(operatorId, at)
    },
    openSessionAt: async (operatorId, at) => {
      firstWithoutOpen.delete(operatorId)
      if (!openSessions.has(operatorId)) return alone.openSessionAt(operatorId, at)
      if (stale.has(operatorId)) await readOpenSessions()
      const open = openSessions.get(operatorId)
      stale.add(operatorId)
      const first = !reachedOpenSession.has(operatorId)
      reachedOpenSession.add(operatorId)
      if (!open) {
        if (first) firstWithoutOpen.add(operatorId)
        return {}
      }
      // Closing an over-long shift is openSessionAt's, which reads the session again.
      return at - open.check_in_at > MAX_SHIFT_MS ? alone.openSessionAt(operatorId, at) : { open }
    },
    outOfOrder: async (operatorId, at, checksIn) => {
      const ends = latestEnds.get(operatorId) ?? Number.NEGATIVE_INFINITY
      if (checksIn && firstWithoutOpen.has(operatorId) && at >= earliest && ends <= at) return false
      return alone.outOfOrder(operatorId, at, checksIn)
    },
    workDate: async (device, at) => calendarDate(at, await zoneOf(device.location_id)),
    inClosedPeriod: async (workDate) => (openDates.has(workDate) ? false : alone.inClosedPeriod(workDate)),
    insert: async (row) => {
      pending.push(row)
      if (row.client_scan_id !== null) recorded.set(clientKey(row.device_code, row.client_scan_id), row)
      if (row.result !== 'flagged') addAccepted(row.operator_id, row.scanned_at)
    },
    flush: () => insertScans(trx, pending),
  }
}

const unique = <T>(values: T[]) => [...new Set(values)]

/** An `ApiError` as a value (what refuses the items that name it); anything else is thrown. */
function refusal(error: unknown): ApiError {
  if (error instanceof ApiError) return error
  throw error
}

/** A scan's given time, when it is one `scanInstant` accepts. */
function timeOf(time: string): number | undefined {
  try {
    return scanInstant(time)
  } catch {
    return undefined
  }
}

export function retrieveScan(db: Executor, auth: AuthContext, id: string): Promise<Scan> {
  return retrieveResource(db, auth, { name: 'scan', find: findScan, toApi: toScan }, id)
}

export const listScans = listService(listScanRows, toScan)
