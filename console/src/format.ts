/** Dates and numbers as a manager reads them. */

const formatters = new Map<string, Intl.DateTimeFormat>()

/** An instant as wall-clock time in `timeZone` (a location's zone), with the zone named. */
export function localTime(iso: string, timeZone = 'UTC'): string {
  let formatter = formatters.get(timeZone)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      year: 'numeric',
      month: 'short',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
    })
    formatters.set(timeZone, formatter)
  }
  return formatter.format(new Date(iso))
}

export function hours(value: number | null): string {
  return value === null ? '—' : `${value.toFixed(2)} h`
}

/** `manual_api_edit` → `manual api edit`. */
export function words(code: string | null): string {
  return code === null ? '—' : code.replaceAll('_', ' ')
}
