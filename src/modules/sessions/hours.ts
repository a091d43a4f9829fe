const MS_PER_HUNDREDTH_HOUR = 36_000

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
  const workedMs = checkOutAt - checkInAt - breakMinutes * 60_000
  return Math.floor(workedMs / MS_PER_HUNDREDTH_HOUR + 0.5) / 100
}
