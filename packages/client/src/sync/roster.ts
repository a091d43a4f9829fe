import { type CsvError, parse } from 'csv-parse/sync'

/** One validated roster row. `line` is the line of the file where the row starts (1 is the header). */
export interface RosterRow {
  line: number
  ident: string
  name: string | null
  employee_id: string | null
  active: boolean
}

export interface RosterIssue {
  line: number
  message: string
}

/** The roster cannot be used; `issues` names every problem found, each with its line. */
export class RosterError extends Error {
  constructor(readonly issues: RosterIssue[]) {
    super(issues.map((issue) => `line ${issue.line}: ${issue.message}`).join('\n'))
    this.name = 'RosterError'
  }
}

/** The limits of the service (docs/operators.md), counted in characters as the service counts them. */
export const LIMITS = { ident: 64, name: 200, employee_id: 128 } as const

const REQUIRED_COLUMNS = ['ident', 'name', 'employee_id'] as const
const COLUMNS = [...REQUIRED_COLUMNS, 'active'] as const
type Column = (typeof COLUMNS)[number]
const EXPECTED_HEADER = 'ident,name,employee_id[,active]'

const TRUE_VALUES = new Set(['true', '1', 'yes'])
const FALSE_VALUES = new Set(['false', '0', 'no'])

/** Characters as the service counts them (code points, as JSON Schema's maxLength does). */
export function characters(value: string): number {
  let count = 0
  for (const _ of value) count++
  return count
}

/**
 * Parses and validates a roster CSV: a header row naming the columns `ident`, `name`,
 * `employee_id` and optionally `active` (any order, any case), then one row per operator.
 * Empty `name` / `employee_id` mean null; `active` is true/false/1/0/yes/no (any case), empty or
 * absent meaning true. Blank lines are skipped. Every problem is collected and thrown together as a
 * RosterError naming its line; a CSV syntax error stops the parse at once (its line is given too).
 */
export function parseRoster(input: string | Buffer): RosterRow[] {
  // Line breaks are normalised first, so the parser's line count is the one an editor shows
  // (csv-parse counts a CRLF inside a quoted field as two lines).
  const text = (typeof input === 'string' ? input : input.toString('utf8')).replace(/\r\n?/g, '\n')
  const endLines: number[] = []
  let records: string[][]
  try {
    records = parse(text, {
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      on_record: (record: string[], context) => {
        endLines.push(context.lines)
        return record
      },
    })
  } catch (error) {
    throw new RosterError([csvIssue(error as CsvError, text, endLines.at(-1) ?? 0)])
  }

  const header = records[0]
  if (header === undefined) {
    throw new RosterError([
      { line: 1, message: `the file is empty; a header row ${EXPECTED_HEADER} is required` },
    ])
  }
  const headerLine = startLine(header, endLines[0] ?? 1)
  const columns = readHeader(header, headerLine)

  const issues: RosterIssue[] = []
  const rows: RosterRow[] = []
  const firstLineOf = new Map<string, number>()
  for (let index = 1; index < records.length; index++) {
    const record = records[index] ?? []
    const line = startLine(record, endLines[index] ?? 0)
    const problems: string[] = []
    if (record.length !== columns.length) {
      issues.push({
        line,
        message: `expected ${columns.length} fields (${columns.join(',')}), found ${record.length}`,
      })
      continue
    }
    const field = (column: Column): string | undefined => {
      const at = columns.indexOf(column)
      return at === -1 ? undefined : record[at]
    }

    const ident = field('ident') ?? ''
    if (ident === '') problems.push('ident is missing')
    else if (/[\r\n]/.test(ident)) problems.push(`ident ${JSON.stringify(ident)} contains a line break`)
    else if (/^\s|\s$/.test(ident))
      problems.push(`ident ${JSON.stringify(ident)} has leading or trailing spaces`)
    else if (characters(ident) > LIMITS.ident) {
      problems.push(`ident is ${characters(ident)} characters long; at most ${LIMITS.ident} are allowed`)
    }

    const name = field('name') ?? ''
    if (characters(name) > LIMITS.name) {
      problems.push(`name is ${characters(name)} characters long; at most ${LIMITS.name} are allowed`)
    }
    const employeeId = field('employee_id') ?? ''
    if (characters(employeeId) > LIMITS.employee_id) {
      problems.push(
        `employee_id is ${characters(employeeId)} characters long; at most ${LIMITS.employee_id} are allowed`,
      )
    }

    const activeText = field('active')?.trim().toLowerCase() ?? ''
    let active = true
    if (FALSE_VALUES.has(activeText)) active = false
    else if (activeText !== '' && !TRUE_VALUES.has(activeText)) {
      problems.push(`active is ${JSON.stringify(field('active'))}; expected true, false, 1, 0, yes or no`)
    }

    if (ident !== '') {
      const first = firstLineOf.get(ident)
      if (first !== undefined)
        problems.push(`duplicate ident ${JSON.stringify(ident)}, also on line ${first}`)
      else firstLineOf.set(ident, line)
    }

    for (const message of problems) issues.push({ line, message })
    if (problems.length === 0) {
      rows.push({
        line,
        ident,
        name: name === '' ? null : name,
        employee_id: employeeId === '' ? null : employeeId,
        active,
      })
    }
  }
  if (issues.length > 0) throw new RosterError(issues)
  if (rows.length === 0) {
    throw new RosterError([
      {
        line: headerLine,
        message: 'the roster has no rows below the header (refusing to treat everyone as gone)',
      },
    ])
  }
  return rows
}

/** The line a record starts on: its end line less the line breaks inside its (quoted) fields. */
function startLine(record: string[], endLine: number): number {
  let breaks = 0
  for (const value of record) for (const char of value) if (char === '\n') breaks++
  return endLine - breaks
}

function readHeader(header: string[], line: number): Column[] {
  const names = header.map((cell) => cell.trim().toLowerCase())
  const known = names.filter((name): name is Column => (COLUMNS as readonly string[]).includes(name))
  if (known.length === 0) {
    throw new RosterError([
      {
        line,
        message: `missing header: the first row must name the columns ${EXPECTED_HEADER}, found ${JSON.stringify(header.join(','))}`,
      },
    ])
  }
  const problems: string[] = []
  for (const [at, name] of names.entries()) {
    if (!(COLUMNS as readonly string[]).includes(name)) {
      problems.push(`unknown column ${JSON.stringify(header[at])} in the header; expected ${EXPECTED_HEADER}`)
    } else if (names.indexOf(name) !== at) {
      problems.push(`the column ${JSON.stringify(name)} appears twice in the header`)
    }
  }
  for (const required of REQUIRED_COLUMNS) {
    if (!names.includes(required))
      problems.push(`the header lacks the column "${required}"; expected ${EXPECTED_HEADER}`)
  }
  if (problems.length > 0) throw new RosterError(problems.map((message) => ({ line, message })))
  return names as Column[]
}

/** A CSV syntax error, with the line of the record it broke (csv-parse's own message kept). */
function csvIssue(error: CsvError, text: string, lastGoodEndLine: number): RosterIssue {
  const reported = typeof error.lines === 'number' ? error.lines : lastGoodEndLine + 1
  let line = reported
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') {
    // csv-parse reports the end of the file; the record that never closed its quote starts on the
    // first non-blank line after the last good record.
    const lines = text.split('\n')
    line = lastGoodEndLine + 1
    while (line < lines.length && lines[line - 1] === '') line++
  }
  return { line, message: `malformed CSV: ${error.message}` }
}
