#!/usr/bin/env node
import { createWriteStream, renameSync, rmSync } from 'node:fs'
import { Transform, type Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { Presets, SingleBar } from 'cli-progress'
import { AttendanceClient, type TimesheetCsvParams } from '../client.js'
import { EXIT, isEntryPoint, type Output, runCommand } from '../command.js'
import { describeError } from '../sync/format.js'
import type { TimesheetEntry } from '../types.js'

/**
 * The CSV's columns, in the order of the service's header row (the service's timesheets module has the same
 * list; the help lists these, and test/client/review.test.ts compares the help with a downloaded header).
 */
export const CSV_COLUMNS = [
  'operator_ident',
  'employee_id',
  'name',
  'date',
  'hours',
  'pending_hours',
  'rejected_hours',
  'sessions',
  'open_sessions',
  'regular_hours',
  'overtime_hours',
  'double_time_hours',
  'auto_break_hours',
  'pay_rule_id',
  'flags',
] as const satisfies readonly (keyof TimesheetEntry)[]

/** The header row as the CSV has it, broken after a comma into lines of at most `width`, indented. */
function headerLines(width: number): string {
  const lines = ['']
  CSV_COLUMNS.forEach((column, index) => {
    const cell = index < CSV_COLUMNS.length - 1 ? `${column},` : column
    if (lines[lines.length - 1] !== '' && `  ${lines.at(-1)}${cell}`.length > width) lines.push('')
    lines[lines.length - 1] += cell
  })
  return lines.map((line) => `  ${line}`).join('\n')
}

export const USAGE = `Usage: attendance-export --from <YYYY-MM-DD> --to <YYYY-MM-DD> [options]

Downloads the timesheet of a pay run as CSV, ready for payroll: per operator and work date (or
workweek), the hours approved or not needing review, the pending and rejected hours beside them, and
the pay rule's split into regular, overtime and double time. The header row, every column in order:
${headerLines(100)}

Options:
      --from <date>        first work date, inclusive (required)
      --to <date>          last work date, inclusive, at most 366 days on (required)
  -o, --out <file.csv>     write the CSV there (written to a temporary file, renamed when complete);
                           default: standard output
      --group-by <unit>    day (default) or week: the operator's pay rule's workweek, which begins on
                           its workweek_start (Monday without a rule); date is the week's first day
      --operator-id <id>   one operator only
      --location-id <id>   one location only
      --api-key <key>      API key with timesheets:read (default: $ATTENDANCE_API_KEY)
      --base-url <url>     the service (default: $ATTENDANCE_BASE_URL or http://localhost:8080)
  -h, --help               show this help

Progress goes to standard error (a bar on a terminal). Exit status: 0 done, 1 the download
failed (nothing is left at --out), 2 bad input, 130 interrupted.
`

const DEFAULT_BASE_URL = 'http://localhost:8080'
const DATE = /^\d{4}-\d{2}-\d{2}$/

export interface CliIo {
  stdout: Writable & Output
  stderr: Output
  env: Record<string, string | undefined>
  signal?: AbortSignal
}

class UsageError extends Error {}

interface Options {
  params: TimesheetCsvParams
  out: string | undefined
  apiKey: string
  baseUrl: string
}

function readOptions(argv: string[], env: CliIo['env']): Options | 'help' {
  let values: ReturnType<typeof parse>['values']
  try {
    const parsed = parse(argv)
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument ${parsed.positionals[0]}`)
    values = parsed.values
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  if (values.help) return 'help'
  for (const name of ['from', 'to'] as const) {
    const value = values[name]
    if (value === undefined) throw new UsageError(`--${name} is required`)
    if (!DATE.test(value))
      throw new UsageError(`--${name} must be a date YYYY-MM-DD, got ${JSON.stringify(value)}`)
  }
  const groupBy = values['group-by']
  if (groupBy !== undefined && groupBy !== 'day' && groupBy !== 'week') {
    throw new UsageError(`--group-by must be day or week, got ${JSON.stringify(groupBy)}`)
  }
  const apiKey = values['api-key'] ?? env.ATTENDANCE_API_KEY
  if (apiKey === undefined || apiKey === '')
    throw new UsageError('no API key: pass --api-key or set ATTENDANCE_API_KEY')
  const baseUrl = values['base-url'] ?? (env.ATTENDANCE_BASE_URL || DEFAULT_BASE_URL)
  if (!/^https?:\/\//.test(baseUrl))
    throw new UsageError(`--base-url must be an http(s) URL, got ${JSON.stringify(baseUrl)}`)
  return {
    params: {
      from: values.from as string,
      to: values.to as string,
      ...(groupBy === undefined ? {} : { group_by: groupBy }),
      ...(values['operator-id'] === undefined ? {} : { operator_id: values['operator-id'] }),
      ...(values['location-id'] === undefined ? {} : { location_id: values['location-id'] }),
    },
    out: values.out,
    apiKey,
    baseUrl,
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      out: { type: 'string', short: 'o' },
      'group-by': { type: 'string' },
      'operator-id': { type: 'string' },
      'location-id': { type: 'string' },
      'api-key': { type: 'string' },
      'base-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}

/**
 * Counts the CSV's data rows as the bytes pass (the header row is not one; a line break inside a
 * quoted cell is not a row end), and passes the bytes on unchanged. Rows, not records: the progress
 * (against `X-Total-Count`, which counts data rows) and the final count say the same number.
 */
class RowCounter extends Transform {
  rows = 0
  bytes = 0
  private header = true
  private quoted = false

  constructor(private readonly onRows: (rows: number, bytes: number) => void) {
    super()
  }

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: (error?: Error | null, data?: Buffer) => void,
  ) {
    for (const byte of chunk) {
      if (byte === 0x22) this.quoted = !this.quoted
      else if (byte === 0x0a && !this.quoted) {
        if (this.header) this.header = false
        else this.rows++
      }
    }
    this.bytes += chunk.length
    this.onRows(this.rows, this.bytes)
    done(null, chunk)
  }
}

interface Progress {
  update(rows: number, bytes: number): void
  stop(rows: number, bytes: number): void
}

/** A bar on a terminal (rows against the announced total); otherwise a line every 5 s and at the end. */
function progress(stderr: Output, total: number | undefined): Progress {
  if (stderr.isTTY === true && typeof (stderr as Partial<NodeJS.WriteStream>).cursorTo === 'function') {
    const bar = new SingleBar(
      {
        stream: stderr as NodeJS.WriteStream,
        format:
          total === undefined
            ? 'attendance-export {value} rows | {kib} KiB'
            : 'attendance-export [{bar}] {percentage}% | {value}/{total} rows | {kib} KiB | ETA {eta_formatted}',
        hideCursor: true,
      },
      Presets.shades_classic,
    )
    bar.start(total ?? 0, 0, { kib: 0 })
    return {
      update: (rows, bytes) => bar.update(rows, { kib: Math.round(bytes / 1024) }),
      stop: (rows, bytes) => {
        bar.update(rows, { kib: Math.round(bytes / 1024) })
        bar.stop()
      },
    }
  }
  let lastAt = Date.now()
  const line = (rows: number, bytes: number) =>
    `progress: ${rows}${total === undefined ? '' : `/${total}`} rows, ${Math.round(bytes / 1024)} KiB\n`
  return {
    update: (rows, bytes) => {
      if (Date.now() - lastAt >= 5000) {
        lastAt = Date.now()
        stderr.write(line(rows, bytes))
      }
    },
    stop: (rows, bytes) => stderr.write(line(rows, bytes)),
  }
}

/** Runs the command; resolves with the exit status. Never throws for an expected failure. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  let options: Options | 'help'
  try {
    options = readOptions(argv, io.env)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.stderr.write(`attendance-export: ${error.message}\n\n${USAGE}`)
    return EXIT.badInput
  }
  if (options === 'help') {
    io.stdout.write(USAGE)
    return EXIT.ok
  }
  let client: AttendanceClient
  try {
    client = new AttendanceClient({ apiKey: options.apiKey, baseUrl: options.baseUrl })
  } catch (error) {
    io.stderr.write(`attendance-export: ${(error as Error).message}\n`)
    return EXIT.badInput
  }

  const { from, to } = options.params
  const temporary = options.out === undefined ? undefined : `${options.out}.part`
  try {
    const download = await client.timesheets.csv(options.params, { signal: io.signal })
    const bar = progress(io.stderr, download.totalRows)
    const counter = new RowCounter((rows, bytes) => bar.update(rows, bytes))
    const sink = temporary === undefined ? io.stdout : createWriteStream(temporary)
    await pipeline(download.body, counter, sink, { signal: io.signal, end: temporary !== undefined })
    bar.stop(counter.rows, counter.bytes)
    if (temporary !== undefined && options.out !== undefined) renameSync(temporary, options.out)
    io.stderr.write(
      `attendance-export: ${counter.rows} rows (${from} to ${to})${options.out === undefined ? '' : ` written to ${options.out}`}.\n`,
    )
    return EXIT.ok
  } catch (error) {
    if (temporary !== undefined) rmSync(temporary, { force: true })
    if (io.signal?.aborted) {
      io.stderr.write('attendance-export: interrupted; nothing was written.\n')
      return EXIT.interrupted
    }
    io.stderr.write(`attendance-export: the download failed: ${describeError(error)}\n`)
    return EXIT.failed
  }
}

/** Runs the command in this process: signals, exit code. The `attendance-export` bin calls this. */
export function run(): void {
  runCommand('attendance-export', main)
}

if (isEntryPoint(import.meta.url)) run()
