/**
 * Wall-clock time in a named time zone, as a `datetime-local` input holds it (`YYYY-MM-DDTHH:mm`),
 * and back to the instant the API takes. A session's times are entered in its location's zone,
 * whatever the browser's zone is.
 */

/**
 * An `Intl.DateTimeFormat` of `locale` and `options` for each zone asked for, made once: making one
 * costs far more than formatting with it, and a page formats every time of a long list.
 */
export function formatterPerZone(
  locale: string,
  options: Intl.DateTimeFormatOptions,
): (timeZone: string) => Intl.DateTimeFormat {
  const formatters = new Map<string, Intl.DateTimeFormat>()
  return (timeZone) => {
    let formatter = formatters.get(timeZone)
    if (!formatter) {
      formatter = new Intl.DateTimeFormat(locale, { ...options, timeZone })
      formatters.set(timeZone, formatter)
    }
    return formatter
  }
}

const formatterFor = formatterPerZone('en-US', {
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
})

interface WallClock {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
}

function wallClockAt(instant: number, timeZone: string): WallClock {
  const parts: Record<string, number> = {}
  for (const part of formatterFor(timeZone).formatToParts(instant)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value)
  }
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts
  return { year, month, day, hour, minute, second }
}

/** How far the zone's clock is ahead of UTC at `instant`, in milliseconds. */
function offsetAt(instant: number, timeZone: string): number {
  const c = wallClockAt(instant, timeZone)
  const wholeSecond = instant - (((instant % 1000) + 1000) % 1000)
  return Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute, c.second) - wholeSecond
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/** `2026-11-20T16:30:00Z` in Europe/Paris → `2026-11-20T17:30`. */
export function wallClockOf(iso: string, timeZone: string): string {
  const c = wallClockAt(Date.parse(iso), timeZone)
  return `${pad(c.year, 4)}-${pad(c.month)}-${pad(c.day)}T${pad(c.hour)}:${pad(c.minute)}`
}

/**
 * `2026-11-20T17:30` in Europe/Paris → `2026-11-20T16:30:00.000Z`; undefined for text that is not
 * such a time. The zone's offset is read at a first guess, then at the corrected instant, so a
 * time near a daylight-saving change gets the offset in force then.
 */
export function instantOf(wallClock: string, timeZone: string): string | undefined {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d))?$/.exec(wallClock)
  if (!m) return undefined
  const [year, month, day, hour, minute, second] = m.slice(1).map((part) => Number(part ?? 0)) as number[]
  const asUtc = Date.UTC(year ?? 0, (month ?? 1) - 1, day, hour, minute, second)
  const guess = asUtc - offsetAt(asUtc, timeZone)
  return new Date(asUtc - offsetAt(guess, timeZone)).toISOString()
}
