#!/usr/bin/env node
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Presets, SingleBar } from 'cli-progress'
import { AttendanceClient } from '../client.js'
import { EXIT, isEntryPoint, type Output, runCommand } from '../command.js'
import { type ApplyProgress, applyPlan } from './apply.js'
import { describeError, formatFailure, formatPlan, formatSummary } from './format.js'
import { type CurrentOperator, planSync } from './plan.js'
import { parseRoster, RosterError } from './roster.js'

export const USAGE = `Usage: attendance-sync [options] <roster.csv>

Mirrors an HR roster into the attendance service. The roster is a CSV file with the header
ident,name,employee_id[,active] (active: true/false/1/0/yes/no, default true; an empty name or
employee_id means none). Operators are matched by ident: missing ones are created, changed names
and employee ids are updated, operators marked inactive or absent from the roster are deactivated,
and returned ones are reactivated. The plan is computed from the service's current state each
time, so running it again is safe and finishes an interrupted run.

Options:
  -f, --file <path>      the roster CSV (or give it as the argument)
      --api-key <key>    API key (default: $ATTENDANCE_API_KEY)
      --base-url <url>   the service (default: $ATTENDANCE_BASE_URL or http://localhost:8080)
      --dry-run          print the planned changes as a table and change nothing
      --no-deactivate    keep operators that are absent from the roster
      --concurrency <n>  requests in flight, 1 to 100 (default 8)
  -h, --help             show this help

Exit status: 0 done, 1 some operation failed (each is listed) or the service could not be read,
2 bad input (nothing was changed), 130 interrupted.
`

const DEFAULT_BASE_URL = 'http://localhost:8080'
const DEFAULT_CONCURRENCY = 8
const MAX_CONCURRENCY = 100
const MAX_ISSUES_SHOWN = 50

export interface CliIo {
  stdout: Output
  stderr: Output
  env: Record<string, string | undefined>
  /** Aborted on SIGINT/SIGTERM: no further change starts, those in flight finish. */
  signal?: AbortSignal
}

class UsageError extends Error {}

interface Options {
  file: string
  apiKey: string
  baseUrl: string
  dryRun: boolean
  deactivate: boolean
  concurrency: number
}

function readOptions(argv: string[], env: CliIo['env']): Options | 'help' {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  if (values.help) return 'help'
  if (positionals.length > 1) throw new UsageError(`expected one roster file, got ${positionals.length}`)
  if (values.file !== undefined && positionals.length > 0) {
    throw new UsageError('give the roster file either with --file or as the argument, not both')
  }
  const file = values.file ?? positionals[0]
  if (file === undefined || file === '')
    throw new UsageError('no roster file: pass --file <path> or the path')

  const apiKey = values['api-key'] ?? env.ATTENDANCE_API_KEY
  if (apiKey === undefined || apiKey === '') {
    throw new UsageError('no API key: pass --api-key or set ATTENDANCE_API_KEY')
  }
  const baseUrl = values['base-url'] ?? (env.ATTENDANCE_BASE_URL || DEFAULT_BASE_URL)
  let url: URL | undefined
  try {
    url = new URL(baseUrl)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`--base-url must be an http(s) URL, got ${JSON.stringify(baseUrl)}`)
  }

  let concurrency = DEFAULT_CONCURRENCY
  if (values.concurrency !== undefined) {
    concurrency = Number(values.concurrency)
    if (!/^\d+$/.test(values.concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
      throw new UsageError(
        `--concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, got ${JSON.stringify(values.concurrency)}`,
      )
    }
  }
  return {
    file,
    apiKey,
    baseUrl,
    dryRun: values['dry-run'] ?? false,
    deactivate: !(values['no-deactivate'] ?? false),
    concurrency,
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      file: { type: 'string', short: 'f' },
      'api-key': { type: 'string' },
      'base-url': { type: 'string' },
      'dry-run': { type: 'boolean' },
      'no-deactivate': { type: 'boolean' },
      concurrency: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}

interface ProgressReporter {
  update(progress: ApplyProgress): void
  stop(): void
}

/** A bar on a terminal; otherwise a plain line at each tenth of the work and at least every 5 s. */
function progressReporter(stderr: Output, total: number): ProgressReporter {
  if (stderr.isTTY === true && isWriteStream(stderr)) {
    const bar = new SingleBar(
      {
        stream: stderr,
        format:
          'attendance-sync [{bar}] {percentage}% | {value}/{total} | failed {failed} | ETA {eta_formatted}',
        hideCursor: true,
        etaBuffer: 200,
      },
      Presets.shades_classic,
    )
    bar.start(total, 0, { failed: 0 })
    return {
      update: (progress) => bar.update(progress.done, { failed: progress.failed }),
      stop: () => bar.stop(),
    }
  }
  let lastTenth = 0
  let lastAt = Date.now()
  return {
    update: ({ done, failed }) => {
      const tenth = Math.floor((done * 10) / total)
      const now = Date.now()
      if (tenth > lastTenth || now - lastAt >= 5000) {
        lastTenth = tenth
        lastAt = now
        stderr.write(`progress: ${done}/${total} (${Math.floor((done * 100) / total)}%), ${failed} failed\n`)
      }
    },
    stop: () => undefined,
  }
}

function isWriteStream(output: Output): output is NodeJS.WriteStream {
  return typeof (output as Partial<NodeJS.WriteStream>).cursorTo === 'function'
}

/** Runs the command; resolves with the exit status. Never throws for an expected failure. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  let options: Options | 'help'
  try {
    options = readOptions(argv, io.env)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.stderr.write(`attendance-sync: ${error.message}\n\n${USAGE}`)
    return EXIT.badInput
  }
  if (options === 'help') {
    io.stdout.write(USAGE)
    return EXIT.ok
  }

  let text: Buffer
  try {
    text = readFileSync(options.file)
  } catch (error) {
    io.stderr.write(`attendance-sync: cannot read the roster ${options.file}: ${(error as Error).message}\n`)
    return EXIT.badInput
  }
  let rows: ReturnType<typeof parseRoster>
  try {
    rows = parseRoster(text)
  } catch (error) {
    if (!(error instanceof RosterError)) throw error
    const shown = error.issues.slice(0, MAX_ISSUES_SHOWN)
    const more = error.issues.length - shown.length
    io.stderr.write(
      `attendance-sync: ${options.file} is not a valid roster; nothing was changed.\n` +
        shown.map((issue) => `${options.file}: line ${issue.line}: ${issue.message}\n`).join('') +
        (more > 0 ? `… and ${more} more\n` : ''),
    )
    return EXIT.badInput
  }

  let client: AttendanceClient
  try {
    client = new AttendanceClient({ apiKey: options.apiKey, baseUrl: options.baseUrl })
  } catch (error) {
    // The client checks the key's form (sk_test_… or sk_live_…) before any request.
    io.stderr.write(`attendance-sync: ${(error as Error).message}\n`)
    return EXIT.badInput
  }
  const operators: CurrentOperator[] = []
  try {
    for await (const operator of client.operators.iterate({ limit: 200 })) operators.push(operator)
  } catch (error) {
    io.stderr.write(
      `attendance-sync: cannot read the operators of ${options.baseUrl}: ${describeError(error)}; nothing was changed.\n`,
    )
    return EXIT.failed
  }

  const plan = planSync(rows, operators, { deactivateMissing: options.deactivate })
  if (options.dryRun) {
    io.stdout.write(formatPlan(plan))
    return EXIT.ok
  }

  const { counts } = plan
  io.stderr.write(
    `attendance-sync: ${rows.length} roster rows, ${operators.length} operators in the service: ` +
      `${plan.actions.length} changes to make (create ${counts.create}, update ${counts.update}, ` +
      `reactivate ${counts.reactivate}, deactivate ${counts.deactivate}).\n`,
  )
  const progress = plan.actions.length > 0 ? progressReporter(io.stderr, plan.actions.length) : undefined
  const result = await applyPlan(client.operators, plan.actions, {
    concurrency: options.concurrency,
    onProgress: (p) => progress?.update(p),
    signal: io.signal,
  })
  progress?.stop()

  for (const failure of result.failures) io.stderr.write(`${formatFailure(failure)}\n`)
  if (result.notStarted > 0) {
    io.stderr.write(
      `attendance-sync: interrupted; ${result.notStarted} changes were not made. Run it again to finish.\n`,
    )
  }
  io.stdout.write(formatSummary(plan, result))
  if (result.failures.length > 0) return EXIT.failed
  return result.notStarted > 0 ? EXIT.interrupted : EXIT.ok
}

/** Runs the command in this process: signals, exit code. The `attendance-sync` bin calls this. */
export function run(): void {
  runCommand('attendance-sync', main, {
    interruptNotice: 'stopping after the requests in flight (again to quit at once)',
  })
}

if (isEntryPoint(import.meta.url)) run()
