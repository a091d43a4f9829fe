import type { StoredBreak } from '../../db/schema.js'

const MS_PER_HUNDREDTH_HOUR = 36_000
const MINUTE_MS = 60_000

/**
 * Worked milliseconds as hours, rounded half-up to 2 decimals, once: the one rounding of hours in
 * the service. Callers sum exact durations in milliseconds first and round the sum here, never add
 * rounded values: three sessions of 20 min 42 s are 3,726,000 ms = 1.035 h → 1.04 h, where a sum of
 * rounded values would say 1.05 (timesheets).
 */
export function hoursOfMs(ms: number): number {
  return Math.floor(ms / MS_PER_HUNDREDTH_HOUR + 0.5) / 100
}

/**
 * The exact milliseconds of the unpaid break records that have ended. A break still going on (a
 * scan opened it) has no length yet: the check-out that ends the session ends it too.
 */
export function unpaidBreakMs(breaks: readonly StoredBreak[]): number {
  let ms = 0
  for (const b of breaks) if (!b.paid && b.end !== null) ms += b.end - b.start
  return ms
}

/** `break_minutes` of a session with break records: their unpaid total in minutes, half-up. */
export function breakMinutesOf(breaks: readonly StoredBreak[]): number {
  return Math.floor((unpaidBreakMs(breaks) + MINUTE_MS / 2) / MINUTE_MS)
}

/**
 * A session's `total_hours`: (check_out − check_in − unpaid break) / 1 h, rounded half-up to 2
 * decimals, computed in whole milliseconds so no floating-point error moves a value across a
 * rounding boundary. The unpaid break is the records' exact durations when the session has records
 * (paid breaks are worked time), `break_minutes` otherwise. Real elapsed time: instants are absolute,
 * so midnight and DST changes need no special case. `null` without a check-out.
 */
export function totalHours(
  checkInAt: number,
  checkOutAt: number | null,
  breakMinutes: number,
  breaks: readonly StoredBreak[],
): number | null {
  if (checkOutAt === null) return null
  const unpaid = breaks.length > 0 ? unpaidBreakMs(breaks) : breakMinutes * MINUTE_MS
  return hoursOfMs(checkOutAt - checkInAt - unpaid)
}
