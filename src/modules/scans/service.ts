import { ApiError, errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { ownedBy } from '../../db/scope.js'
import { savepoint } from '../../db/transaction-connection.js'
import type { Executor, Trx } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { parseInstant, toIso } from '../../lib/time.js'
import { type DeviceRow, decryptPin, resolveScanDevice } from '../devices/service.js'
import { recordEvent } from '../events/outbox.js'
import {
  checkOperatorPin,
  lockOperatorsNamed,
  type OperatorRow,
  refusePinLocked,
  resolveOperator,
} from '../operators/service.js'
import {
  type AppliedScan,
  applyScan,
  DUPLICATE_WINDOW_MS,
  isDuplicateOf,
  type ScanBatchItem,
  type ScanToApply,
  scanInstant,
  startScanBatch,
} from '../sessions/scanning.js'
import { listService, retrieveResource } from '../shared/resources.js'
import {
  findAcceptedScanNear,
  findAcceptedScanTimes,
  findScan,
  findScanByClientId,
  findScansByClientIds,
  insertScan,
  insertScans,
  listScanRows,
  type ScanRow,
  type ScanWindow,
  toScan,
} from './repository.js'
import type { CreateScanBatchBody, CreateScanBody, Scan } from './schemas.js'

/**
 * What a scan reads, and the row it writes; what it does to sessions is the sessions module's
 * (`applyToSessions`: sessions/scanning.ts decides it and makes the change). A scan alone asks the
 * database each time (`readEachTime`); the items of a batch ask what the batch read for all of them
 * at once (`readForBatch`), which asks the database only where that read does not answer. Either
 * answers exactly as the database would at that point of the transaction.
 */
interface ScanReads {
  device(code: string): Promise<DeviceRow>
  /** The operator the scan names, locked until the transaction ends (see lockOperators). */
  operator(input: CreateScanBody): Promise<OperatorRow>
  /** The scan the device recorded with this `client_scan_id`, if any. */
  recorded(deviceCode: string, clientScanId: string): Promise<ScanRow | undefined>
  /** The time of an accepted scan of the operator near `at` (`isDuplicateOf`), null: none. */
  acceptedScanNear(operatorId: string, at: number): Promise<number | null>
  /** The scan's decision and its change to sessions: `applyScan` of sessions, or a batch's. */
  applyToSessions(scan: ScanToApply): Promise<AppliedScan>
  insert(row: ScanRow): Promise<void>
}

function readEachTime(trx: Trx, auth: AuthContext): ScanReads {
  return {
    device: (code) => resolveScanDevice(trx, auth, code),
    operator: (input) => resolveOperator(trx, auth, input, { lock: true }),
    recorded: (deviceCode, clientScanId) => findScanByClientId(trx, auth, deviceCode, clientScanId),
    acceptedScanNear: async (operatorId, at) =>
      (await findAcceptedScanNear(trx, auth, operatorId, at, DUPLICATE_WINDOW_MS))?.scanned_at ?? null,
    applyToSessions: (scan) => applyScan(trx, auth, scan),
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
 * A scan at a device, recorded with what it did to its operator's sessions (decided by the sessions
 * module: sessions/scan-decision.ts). Flagged scans change no session. Scans of one operator are
 * serialised by the sessions' per-operator lock, and the partial unique index on open sessions
 * makes a second open session impossible even so.
 */
export async function recordScan(trx: Trx, auth: AuthContext, input: CreateScanBody): Promise<Scan> {
  const reads = readEachTime(trx, auth)
  return applyPrepared(trx, auth, await prepareScan(reads, input), null, reads)
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

/** Applies a prepared scan: its session's change, its row and event (sessions/scanning.ts says the order). */
async function applyPrepared(
  trx: Trx,
  auth: AuthContext,
  prepared: PreparedScan,
  clockSkewMs: number | null,
  reads: ScanReads,
): Promise<Scan> {
  if (prepared.replay) return toScan(prepared.replay)
  const { input, at, device, operator } = prepared
  const direction = input.direction ?? 'auto'
  const applied = await reads.applyToSessions({
    operator,
    device,
    at,
    direction,
    acceptedScanNear: () => reads.acceptedScanNear(operator.id, at),
  })
  const row: ScanRow = {
    id: newId('scn'),
    ...ownedBy(auth),
    device_code: device.code,
    operator_id: operator.id,
    operator_ident: operator.ident,
    scanned_at: at,
    direction,
    result: applied.result,
    flag_reason: applied.flagReason,
    session_id: applied.sessionId,
    created_at: clock.now(),
    client_scan_id: input.client_scan_id ?? null,
    clock_skew_ms: clockSkewMs,
    operator_name: operator.name,
  }
  await reads.insert(row)
  const scan = toScan(row)
  await recordEvent(trx, auth, `scan.${applied.result}`, scan)
  if (applied.complete) await applied.complete()
  return scan
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
    outcomes[index] = { scan: await applyPrepared(trx, auth, prepared, skewOf(scan, batch), reads) }
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
        scan: await applyPrepared(trx, auth, await prepareScan(reads, scan), skewOf(scan, batch), reads),
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
 * - its devices (one, from a kiosk);
 * - its operators, by id or ident, locked in one statement (in id order, as lockOperators does);
 * - after those locks, as `prepareScan` reads one: the scans of its `client_scan_id`s and each
 *   operator's accepted scans around the items' times (the duplicate window);
 * - what its items read of sessions (`startScanBatch` of sessions/scanning.ts).
 * The scans the items record are kept here (a replay later in the batch, the duplicate window)
 * and written together at the end (`flush`). Whatever the batch's reads do not answer (an operator
 * named in a way the read missed, a scan outside the windows read), the database answers, as for a
 * scan alone.
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
  const sessionItems: ScanBatchItem[] = []
  for (const scan of scans) {
    const operator = operatorOf(scan)
    const device = deviceOf(scan.device_id)
    const at = scan.time === undefined ? now : timeOf(scan.time)
    if (!operator || !device || at === undefined) continue
    sessionItems.push({ operatorId: operator.id, device, at, timed: scan.time !== undefined })
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

  const sessions = await startScanBatch(
    trx,
    auth,
    operators.map((operator) => operator.id),
    sessionItems,
  )

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
      const near = (accepted.get(operatorId) ?? []).find((t) => isDuplicateOf(at, t))
      if (near !== undefined) return near
      return covers(operatorId, at) ? null : alone.acceptedScanNear(operatorId, at)
    },
    applyToSessions: (scan) => sessions.applyScan(scan),
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
