/** Instants are stored as epoch milliseconds and returned as UTC ISO-8601 with milliseconds. */
export function toIso(ms: number): string {
  return new Date(ms).toISOString()
}

export function toIsoOrNull(ms: number | null): string | null {
  return ms === null ? null : toIso(ms)
}
