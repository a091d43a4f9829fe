/** Instants are stored as epoch milliseconds and returned as UTC ISO-8601 with milliseconds. */
export function toIso(ms: number): string {
  return new Date(ms).toISOString()
}

export function toIsoOrNull(ms: number | null): string | null {
  return ms === null ? null : toIso(ms)
}

/**
 * The canonical IANA name of a time zone (`europe/paris` → `Europe/Paris`), or undefined when it is
 * not one. Offsets such as `+01:00` are refused: a location lives in a zone with its DST rules.
 */
export function canonicalTimeZone(name: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return undefined
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return undefined
  }
}

/**
 * Parses an ISO-8601 timestamp that names its offset (`Z` or `±hh:mm`); anything else, including a
 * local time without a zone, is undefined. Returns epoch milliseconds (sub-millisecond digits are
 * dropped).
 */
export function parseInstant(text: string): number | undefined {
  const match =
    /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/i.exec(text)
  if (!match) return undefined
  const [, y, mo, d, h, mi, s = '00', frac = '', zone = 'Z'] = match
  const ms = frac.padEnd(3, '0').slice(0, 3)
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}${offset}`
  const value = Date.parse(iso)
  if (Number.isNaN(value)) return undefined
  // Date.parse rolls 2026-02-30 over into March; a calendar date that does not exist is refused.
  const local = new Date(value + offsetMinutes(offset) * 60_000)
  if (local.getUTCDate() !== Number(d) || local.getUTCMonth() + 1 !== Number(mo) || Number(h) > 23)
    return undefined
  return value
}

function offsetMinutes(offset: string): number {
  if (offset === 'Z') return 0
  const sign = offset.startsWith('-') ? -1 : 1
  return sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)))
}
