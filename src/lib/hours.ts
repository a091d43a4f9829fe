const MS_PER_HUNDREDTH_HOUR = 36_000

/**
 * Worked milliseconds as hours, rounded half-up to 2 decimals, once. Callers sum exact durations
 * in milliseconds first and round the sum here, never add rounded values: three sessions of
 * 20 min 42 s are 3,726,000 ms = 1.035 h → 1.04 h, where a sum of rounded values would say 1.05.
 */
export function hoursOfMs(ms: number): number {
  return Math.floor(ms / MS_PER_HUNDREDTH_HOUR + 0.5) / 100
}
