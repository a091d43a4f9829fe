/**
 * Throughput by number of API processes on one PostgreSQL database: the run of
 * test/scale-out.test.ts, longer and measured. Not a test: `npm run bench:scale-out`.
 *
 * Set-up: a PostgreSQL schema of its own (dropped afterwards), three API processes (WORKER=off,
 * rate limiting on through Redis with a limit the load never reaches) and one `cli worker`, started
 * as test/helpers/cluster.ts starts them; a webhook receiver subscribed to `*`, so the worker
 * delivers every event of the load beside it; a location, a device and BENCH_OPERATORS operators.
 *
 * Then per kind (`POST /v1/sessions`, then `POST /v1/scans`): a warm-up of BENCH_WARMUP_SECONDS on
 * every process (not counted: the first requests of a process run cold code), then BENCH_ROUNDS
 * rounds; in each, the load
 * runs BENCH_SECONDS on the first 1, 2 and 3 API processes in turn (the order rotates from round to
 * round), each time with BENCH_CONNECTIONS connections in all, split evenly over the processes, and
 * after the worker has delivered everything of the previous load. Every request carries an
 * `Idempotency-Key` and a body of its own (sessions: an operator and a day of their own; scans: each
 * operator's scans a minute apart, checking it in and out). Reported: each count's creates/s per
 * round and median, the median over one process's, and the CPU time of the loaded API processes per
 * create (steadier than rates on a shared machine). Any non-2xx answer, socket error or timeout
 * makes the run invalid (exit code 1).
 *
 *   BENCH_ROUNDS          default 3
 *   BENCH_SECONDS         seconds per load, default 10
 *   BENCH_WARMUP_SECONDS  default 3 (0: none)
 *   BENCH_CONNECTIONS     default 20
 *   BENCH_OPERATORS       default 200
 *   BENCH_PROCESSES       the API process counts, default `1,2,3`
 *   BENCH_ENTRY           `src` (default: through tsx, as the tests start it) or `dist` (after
 *                         `npm run build`; what `npm start` runs)
 *   BENCH_POSTGRES_URL    default TEST_POSTGRES_URL or postgres://root@127.0.0.1:5432/test
 *   BENCH_REDIS_URL       default TEST_REDIS_URL or redis://127.0.0.1:6379
 */
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import { openDatabase } from '../src/db/connection.js'
import { createKey } from '../src/modules/keys/service.js'
import { type ApiProcess, type Entry, startApiProcess, startWorkerProcess } from '../test/helpers/cluster.js'
import { killAll } from '../test/helpers/process.js'
import { WebhookReceiver } from '../test/helpers/webhook-receiver.js'
import { cpuTicks, intEnv, MS_PER_TICK, median } from './numbers.js'
import { benchSchema } from './postgres-schema.js'

type Kind = 'sessions' | 'scans'

const ROUNDS = intEnv('BENCH_ROUNDS', 3, 1)
const SECONDS = intEnv('BENCH_SECONDS', 10, 1)
const WARMUP_SECONDS = intEnv('BENCH_WARMUP_SECONDS', 3, 0)
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 20, 1)
const OPERATORS = intEnv('BENCH_OPERATORS', 200, 1)
const COUNTS = (process.env.BENCH_PROCESSES ?? '1,2,3').split(',').map(Number)
const ENTRY: Entry = process.env.BENCH_ENTRY === 'dist' ? 'dist' : 'src'
const POSTGRES_URL =
  process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

if (COUNTS.some((n) => !Number.isInteger(n) || n < 1 || n > CONNECTIONS))
  throw new Error(`BENCH_PROCESSES must be counts from 1 to BENCH_CONNECTIONS: ${COUNTS.join(',')}`)

const DEVICE = 'GATE-1'
const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
const FIRST_DAY = Date.parse('2000-01-03T00:00:00Z')
/** Scans start 12 hours back (never swept as forgotten: that takes 16) and go a minute apart. */
const SCANS_FROM = Date.now() - 12 * HOUR_MS
const SCAN_STEP_MS = 61_000
const RUN_TAG = `scale-${Date.now().toString(36)}`

const log = (message: string) => process.stderr.write(`${message}\n`)
const operatorIdent = (n: number) => `op-${String(n).padStart(5, '0')}`

/** Each request's key and body from a counter shared by every process's load: no two alike. */
const sent: Record<Kind, number> = { sessions: 0, scans: 0 }

function nextRequest(kind: Kind): { key: string; body: string } {
  const i = sent[kind]++
  return { key: `${RUN_TAG}-${kind}-${i}`, body: bodyOf(kind, i) }
}

function bodyOf(kind: Kind, i: number): string {
  const operator = operatorIdent(i % OPERATORS)
  const turn = Math.floor(i / OPERATORS)
  if (kind === 'sessions') {
    const checkIn = FIRST_DAY + turn * DAY_MS + 8 * HOUR_MS
    return JSON.stringify({
      operator_ident: operator,
      device_id: DEVICE,
      check_in: { time: new Date(checkIn).toISOString() },
      check_out: { time: new Date(checkIn + 8 * HOUR_MS).toISOString() },
      break_minutes: 30,
    })
  }
  const time = SCANS_FROM + turn * SCAN_STEP_MS
  if (time > Date.now()) throw new Error('the scans caught up with the clock: fewer rounds or more operators')
  return JSON.stringify({ operator_ident: operator, device_id: DEVICE, time: new Date(time).toISOString() })
}

interface Outcome {
  ok: number
  bad: number
  samples: string[]
  perSecond: number
  /** CPU time of the loaded API processes (all threads) per 201, from /proc: NaN without it. */
  cpuMsPerCreate: number
}

const cpuOf = (apis: ApiProcess[]) => apis.reduce((sum, api) => sum + cpuTicks(api.child.proc.pid), 0)

/** BENCH_CONNECTIONS connections split over `apis` (one autocannon each), for `seconds`. */
async function load(apis: ApiProcess[], secret: string, kind: Kind, seconds = SECONDS): Promise<Outcome> {
  const samples: string[] = []
  const ticksBefore = cpuOf(apis)
  const results = await Promise.all(
    apis.map((api, n) =>
      autocannon({
        url: api.base,
        connections: Math.floor(CONNECTIONS / apis.length) + (n < CONNECTIONS % apis.length ? 1 : 0),
        duration: seconds,
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        requests: [
          {
            method: 'POST',
            path: `/v1/${kind}`,
            setupRequest: (request) => {
              const { key, body } = nextRequest(kind)
              return { ...request, headers: { ...request.headers, 'idempotency-key': key }, body }
            },
            onResponse: (status, body) => {
              if (status !== 201 && samples.length < 3) samples.push(`${status} ${body.slice(0, 300)}`)
            },
          },
        ],
      }),
    ),
  )
  const ok = results.reduce((sum, r) => sum + r['2xx'], 0)
  const bad = results.reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0)
  const elapsed = Math.max(...results.map((r) => r.duration))
  const cpuMsPerCreate = ((cpuOf(apis) - ticksBefore) * MS_PER_TICK) / Math.max(1, ok)
  return { ok, bad, samples, perSecond: ok / elapsed, cpuMsPerCreate }
}

/** Throws (the run is invalid) when any answer was not 201 or any request failed. */
function mustBeClean(kind: Kind, outcome: Outcome): void {
  if (outcome.bad === 0) return
  throw new Error(
    `INVALID RUN: POST /v1/${kind}: ${outcome.bad} non-2xx answers or errors\n` +
      outcome.samples.map((s) => `  sample: ${s}`).join('\n'),
  )
}

/** Until the worker has delivered everything so far: the receiver has had nothing new for a second. */
async function waitDelivered(receiver: WebhookReceiver, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let seen = -1
  while (receiver.requests.length !== seen) {
    if (Date.now() > deadline) {
      log(`  (deliveries still arriving after ${timeoutMs} ms; loading anyway)`)
      return
    }
    seen = receiver.requests.length
    await sleep(1000)
  }
}

async function api(target: ApiProcess, secret: string, path: string, body: unknown): Promise<{ id: string }> {
  const res = await fetch(`${target.base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${text}`)
  return JSON.parse(text) as { id: string }
}

async function main(): Promise<number> {
  const schema = await benchSchema(POSTGRES_URL, `bench_scale_${randomBytes(4).toString('hex')}`)
  const receiver = await WebhookReceiver.start()
  try {
    const options = {
      databaseUrl: schema.url,
      redisUrl: REDIS_URL,
      entry: ENTRY,
      env: { RATE_LIMIT_MAX: '1000000', RATE_LIMIT_WINDOW_MS: '1000' },
    }
    // One start at a time: each is seconds of CPU, and the first migrates the empty schema.
    const apis: ApiProcess[] = []
    for (let n = 0; n < Math.max(...COUNTS); n++) apis.push(await startApiProcess(options))
    await startWorkerProcess(options)
    const { db } = openDatabase(schema.url)
    const secret = (await createKey(db, { account: 'bench', mode: 'test' }).finally(() => db.destroy()))
      .secret
    const first = apis[0] as ApiProcess
    await api(first, secret, '/v1/webhook-endpoints', { url: receiver.url('/hook'), enabled_events: ['*'] })
    const location = await api(first, secret, '/v1/locations', { name: 'Plant 1', timezone: 'UTC' })
    await api(first, secret, '/v1/devices', { code: DEVICE, location_id: location.id })
    for (let n = 0; n < OPERATORS; n++) await api(first, secret, '/v1/operators', { ident: operatorIdent(n) })
    log(`${apis.length} API processes and a worker on PostgreSQL (${ENTRY}); ${OPERATORS} operators`)

    const lines = [
      `node ${process.version}, ${os.cpus().length} CPUs, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; ${CONNECTIONS} connections, ${ROUNDS} rounds × ${SECONDS} s per process count`,
    ]
    for (const kind of ['sessions', 'scans'] as const) {
      if (WARMUP_SECONDS > 0) mustBeClean(kind, await load(apis, secret, kind, WARMUP_SECONDS))
      const outcomes = new Map<number, Outcome[]>(COUNTS.map((n) => [n, []]))
      for (let round = 0; round < ROUNDS; round++) {
        const order = COUNTS.map((_, i) => COUNTS[(i + round) % COUNTS.length] as number)
        for (const count of order) {
          await waitDelivered(receiver)
          const outcome = await load(apis.slice(0, count), secret, kind)
          log(
            `POST /v1/${kind}: round ${round + 1}/${ROUNDS}, ${count} API process(es): ` +
              `${outcome.perSecond.toFixed(0)}/s, ${outcome.cpuMsPerCreate.toFixed(2)} CPU ms per create`,
          )
          mustBeClean(kind, outcome)
          outcomes.get(count)?.push(outcome)
        }
      }
      const rates = (count: number) => (outcomes.get(count) ?? []).map((o) => o.perSecond)
      const one = median(rates(1))
      lines.push(
        '',
        `POST /v1/${kind}`,
        '',
        '| API processes | per round | median /s | vs 1 | API CPU ms per create |',
        '|---:|---|---:|---:|---:|',
      )
      for (const count of COUNTS) {
        const values = rates(count)
        const cpu = median((outcomes.get(count) ?? []).map((o) => o.cpuMsPerCreate))
        lines.push(
          `| ${count} | ${values.map((v) => v.toFixed(0)).join(', ')} | **${median(values).toFixed(0)}** | ` +
            `${(median(values) / one).toFixed(2)} | ${cpu.toFixed(2)} |`,
        )
      }
    }
    await waitDelivered(receiver)
    lines.push('', `webhook deliveries received: ${receiver.requests.length}`)
    console.log(lines.join('\n'))
    return 0
  } finally {
    await killAll()
    await receiver.close()
    await schema.drop()
  }
}

process.once('SIGINT', () => {
  killAll().finally(() => process.exit(130))
})

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  },
)
