import type { Session } from '../../packages/client/src/client.js'
import { formatterPerZone } from './zoned-time.js'

/** Dates, numbers and counts as a manager reads them. */

const localTimeFormat = formatterPerZone('en-GB', {
  year: 'numeric',
  month: 'short',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  timeZoneName: 'short',
})

/** An instant as wall-clock time in `timeZone` (a location's zone), with the zone named. */
export function localTime(iso: string, timeZone = 'UTC'): string {
  return localTimeFormat(timeZone).format(new Date(iso))
}

const clockTimeFormat = formatterPerZone('en-GB', {
  hour: '2-digit',
  minute: '2-digit',
  timeZoneName: 'short',
})

/** The time of day of an instant in `timeZone`, with the zone named: "04:16 CET". */
export function clockTime(iso: string, timeZone: string): string {
  return clockTimeFormat(timeZone).format(new Date(iso))
}

/**
 * The browser's own zone: where an instant that belongs to no location (a delivery's, a pay
 * period's close) is shown, its zone named all the same.
 */
export const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone

const calendarDateFormat = new Intl.DateTimeFormat('en-GB', {
  weekday: 'short',
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
})

/**
 * A calendar date (`2026-10-20`, a work date: a day, in no zone) as words: "Tue 20 Oct 2026", its
 * parts joined by spaces whatever punctuation the browser's date data puts between them.
 */
export function calendarDate(date: string): string {
  return calendarDateFormat
    .formatToParts(new Date(`${date}T00:00:00Z`))
    .filter((part) => part.type !== 'literal')
    .map((part) => part.value)
    .join(' ')
}

export function hours(value: number | null): string {
  return value === null ? '—' : `${value.toFixed(2)} h`
}

/**
 * A number of things, in the singular for one: `count(1, 'session')` is "1 session",
 * `count(2, 'delivery', 'deliveries')` "2 deliveries". Every count the console shows goes through it.
 */
export function count(n: number, one: string, other = `${one}s`): string {
  return `${n.toLocaleString('en-GB')} ${n === 1 ? one : other}`
}

/** `manual_api_edit` → `manual api edit`: codes without words of their own below. */
export function words(code: string | null): string {
  return code === null ? '—' : code.replaceAll('_', ' ')
}

/** How a session came to be flagged, in a manager's words (docs/attendance.md, "Flags"). */
const FLAG_REASONS: Record<string, string> = {
  manual_api_entry: 'entered by hand',
  manual_api_edit: 'edited by hand',
  max_shift_exceeded: 'forgotten check-out (closed after 16 hours)',
}

export function flagReason(code: string | null): string {
  return code === null ? '—' : (FLAG_REASONS[code] ?? words(code))
}

/**
 * A session's check-out, its time shown by `time`. A completed session without one is a forgotten
 * check-out that the service closed after 16 hours: it is not open, and never said to be.
 */
export function checkOutText(
  session: Pick<Session, 'check_out' | 'status'>,
  time: (iso: string) => string,
): string {
  if (session.check_out) return time(session.check_out.time)
  return session.status === 'open' ? 'still open' : 'no check-out'
}
