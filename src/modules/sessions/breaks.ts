import { errors } from '../../core/errors.js'
import { instantOf } from '../../core/instants.js'
import type { StoredBreak } from '../../db/schema.js'
import { toIso } from '../../lib/time.js'
import { type BreakInput, MAX_BREAKS, type SessionBreak } from './schemas.js'

/**
 * A session's break records (docs/attendance.md, "Breaks"): how the `breaks` column stores them,
 * how the API shows them, the rules a list obeys and what a break scan does to one. No database
 * here: `lifecycle.ts` applies these to the session it holds under the operator's lock.
 */

export function parseBreaks(text: string): StoredBreak[] {
  return JSON.parse(text) as StoredBreak[]
}

/**
 * The column's text. The keys always in this order, so a list that did not change is the same
 * text and an edit that leaves the breaks alone writes nothing to them.
 */
export function serializeBreaks(breaks: readonly StoredBreak[]): string {
  return JSON.stringify(breaks.map((b) => ({ start: b.start, end: b.end, paid: b.paid, source: b.source })))
}

export function toApiBreaks(breaks: readonly StoredBreak[]): SessionBreak[] {
  return breaks.map((b) => ({
    start: { time: toIso(b.start) },
    end: b.end === null ? null : { time: toIso(b.end) },
    paid: b.paid,
    source: b.source,
  }))
}

/**
 * The breaks a create or PATCH sends, as records. A PATCH replaces the list; a break sent back as it
 * is stored (same start, end and paid) keeps its source, so fixing one break of a scanned day does
 * not relabel the others as entered through the API.
 */
export function breaksFromInput(input: readonly BreakInput[], stored: readonly StoredBreak[]): StoredBreak[] {
  return input.map((b, i) => {
    const start = instantOf(b.start.time, `breaks[${i}].start.time`)
    const end = instantOf(b.end.time, `breaks[${i}].end.time`)
    const paid = b.paid ?? false
    const same = stored.find((s) => s.start === start && s.end === end && s.paid === paid)
    return { start, end, paid, source: same?.source ?? 'api' }
  })
}

/**
 * Every break lies inside [checkIn, latest] (`latest`: the check-out, or for a session without one
 * the latest instant a record may have), starts before it ends, and overlaps no other break; else
 * 422 `invalid_break` naming the break (of two that overlap, the later in the list). A break still
 * going on (no end) occupies everything after its start.
 */
export function checkBreaks(breaks: readonly StoredBreak[], checkInAt: number, latest: number): void {
  breaks.forEach((b, i) => {
    if (b.end !== null && b.end <= b.start) throw errors.invalidBreak(i, 'A break must start before it ends.')
    if (b.start < checkInAt || (b.end ?? b.start) > latest) {
      throw errors.invalidBreak(i, 'A break must lie inside the session, between check_in and check_out.')
    }
    const other = breaks.slice(0, i).findIndex((o) => overlap(o, b))
    if (other !== -1) throw errors.invalidBreak(i, `This break overlaps breaks[${other}].`)
  })
}

function overlap(a: StoredBreak, b: StoredBreak): boolean {
  return a.start < (b.end ?? Number.POSITIVE_INFINITY) && b.start < (a.end ?? Number.POSITIVE_INFINITY)
}

/** The list with its break still going on, if any, ended at `at` (the check-out that ends the session). */
export function endOpenBreak(breaks: readonly StoredBreak[], at: number): StoredBreak[] {
  return breaks.map((b) => (b.end === null ? { ...b, end: at } : b))
}

/**
 * Whether a check-out at `at` comes after every break recorded: a break ended by then, and one
 * still going on started before it. A check-out before them is a late scan the record has moved on
 * from (`out_of_order`), as one before the check-in is.
 */
export function endsAfterBreaks(breaks: readonly StoredBreak[], at: number): boolean {
  return breaks.every((b) => (b.end === null ? b.start < at : b.end <= at))
}

export type BreakScanReason =
  | 'break_in_progress'
  | 'no_open_break'
  | 'too_many_breaks'
  | 'out_of_order'
  | 'invalid_time_range'

/**
 * What a break scan at `at` does to an open session's breaks: the new list, or why it is flagged
 * and changes nothing. `break_start` opens an unpaid break (none may be going on; it may not start
 * inside or before a break already recorded, a late scan); `break_end` ends the one going on, after
 * its start.
 */
export function scanBreak(
  breaks: readonly StoredBreak[],
  direction: 'break_start' | 'break_end',
  at: number,
): { breaks: StoredBreak[] } | { reason: BreakScanReason } {
  const open = breaks.find((b) => b.end === null)
  if (direction === 'break_start') {
    if (open) return { reason: 'break_in_progress' }
    if (breaks.some((b) => b.end !== null && at < b.end)) return { reason: 'out_of_order' }
    if (breaks.length >= MAX_BREAKS) return { reason: 'too_many_breaks' }
    return { breaks: [...breaks, { start: at, end: null, paid: false, source: 'scan' }] }
  }
  if (!open) return { reason: 'no_open_break' }
  if (at < open.start) return { reason: 'out_of_order' }
  if (at === open.start) return { reason: 'invalid_time_range' }
  return { breaks: endOpenBreak(breaks, at) }
}
