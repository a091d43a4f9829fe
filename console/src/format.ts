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
