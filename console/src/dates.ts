/** Calendar dates (`YYYY-MM-DD`, as the API and date inputs take them) of the browser's days. */

export interface DateRange {
  from: string
  to: string
}

const pad = (n: number) => String(n).padStart(2, '0')

/** `YYYY-MM-DD` of a date in the browser's zone. */
export function isoDate(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
}

/** The first and last day of the month `date` is in. */
export function monthOf(date: Date): DateRange {
  return {
    from: isoDate(new Date(date.getFullYear(), date.getMonth(), 1)),
    to: isoDate(new Date(date.getFullYear(), date.getMonth() + 1, 0)),
  }
}

/** `2026-11-30` → `2026-12-01`: calendar arithmetic, free of any zone. */
export function dayAfter(date: string): string {
  const next = new Date(`${date}T00:00:00Z`)
  next.setUTCDate(next.getUTCDate() + 1)
  return next.toISOString().slice(0, 10)
}
