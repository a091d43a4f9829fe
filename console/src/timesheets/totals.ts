import type { AttendanceClient, TimesheetCsvParams } from '../../../packages/client/src/client.js'
import { firstItems } from '../api.js'

/** A timesheet's rows, without paging: the table pages them, the totals and the CSV take them all. */
export type TimesheetQuery = TimesheetCsvParams

/** Totals read past this many rows would keep a manager waiting: they say they are partial instead. */
const TOTAL_ROWS_READ = 10_000

export interface TimesheetTotals {
  hours: number
  pending_hours: number
  rejected_hours: number
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
  const cents = (field: 'hours' | 'pending_hours' | 'rejected_hours') =>
    items.reduce((total, entry) => total + Math.round(entry[field] * 100), 0) / 100
  return {
    hours: cents('hours'),
    pending_hours: cents('pending_hours'),
    rejected_hours: cents('rejected_hours'),
    sessions: items.reduce((total, entry) => total + entry.sessions, 0),
    rows: items.length,
    complete,
  }
}
