const MS_PER_HUNDREDTH_HOUR = 36_000

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
 * A session's `total_hours`: (check_out − check_in in minutes − break_minutes) / 60, rounded
 * half-up to 2 decimals, computed in whole milliseconds so no floating-point error moves a value
 * across a rounding boundary. Real elapsed time: instants are absolute, so midnight and DST changes
 * need no special case. `null` without a check-out.
 */
export function totalHours(
  checkInAt: number,
  checkOutAt: number | null,
  breakMinutes: number,
): number | null {
  if (checkOutAt === null) return null
  return hoursOfMs(checkOutAt - checkInAt - breakMinutes * 60_000)
}
