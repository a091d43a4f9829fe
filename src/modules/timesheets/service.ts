import { Readable } from 'node:stream'
import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Executor } from '../../db/types.js'
import { addDays, daysBetween, isoWeekMonday } from '../../lib/dates.js'
import { hoursOfMs } from '../sessions/hours.js'
import {
  countTimesheetEntries,
  type DayKey,
  dayTotals,
  operatorDetails,
  type TimesheetFilters,
} from './repository.js'
import { CSV_COLUMNS, type ListTimesheetsQuery, MAX_TIMESHEET_DAYS, type TimesheetEntry } from './schemas.js'

export type GroupBy = 'day' | 'week'

export interface TimesheetQuery extends TimesheetFilters {
  groupBy: GroupBy
}

/** One entry before rounding: exact milliseconds, so a week is a sum of its days' exact sums. */
export interface TimesheetTotals {
  operator_id: string
  operator_ident: string
  employee_id: string | null
  name: string | null
  date: string
  approvedMs: number
  pendingMs: number
  rejectedMs: number
  sessions: number
  openSessions: number
}

/** The cursor of a timesheet page: the last entry's operator ident and date. */
export type TimesheetKey = [operatorIdent: string, date: string]

export function isTimesheetKey(value: unknown): value is TimesheetKey {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'string' &&
    /^\d{4}-\d{2}-\d{2}$/.test(value[1])
  )
}

/** The query's rules beyond its schema: `to` not before `from`, at most 366 days. */
export function timesheetQuery(query: ListTimesheetsQuery): TimesheetQuery {
  const days = daysBetween(query.from, query.to) + 1
  if (days < 1) throw errors.invalidDateRange('to', 'to must not be before from.')
  if (days > MAX_TIMESHEET_DAYS) {
    throw errors.invalidDateRange(
      'to',
      `A timesheet spans at most ${MAX_TIMESHEET_DAYS} days (this one ${days}).`,
    )
  }
  return {
    from: query.from,
    to: query.to,
    operator_id: query.operator_id,
    location_id: query.location_id,
    groupBy: query.group_by ?? 'day',
  }
}

/**
 * Every entry of a timesheet after `after` (a page's cursor), in order (operator_ident, date),
 * read from the database in keyset batches of `batch` day groups: memory holds one batch whatever
 * the range, and no connection is held between batches. Week entries are folded from the day
 * groups, which arrive in order, so a week's days are consecutive.
 */
export async function* timesheetTotals(
  db: Executor,
  auth: AuthContext,
  query: TimesheetQuery,
  after: TimesheetKey | undefined,
  batch: number,
): AsyncGenerator<TimesheetTotals, void, undefined> {
  const step = query.groupBy === 'week' ? 7 : 1
  let start: DayKey | undefined = after && { operatorIdent: after[0], date: addDays(after[1], step) }
  let current: TimesheetTotals | undefined
  for (;;) {
    const rows = await dayTotals(db, auth, query, start, batch)
    const details = await operatorDetails(db, auth, [...new Set(rows.map((r) => r.operator_id))])
    for (const row of rows) {
      const date = query.groupBy === 'week' ? isoWeekMonday(row.work_date) : row.work_date
      if (current && current.operator_id === row.operator_id && current.date === date) {
        current.approvedMs += row.approved_ms
        current.pendingMs += row.pending_ms
        current.rejectedMs += row.rejected_ms
        current.sessions += row.sessions
        current.openSessions += row.open_sessions
        continue
      }
      if (current) yield current
      const operator = details.get(row.operator_id)
      current = {
        operator_id: row.operator_id,
        operator_ident: row.operator_ident,
        employee_id: operator?.employee_id ?? null,
        name: operator?.name ?? null,
        date,
        approvedMs: row.approved_ms,
        pendingMs: row.pending_ms,
        rejectedMs: row.rejected_ms,
        sessions: row.sessions,
        openSessions: row.open_sessions,
      }
    }
    const last = rows[rows.length - 1]
    if (rows.length < batch || !last) break
    start = { operatorIdent: last.operator_ident, date: addDays(last.work_date, 1) }
  }
  if (current) yield current
}

/** The first `take` entries after `after`: one page. */
export async function timesheetPage(
  db: Executor,
  auth: AuthContext,
  query: TimesheetQuery,
  after: TimesheetKey | undefined,
  take: number,
): Promise<TimesheetTotals[]> {
  const entries: TimesheetTotals[] = []
  // A week holds up to 7 day groups; one more entry than asked tells whether there is more.
  const batch = query.groupBy === 'week' ? take * 7 : take
  for await (const entry of timesheetTotals(db, auth, query, after, batch)) {
    entries.push(entry)
    if (entries.length >= take) break
  }
  return entries
}

export const timesheetKeyOf = (entry: TimesheetTotals): TimesheetKey => [entry.operator_ident, entry.date]

/** The API object: each sum rounded half-up to 2 decimals, once. */
export function toTimesheetEntry(entry: TimesheetTotals): TimesheetEntry {
  return {
    object: 'timesheet_entry',
    operator_id: entry.operator_id,
    operator_ident: entry.operator_ident,
    employee_id: entry.employee_id,
    name: entry.name,
    date: entry.date,
    hours: hoursOfMs(entry.approvedMs),
    pending_hours: hoursOfMs(entry.pendingMs),
    rejected_hours: hoursOfMs(entry.rejectedMs),
    sessions: entry.sessions,
    open_sessions: entry.openSessions,
  }
}

/** Characters that make a spreadsheet read a cell as a formula (or hide where it starts). */
const FORMULA_START = /^[=+\-@\t\r]/

/**
 * One CSV cell: a cell that begins with `=`, `+`, `-`, `@`, tab or carriage return is prefixed
 * with `'` so spreadsheets show it as text instead of running it; then RFC 4180 quoting (a cell
 * with a comma, a quote or a line break is quoted, its quotes doubled).
 */
export function csvCell(value: string | number | null): string {
  if (value === null) return ''
  let text = String(value)
  if (FORMULA_START.test(text)) text = `'${text}`
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export function csvRow(cells: ReadonlyArray<string | number | null>): string {
  return `${cells.map(csvCell).join(',')}\r\n`
}

function csvLine(entry: TimesheetEntry): string {
  return csvRow([
    entry.operator_ident,
    entry.employee_id,
    entry.name,
    entry.date,
    entry.hours.toFixed(2),
    entry.pending_hours.toFixed(2),
    entry.rejected_hours.toFixed(2),
    entry.sessions,
    entry.open_sessions,
  ])
}

/** Rows per database batch of a CSV, and the size of the chunks written to the socket. */
export const CSV_BATCH = 2000
const CSV_CHUNK_CHARS = 64 * 1024

/**
 * The whole timesheet as CSV (header row, then one line per entry, CRLF), as a stream that reads
 * the database batch by batch as the client takes the bytes (backpressure): memory stays flat
 * whatever the range. The first batch is read before this resolves, so a failure there is still
 * an ordinary error answer; a failure later can only cut the stream short.
 */
export async function timesheetCsv(
  db: Executor,
  auth: AuthContext,
  query: TimesheetQuery,
  batch = CSV_BATCH,
): Promise<{ rows: number; stream: Readable }> {
  // For a download's progress only: sessions written while it streams may change the real count.
  const rows = await countTimesheetEntries(db, auth, query, query.groupBy)
  const entries = timesheetTotals(db, auth, query, undefined, batch)
  const first = await entries.next()
  async function* chunks(): AsyncGenerator<string> {
    let chunk = csvRow(CSV_COLUMNS)
    if (!first.done) {
      chunk += csvLine(toTimesheetEntry(first.value))
      for await (const entry of entries) {
        chunk += csvLine(toTimesheetEntry(entry))
        if (chunk.length >= CSV_CHUNK_CHARS) {
          yield chunk
          chunk = ''
        }
      }
    }
    if (chunk.length > 0) yield chunk
  }
  return { rows, stream: Readable.from(chunks(), { objectMode: false, encoding: 'utf8' }) }
}

/** Whether the client asked for CSV: `text/csv` listed in Accept before `application/json`. */
export function wantsCsv(accept: string | undefined): boolean {
  if (accept === undefined) return false
  for (const part of accept.split(',')) {
    const type = part.split(';')[0]?.trim().toLowerCase()
    if (type === 'text/csv') return true
    if (type === 'application/json' || type === '*/*' || type === 'application/*') return false
  }
  return false
}
