import type { StoredBreak } from '../../db/schema.js'
import { endsAfterBreaks, parseBreaks, scanBreak } from './breaks.js'

/**
 * What a scan does to its operator's sessions, decided once, here, for `POST /v1/scans` and for every
 * item of `POST /v1/scans/batch` alike (docs/attendance.md): pure, no database. The facts it needs
 * are read only when the decision reaches them, so a scan that is flagged early reads nothing more:
 * `decideScan` answers the outcome, or the fact it needs next (`next`), which the caller
 * (`scanning.ts`) reads, adds and asks again.
 */

const HOUR_MS = 60 * 60 * 1000
/**
 * An open session older than this is closed as flagged `max_shift_exceeded`. Closed so, it keeps no
 * check-out, and for the overlap rule it occupies [check_in, check_in + 16 h): the longest it could
 * have been open.
 */
export const MAX_SHIFT_MS = 16 * HOUR_MS
/** A repeat scan of the same operator within this window changes nothing (`duplicate_scan`). */
export const DUPLICATE_WINDOW_MS = 60_000

export type ScanDirection = 'auto' | 'in' | 'out' | 'break_start' | 'break_end'

/** Why a flagged scan changed nothing: the decision's reasons, which a scan's `flag_reason` lists (scans/schemas.ts). */
export const SCAN_FLAG_REASONS = [
  'duplicate_scan',
  'inactive_operator',
  'no_open_session',
  'already_checked_in',
  'invalid_time_range',
  'max_shift_exceeded',
  'period_closed',
  'out_of_order',
  'no_open_break',
  'break_in_progress',
  'too_many_breaks',
] as const
/** Every reason of the break rules (breaks.ts, `BreakScanReason`) is one of them: the compiler checks `flag(change.reason)`. */
export type ScanFlagReason = (typeof SCAN_FLAG_REASONS)[number]

/** What the decision reads of an open session. */
export type OpenSession = { id: string; check_in_at: number; work_date: string; breaks: string }

/**
 * What is known about a scan. The first three are always known; each other fact is undefined until
 * the decision asks for it (`next`).
 */
export interface ScanFacts<S extends OpenSession = OpenSession> {
  at: number
  direction: ScanDirection
  /** The operator is active. */
  active: boolean
  /** `next: 'accepted_scan'`: the time of an accepted scan of the operator near `at` (see `isDuplicateOf`); null: none. */
  acceptedScanAt?: number | null
  /** `next: 'open_session'`: the operator's open session (locked), null: none. */
  open?: S | null
  /** `next: 'close_overlong'` done: the id of the over-long session closed, as the scan found it (`open` is then null). */
  closed?: string
  /** `next: 'late'`: whether a session of the operator's record already covers the scan (`isOutOfOrder`). */
  late?: boolean
  /** `next: 'work_date'`: the work date a check-in at `at` gives its session (its device's location's day). */
  workDate?: string
  /** `next: 'period_closed'`: whether a closed pay period holds the work date it asked about. */
  periodClosed?: boolean
}

/** The fact the decision needs next. `close_overlong` is a change, not a read: the session is closed first. */
export type ScanQuestion<S extends OpenSession = OpenSession> =
  | { next: 'accepted_scan' }
  | { next: 'open_session' }
  | { next: 'close_overlong'; session: S }
  | { next: 'late'; checksIn: boolean }
  | { next: 'work_date' }
  | { next: 'period_closed'; workDate: string }

/** What the scan does. Flagged scans change no session; `sessionId` of a flag: the over-long session closed. */
export type ScanOutcome<S extends OpenSession = OpenSession> =
  | { result: 'checked_in'; workDate: string }
  | { result: 'checked_out'; session: S }
  | { result: 'break_started' | 'break_ended'; session: S; breaks: StoredBreak[] }
  | { result: 'flagged'; reason: ScanFlagReason; sessionId?: string }

/** Whether an accepted scan at `acceptedAt` makes a scan at `at` a repeat: less than a minute apart. */
export function isDuplicateOf(at: number, acceptedAt: number): boolean {
  return acceptedAt > at - DUPLICATE_WINDOW_MS && acceptedAt < at + DUPLICATE_WINDOW_MS
}

const flag = (reason: ScanFlagReason, sessionId?: string): ScanOutcome<never> =>
  sessionId === undefined ? { result: 'flagged', reason } : { result: 'flagged', reason, sessionId }

/**
 * A scan at a device: `auto` checks the operator out when it has an open session and in otherwise;
 * `in` and `out` force the direction; `break_start` and `break_end` start and end a break of the
 * open session (never chosen by `auto`).
 */
export function decideScan<S extends OpenSession>(facts: ScanFacts<S>): ScanOutcome<S> | ScanQuestion<S> {
  const { at, direction } = facts
  if (!facts.active) return flag('inactive_operator')
  if (facts.acceptedScanAt === undefined) return { next: 'accepted_scan' }
  if (facts.acceptedScanAt !== null && isDuplicateOf(at, facts.acceptedScanAt)) return flag('duplicate_scan')
  if (facts.open === undefined) return { next: 'open_session' }
  // An open session older than 16 hours is closed before the scan goes on, which then finds none.
  if (facts.open && at - facts.open.check_in_at > MAX_SHIFT_MS) {
    return { next: 'close_overlong', session: facts.open }
  }
  const open = facts.open ?? undefined
  // Only `auto` and `in` check in after the closure: any other scan reports the closure it caused.
  if (facts.closed !== undefined && direction !== 'auto' && direction !== 'in') {
    return flag('max_shift_exceeded', facts.closed)
  }
  // A late scan from before the session now open belongs to a past the record has moved on from.
  if (open && at < open.check_in_at) return flag('out_of_order')
  if (direction === 'break_start' || direction === 'break_end') return decideBreak(facts, open, direction)
  if (open && direction !== 'in') {
    if (at === open.check_in_at) return flag('invalid_time_range')
    // A check-out before a break the session already recorded comes late, as one before its check-in.
    if (!endsAfterBreaks(parseBreaks(open.breaks), at)) return flag('out_of_order')
    // Completing a session of a closed pay period would change payroll's closed month.
    if (facts.periodClosed === undefined) return { next: 'period_closed', workDate: open.work_date }
    return facts.periodClosed ? flag('period_closed') : { result: 'checked_out', session: open }
  }
  if (open) return flag('already_checked_in')
  // With no open session: a check-in (or check-out) that a recorded session already covers is late.
  if (facts.late === undefined) return { next: 'late', checksIn: direction !== 'out' }
  if (facts.late) return flag('out_of_order')
  if (direction === 'out') return flag('no_open_session')
  if (facts.workDate === undefined) return { next: 'work_date' }
  if (facts.periodClosed === undefined) return { next: 'period_closed', workDate: facts.workDate }
  return facts.periodClosed ? flag('period_closed') : { result: 'checked_in', workDate: facts.workDate }
}

/**
 * A break scan: it changes the operator's open session (none: `no_open_session`, or `out_of_order`
 * for a late scan inside a completed session, as a check-out's), by the session's break rules
 * (`scanBreak`), unless that session's work date is in a closed pay period.
 */
function decideBreak<S extends OpenSession>(
  facts: ScanFacts<S>,
  open: S | undefined,
  direction: 'break_start' | 'break_end',
): ScanOutcome<S> | ScanQuestion<S> {
  if (!open) {
    if (facts.late === undefined) return { next: 'late', checksIn: false }
    return flag(facts.late ? 'out_of_order' : 'no_open_session')
  }
  const change = scanBreak(parseBreaks(open.breaks), direction, facts.at)
  if ('reason' in change) return flag(change.reason)
  if (facts.periodClosed === undefined) return { next: 'period_closed', workDate: open.work_date }
  if (facts.periodClosed) return flag('period_closed')
  return {
    result: direction === 'break_start' ? 'break_started' : 'break_ended',
    session: open,
    breaks: change.breaks,
  }
}
