import { Readable } from 'node:stream'
import { CSV_COLUMNS, type TimesheetEntry } from './schemas.js'

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
    entry.regular_hours.toFixed(2),
    entry.overtime_hours.toFixed(2),
    entry.double_time_hours.toFixed(2),
    entry.auto_break_hours.toFixed(2),
    entry.pay_rule_id,
    entry.flags.join(';'),
  ])
}

/** The size of the chunks written to the socket. */
const CSV_CHUNK_CHARS = 64 * 1024

/**
 * The CSV of `entries` (header row, then one line per entry, CRLF), as a stream that takes the
 * entries as the client takes the bytes (backpressure). The first entry is taken before this
 * resolves, so a failure there is still an ordinary error answer; a failure later can only cut the
 * stream short.
 */
export async function timesheetCsvStream(entries: AsyncGenerator<TimesheetEntry>): Promise<Readable> {
  const first = await entries.next()
  async function* chunks(): AsyncGenerator<string> {
    let chunk = csvRow(CSV_COLUMNS)
    if (!first.done) {
      chunk += csvLine(first.value)
      for await (const entry of entries) {
        chunk += csvLine(entry)
        if (chunk.length >= CSV_CHUNK_CHARS) {
          yield chunk
          chunk = ''
        }
      }
    }
    if (chunk.length > 0) yield chunk
  }
  return Readable.from(chunks(), { objectMode: false, encoding: 'utf8' })
}
