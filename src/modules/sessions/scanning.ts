import type { AuthContext } from '../../core/identity.js'
import type { Trx } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { calendarDate } from '../../lib/dates.js'
import type { DeviceRow } from '../devices/service.js'
import { timeZoneAt } from '../locations/service.js'
import type { OperatorRow } from '../operators/service.js'
import { closedPeriodHolding } from '../pay-periods/service.js'
import {
  checkIn,
  checkOut,
  closeOverlongShift,
  isOutOfOrder,
  MAX_API_SESSION_MS,
  recordBreakScan,
} from './lifecycle.js'
import { findOpenSession, latestSessionEnds, lockOpenSessionsOf, type SessionRow } from './repository.js'
import {
  decideScan,
  type ScanDirection,
  type ScanFacts,
  type ScanFlagReason,
  type ScanOutcome,
} from './scan-decision.js'

/**
 * What a scan does to sessions, the one way for `POST /v1/scans` and each item of
 * `POST /v1/scans/batch`: the scans module resolves the scan and records its row; this file decides
 * (`decideScan`, pure), reading the facts the decision asks for, and makes the session's change
 * (lifecycle.ts). A scan alone reads each fact from the database (`applyScan`); the items of a batch
 * read what the batch read for all of them at once (`startScanBatch`), and the database only where
 * that read does not answer. Either answers exactly as the database would at that point of the
 * transaction.
 */

export { scanInstant } from './lifecycle.js'
export {
  DUPLICATE_WINDOW_MS,
  isDuplicateOf,
  type ScanDirection,
  type ScanFlagReason,
} from './scan-decision.js'

/** A scan whose device and operator are resolved, the operator locked (see lockOperators in lifecycle.ts). */
export interface ScanToApply {
  operator: OperatorRow
  device: DeviceRow
  at: number
  direction: ScanDirection
  /**
   * The time of an accepted scan of the operator near `at` (`isDuplicateOf`), null: none. Scans are
   * the scans module's rows: it reads them, when the decision asks (never for an inactive operator).
   */
  acceptedScanNear(): Promise<number | null>
}

/** What a scan did, for its row; `complete`, if any, makes the session's change that follows the scan's row. */
export interface AppliedScan {
  result: ScanOutcome['result']
  flagReason: ScanFlagReason | null
  /** The session opened, completed or whose break started or ended (or closed, for `max_shift_exceeded`). */
  sessionId: string | null
  /**
   * A check-out's or a break's change to the session, run once the scan's row and event are
   * written, so a receiver reads `scan.checked_out` (or the break's scan event), then the
   * `session.completed` (`session.updated`) it caused. None for a check-in, whose session is written
   * before (the scan's row names it), nor for a flag.
   */
  complete?: () => Promise<void>
}

/** What the decision asks of sessions, locations and pay periods. */
interface SessionFacts {
  /** The operator's open session, locked. */
  openSession(operatorId: string): Promise<SessionRow | undefined>
  /** `isOutOfOrder`, asked when the operator has no open session. */
  late(operatorId: string, at: number, checksIn: boolean): Promise<boolean>
  /** The time zone of a location (UTC without one), which dates a check-in at its devices. */
  zoneOf(locationId: string | null): Promise<string>
  periodClosed(workDate: string): Promise<boolean>
}

function readEachTime(trx: Trx, auth: AuthContext): SessionFacts {
  return {
    openSession: (operatorId) => findOpenSession(trx, auth, operatorId),
    late: (operatorId, at, checksIn) => isOutOfOrder(trx, auth, operatorId, at, checksIn),
    zoneOf: (locationId) => timeZoneAt(trx, auth, locationId),
    periodClosed: async (workDate) => (await closedPeriodHolding(trx, auth, [workDate])) !== undefined,
  }
}

/** A scan's change to its operator's sessions, each fact read from the database when asked. */
export function applyScan(trx: Trx, auth: AuthContext, scan: ScanToApply): Promise<AppliedScan> {
  return applyWith(trx, auth, readEachTime(trx, auth), scan)
}

/** Decides a scan, reading the facts the decision asks for from `facts`, and applies its outcome. */
async function applyWith(
  trx: Trx,
  auth: AuthContext,
  facts: SessionFacts,
  scan: ScanToApply,
): Promise<AppliedScan> {
  const { operator, device, at } = scan
  let known: ScanFacts<SessionRow> = { at, direction: scan.direction, active: operator.is_active === 1 }
  for (;;) {
    const step = decideScan(known)
    if ('result' in step) return applyOutcome(trx, auth, scan, step)
    switch (step.next) {
      case 'accepted_scan':
        known = { ...known, acceptedScanAt: await scan.acceptedScanNear() }
        break
      case 'open_session':
        known = { ...known, open: (await facts.openSession(operator.id)) ?? null }
        break
      case 'close_overlong':
        known = { ...known, open: null, closed: (await closeOverlongShift(trx, auth, step.session)).id }
        break
      case 'late':
        known = { ...known, late: await facts.late(operator.id, at, step.checksIn) }
        break
      case 'work_date':
        // The calendar date of the check-in in its device's location's zone (see workDateOf in lifecycle.ts).
        known = { ...known, workDate: calendarDate(at, await facts.zoneOf(device.location_id)) }
        break
      case 'period_closed':
        known = { ...known, periodClosed: await facts.periodClosed(step.workDate) }
        break
    }
  }
}

async function applyOutcome(
  trx: Trx,
  auth: AuthContext,
  scan: ScanToApply,
  outcome: ScanOutcome<SessionRow>,
): Promise<AppliedScan> {
  switch (outcome.result) {
    case 'flagged':
      return {
        result: 'flagged',
        flagReason: outcome.reason,
        sessionId: outcome.sessionId ?? null,
      }
    case 'checked_in': {
      const { operator, device, at } = scan
      const session = await checkIn(trx, auth, { operator, device, at, workDate: outcome.workDate })
      return { result: 'checked_in', flagReason: null, sessionId: session.id }
    }
    case 'checked_out':
      return {
        result: 'checked_out',
        flagReason: null,
        sessionId: outcome.session.id,
        complete: async () => {
          await checkOut(trx, auth, outcome.session, scan.at)
        },
      }
    default:
      return {
        result: outcome.result,
        flagReason: null,
        sessionId: outcome.session.id,
        complete: async () => {
          await recordBreakScan(trx, auth, outcome.session, outcome.breaks, outcome.result)
        },
      }
  }
}

/** A scan of a batch, as `startScanBatch` reads for it: its operator, device and time (`timed`: given). */
export interface ScanBatchItem {
  operatorId: string
  device: DeviceRow
  at: number
  timed: boolean
}

/** A batch's items applied from what the batch read once (`startScanBatch`). */
export interface ScanBatch {
  applyScan(scan: ScanToApply): Promise<AppliedScan>
}

/**
 * What a batch of scans reads of sessions, read once for all of its items at the start of its
 * transaction, after its operators' locks (`operatorIds`: every operator it locked):
 * - its operators' open sessions, locked, and how late their completed sessions can end (whether a
 *   check-in comes late);
 * - its devices' locations' time zones (a check-in's work date);
 * - whether a closed pay period holds any of the work dates the items can touch (it takes the
 *   pay-period lock, shared, as each item would, so no period closes before the batch commits).
 * An operator's open session is known from the batch's read until an item of that operator reads
 * it: that item may change it, so the open sessions of the operators so touched are read again,
 * together, when an item next needs one of them. Whatever the batch's reads do not answer (an
 * operator it did not lock, a date not read, a late scan it cannot rule out), the database answers,
 * as for a scan alone.
 */
export async function startScanBatch(
  trx: Trx,
  auth: AuthContext,
  operatorIds: readonly string[],
  items: readonly ScanBatchItem[],
): Promise<ScanBatch> {
  const facts = await readForBatch(trx, auth, operatorIds, items)
  return { applyScan: (scan) => applyWith(trx, auth, facts, scan) }
}

async function readForBatch(
  trx: Trx,
  auth: AuthContext,
  operatorIds: readonly string[],
  items: readonly ScanBatchItem[],
): Promise<SessionFacts> {
  const alone = readEachTime(trx, auth)
  const zones = new Map<string | null, string>()
  const zoneOf = async (locationId: string | null) => {
    let zone = zones.get(locationId)
    if (zone === undefined) {
      zone = await alone.zoneOf(locationId)
      zones.set(locationId, zone)
    }
    return zone
  }
  const workDates = new Set<string>()
  let earliest = clock.now()
  for (const item of items) {
    earliest = Math.min(earliest, item.at)
    if (item.timed) workDates.add(calendarDate(item.at, await zoneOf(item.device.location_id)))
  }

  // Each operator's open session (null: none), as last read; `stale`: those an item may have
  // changed since, read again together when an item needs one of them.
  const openSessions = new Map<string, SessionRow | null>()
  const stale = new Set(operatorIds)
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
  if (operatorIds.length > 0) {
    for (const row of await latestSessionEnds(trx, auth, operatorIds, since, MAX_API_SESSION_MS)) {
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

  return {
    openSession: async (operatorId) => {
      firstWithoutOpen.delete(operatorId)
      if (!openSessions.has(operatorId)) return alone.openSession(operatorId)
      if (stale.has(operatorId)) await readOpenSessions()
      const open = openSessions.get(operatorId)
      stale.add(operatorId)
      const first = !reachedOpenSession.has(operatorId)
      reachedOpenSession.add(operatorId)
      if (!open && first) firstWithoutOpen.add(operatorId)
      return open ?? undefined
    },
    late: async (operatorId, at, checksIn) => {
      const ends = latestEnds.get(operatorId) ?? Number.NEGATIVE_INFINITY
      if (checksIn && firstWithoutOpen.has(operatorId) && at >= earliest && ends <= at) return false
      return alone.late(operatorId, at, checksIn)
    },
    zoneOf,
    periodClosed: async (workDate) => (openDates.has(workDate) ? false : alone.periodClosed(workDate)),
  }
}
