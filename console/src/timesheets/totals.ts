import type { AttendanceClient, TimesheetCsvParams } from '../../../packages/client/src/client.js'
import { firstItems } from '../api.js'

/** A timesheet's rows, without paging: the table pages them, the totals and the CSV take them all. */
export type TimesheetQuery = TimesheetCsvParams

/** Totals read past this many rows would keep a manager waiting: they say they are partial instead. */
const TOTAL_ROWS_READ = 10_000

/** The columns of hours, in the table's order: a total adds up each. */
export const HOUR_FIELDS = [
  'hours',
  'regular_hours',
  'overtime_hours',
  'double_time_hours',
  'auto_break_hours',
  'pending_hours',
  'rejected_hours',
] as const
export type HourField = (typeof HOUR_FIELDS)[number]

export interface TimesheetTotals extends Record<HourField, number> {
  sessions: number
  /** Rows added up. */
  rows: number
  /** Whether they are every row of the query; false past TOTAL_ROWS_READ rows. */
  complete: boolean
}

/**
 * The totals of a whole timesheet query, every page of it, not of the rows a table shows. Each
 * entry's hours are the API's, rounded to hundredths; they are added in hundredths, so the total is
 * exact to the cent, as the CSV's column sums are.
 */
export async function timesheetTotals(
  api: AttendanceClient,
  query: TimesheetQuery,
): Promise<TimesheetTotals> {
  const { items, complete } = await firstItems(api.timesheets, query, TOTAL_ROWS_READ)
  const cents = (field: HourField) =>
    items.reduce((total, entry) => total + Math.round(entry[field] * 100), 0) / 100
  return {
    ...(Object.fromEntries(HOUR_FIELDS.map((field) => [field, cents(field)])) as Record<HourField, number>),
    sessions: items.reduce((total, entry) => total + entry.sessions, 0),
    rows: items.length,
    complete,
  }
}
