/**
 * HTTP throughput of the service against a bare stack: `POST /v1/sessions` and
 * `GET /v1/sessions?limit=50`, loaded with autocannon over real sockets. Not a test:
 * `npm run bench:http`.
 *
 * Targets, each a child process on 127.0.0.1:
 *   service            the built service (`node dist/src/server.js`, after `npm run build`) on a fresh
 *                      SQLite file, WORKER=inline, LOG_LEVEL=silent, rate limiting on with a limit
 *                      it never reaches; the key is the one its first start prints
 *   bare               bench/bare-server.ts: Fastify + better-sqlite3 doing the least the two
 *                      requests need (see that file)
 *   service-pg         with BENCH_DATABASE=postgres, the same service on PostgreSQL, in a schema of
 *                      its own (dropped afterwards)
 *   bare-pg            with BENCH_DATABASE=postgres, bench/bare-server-pg.ts: Fastify + `pg` doing the
 *                      least the two requests need, in a schema of its own too; service-pg is read
 *                      against it as service is against bare
 *
 * Set-up: the services get a location, a device and BENCH_OPERATORS operators through the API; then
 * every target gets BENCH_PREFILL sessions through `POST /v1/sessions`, so the list reads a table
 * of a few thousand rows. Then, per request kind (GET first, on the prefilled tables, then POST):
 * a warm-up of BENCH_WARMUP_SECONDS per target, then BENCH_ROUNDS rounds; in each round every target
 * is loaded for BENCH_SECONDS in turn (the order rotates from round to round), after waiting until
 * every server process is idle. Reported per kind: each target's req/s per round and median, p50/p99
 * latency (median over rounds), and service/bare (and service-pg/bare-pg) per round and its median.
 *
 * Creates carry a fresh body each (an operator and a day of their own: no two sessions of an
 * operator overlap) and an `Idempotency-Key` on every other request. Any non-2xx answer, socket
 * error or timeout makes the run invalid: it is reported with sample bodies and the exit code is 1.
 *
 *   BENCH_ROUNDS            default 5
 *   BENCH_SECONDS           seconds per target per round, default 10
 *   BENCH_WARMUP_SECONDS    default 3 (0: none)
 *   BENCH_CONNECTIONS       default 20
 *   BENCH_PREFILL           sessions created before measuring, default 3000
 *   BENCH_OPERATORS         default 200
 *   BENCH_KINDS             `post,get` (default) or one of them
 *   BENCH_DATABASE          `sqlite` (default) or `postgres` (adds service-pg and bare-pg)
 *   BENCH_POSTGRES_URL      default TEST_POSTGRES_URL or postgres://root@127.0.0.1:5432/test
 *   BENCH_PROFILE           `post` or `get`: profile the service(s) under that load instead (no bare
 *                           target): after the set-up the service restarts under `node --cpu-prof`,
 *                           runs the warm-up and rounds of that kind, stops, and its profile is
 *                           summarised (bench/profile-summary.ts)
 *   BENCH_PROFILE_DIR       where profiles go, default a new folder under os.tmpdir() (kept)
 *   BENCH_RATE_LIMIT_MAX    the services' RATE_LIMIT_MAX (per key per second), default 1000000
 *   BENCH_BUILD=0           skip `npm run build` (dist/ must be current)
 *   BENCH_KEEP=1            keep the temporary folder and the PostgreSQL schema
 *   BENCH_PG_STATEMENTS=1   with BENCH_DATABASE=postgres: PostgreSQL's own account of each kind's
 *                           rounds, per statement and per request of each stack (pg_stat_statements,
 *                           reset before the rounds; the server must load it: docs/performance.md)
 *
 * With BENCH_DATABASE=postgres, each round also reports the CPU the PostgreSQL server's processes
 * (its backends, WAL writer, checkpointer: every process named `postgres`) used per 2xx answer of
 * the target being loaded, read from /proc before and after its load: only one target is loaded at
 * a time, so the database's CPU of a round is that target's.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import pg from 'pg'
import { onServer } from '../test/helpers/postgres-run.js'
import { type Child, freePort, killAll, run, spawnChild } from '../test/helpers/process.js'
import { benchSchema } from './postgres-schema.js'
import { formatSummary, readProfile, summariseProfile } from './profile-summary.js'

type Kind = 'post' | 'get'

const ROUNDS = intEnv('BENCH_ROUNDS', 5, 1)
const SECONDS = intEnv('BENCH_SECONDS', 10, 1)
const WARMUP_SECONDS = intEnv('BENCH_WARMUP_SECONDS', 3, 0)
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 20, 1)
const PREFILL = intEnv('BENCH_PREFILL', 3000, 0)
const OPERATORS = intEnv('BENCH_OPERATORS', 200, 1)
const KINDS = listEnv('BENCH_KINDS', ['post', 'get'])
const DATABASE = oneOf('BENCH_DATABASE', ['sqlite', 'postgres'], 'sqlite')
const PROFILE = process.env.BENCH_PROFILE ? oneOf('BENCH_PROFILE', ['post', 'get'], 'post') : undefined
const POSTGRES_URL =
  process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
/** Rate limiting stays on, with a limit the load never reaches (per key and second). */
const RATE_LIMIT_MAX = intEnv('BENCH_RATE_LIMIT_MAX', 1_000_000, 1)
const BUILD = process.env.BENCH_BUILD !== '0'
const KEEP = process.env.BENCH_KEEP === '1'
const PG_STATEMENTS = process.env.BENCH_PG_STATEMENTS === '1'

const DEVICE = 'GATE-1'
const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
/** Check-ins start here and move on a day for each full turn of the operators. */
const FIRST_DAY = Date.parse('2000-01-03T00:00:00Z')
/** The list request; the service's default limit is 50 too. */
const LIST_PATH = '/v1/sessions?limit=50'

function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}`)
  return value
}

function oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw))
    throw new Error(`${name} must be one of ${allowed.join(', ')}`)
  return raw as T
}

function listEnv(name: string, fallback: Kind[]): Kind[] {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const kinds = raw.split(',').map((s) => s.trim())
  for (const kind of kinds) if (kind !== 'post' && kind !== 'get') throw new Error(`${name}: post and/or get`)
  return kinds as Kind[]
}

const log = (message: string) => process.stderr.write(`${message}\n`)

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

// ---- targets

type TargetId = 'service' | 'bare' | 'service-pg' | 'bare-pg'

/** Each service target and the bare stack on the same database it is read against. */
const PAIRS = [
  { service: 'service', bare: 'bare', label: 'service/bare' },
  { service: 'service-pg', bare: 'bare-pg', label: 'service (PostgreSQL)/bare (PostgreSQL)' },
] as const

interface Target {
  id: TargetId
  label: string
  port: number
  secret: string
  child: Child
  /** Creates sent to this target so far: each request's operator, day and key come from it. */
  creates: number
  /** performance.now() when the current process was spawned (to line it up with its profile). */
  spawnedAt: number
  /** Starts the process again on the same database (for profiling), optionally under --cpu-prof. */
  restart(profileDir?: string): Promise<void>
}

const baseUrl = (target: Target) => `http://127.0.0.1:${target.port}`

async function waitUntilServing(child: Child, port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.hasExited) throw new Error(`${child.args.join(' ')} exited:\n${child.stdout}\n${child.stderr}`)
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`)
      await res.arrayBuffer()
      // The bare server has no /healthz: any answer means it is listening.
      if (res.status < 500) return
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`nothing listening on ${port} after ${timeoutMs} ms`)
    await sleep(100)
  }
}

/** SIGTERM (the service then closes gracefully and a --cpu-prof profile is written), then waits. */
async function stop(child: Child): Promise<void> {
  if (child.hasExited) return
  child.kill('SIGTERM')
  const exit = await child.waitForExit(30_000)
  if (exit.code !== 0) log(`  ${child.args.join(' ')} exited with ${JSON.stringify(exit)}`)
}

async function startService(id: 'service' | 'service-pg', databaseUrl: string): Promise<Target> {
  const port = await freePort()
  // Where the first start writes its key, its stdout not being a terminal (older builds print it).
  const keyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-key-')), 'first-key.txt')
  const spawnService = (profileDir?: string) =>
    spawnChild(
      process.execPath,
      [...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), 'dist/src/server.js'],
      {
        env: {
          PORT: String(port),
          HOST: '127.0.0.1',
          DATABASE_URL: databaseUrl,
          WORKER: 'inline',
          RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
          RATE_LIMIT_WINDOW_MS: '1000',
          LOG_LEVEL: 'silent',
          REDIS_URL: undefined,
          FIRST_KEY_FILE: keyFile,
          SHUTDOWN_GRACE_MS: '0',
        },
      },
    )
  const spawnedAt = performance.now()
  const child = spawnService()
  await waitUntilServing(child, port)
  // The first start on an empty database writes the `default` account's test key (before listening).
  const firstStart = fs.existsSync(keyFile) ? fs.readFileSync(keyFile, 'utf8') : child.stdout
  const secret = /(sk_test_[A-Za-z0-9_-]+)/.exec(firstStart)?.[1]
  if (!secret) throw new Error(`${id}: no key in the first start's output:\n${child.stdout}${child.stderr}`)
  const target: Target = {
    id,
    label: id === 'service' ? 'service (SQLite)' : 'service (PostgreSQL)',
    port,
    secret,
    child,
    creates: 0,
    spawnedAt,
    restart: async (profileDir) => {
      await stop(target.child)
      target.spawnedAt = performance.now()
      target.child = spawnService(profileDir)
      await waitUntilServing(target.child, port)
    },
  }
  return target
}

/** A bare stack: bench/bare-server.ts on a SQLite file, or bench/bare-server-pg.ts on a schema. */
async function startBare(database: { sqlite: string } | { postgres: string }): Promise<Target> {
  const port = await freePort()
  const secret = `sk_test_${randomBytes(24).toString('base64url')}`
  const [id, script, env] =
    'sqlite' in database
      ? (['bare', 'bench/bare-server.ts', { BARE_DATABASE: database.sqlite }] as const)
      : (['bare-pg', 'bench/bare-server-pg.ts', { BARE_DATABASE_URL: database.postgres }] as const)
  const spawnBare = () =>
    spawnChild(process.execPath, ['--import', 'tsx', script], {
      env: { BARE_PORT: String(port), BARE_API_KEY: secret, ...env },
    })
  const target: Target = {
    id,
    label: id === 'bare' ? 'bare stack' : 'bare stack (PostgreSQL)',
    port,
    secret,
    child: spawnBare(),
    creates: 0,
    spawnedAt: performance.now(),
    restart: async () => {
      await stop(target.child)
      target.spawnedAt = performance.now()
      target.child = spawnBare()
      await waitUntilServing(target.child, port)
    },
  }
  await waitUntilServing(target.child, port)
  return target
}

// ---- set-up through the API

async function api(target: Target, method: string, url: string, body: unknown): Promise<{ id: string }> {
  const res = await fetch(`${baseUrl(target)}${url}`, {
    method,
    headers: { authorization: `Bearer ${target.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${target.id}: ${method} ${url} → ${res.status} ${text}`)
  return JSON.parse(text) as { id: string }
}

const operatorIdent = (n: number) => `op-${String(n).padStart(5, '0')}`

/** A location, the device every create names, and the operators (8 requests in flight). */
async function createWorld(target: Target): Promise<void> {
  const location = await api(target, 'POST', '/v1/locations', { name: 'Plant 1', timezone: 'UTC' })
  await api(target, 'POST', '/v1/devices', { code: DEVICE, location_id: location.id })
  let next = 0
  const worker = async () => {
    while (next < OPERATORS) {
      const n = next++
      await api(target, 'POST', '/v1/operators', { ident: operatorIdent(n), name: `Operator ${n}` })
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
}

/**
 * Both targets must answer the list alike, or the comparison means nothing: the same page size
 * and the same session fields. Returns a line on the response sizes.
 */
async function checkLists(targets: Target[]): Promise<string> {
  const pages: Array<{ target: Target; bytes: number; count: number; keys: string }> = []
  for (const target of targets) {
    const res = await fetch(`${baseUrl(target)}${LIST_PATH}`, {
      headers: { authorization: `Bearer ${target.secret}` },
    })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`${target.label}: GET ${LIST_PATH} → ${res.status} ${text}`)
    const page = JSON.parse(text) as { data: Array<Record<string, unknown>> }
    const keys = Object.keys(page.data[0] ?? {})
      .sort()
      .join(',')
    pages.push({ target, bytes: Buffer.byteLength(text), count: page.data.length, keys })
  }
  const first = pages[0]
  for (const page of pages) {
    if (first && (page.count !== first.count || page.keys !== first.keys)) {
      throw new Error(
        `the lists differ: ${first.target.label} ${first.count} × {${first.keys}}, ` +
          `${page.target.label} ${page.count} × {${page.keys}}`,
      )
    }
  }
  return `list page: ${pages.map((p) => `${p.target.label} ${p.count} sessions, ${p.bytes} bytes`).join('; ')}`
}

// ---- load

interface Outcome {
  ok: number
  non2xx: number
  errors: number
  timeouts: number
  reqPerSec: number
  /** CPU time of the target's process (all its threads) per 2xx answer, in ms; NaN without /proc. */
  cpuMsPerRequest: number
  /** CPU time of the PostgreSQL server's processes per 2xx answer, in ms; NaN on SQLite or without /proc. */
  postgresCpuMsPerRequest: number
  p50: number
  p99: number
  statuses: Record<string, number>
  samples: string[]
}

const RUN_TAG = `bench-${Date.now().toString(36)}`

function requestFor(target: Target, kind: Kind, samples: string[]): autocannon.Request {
  const onResponse = (status: number, body: string) => {
    if ((status < 200 || status >= 300) && samples.length < 3) samples.push(`${status} ${body.slice(0, 300)}`)
  }
  if (kind === 'get') return { method: 'GET', path: LIST_PATH, onResponse }
  return {
    method: 'POST',
    path: '/v1/sessions',
    onResponse,
    setupRequest: (request) => {
      const i = target.creates++
      const checkIn = FIRST_DAY + Math.floor(i / OPERATORS) * DAY_MS + 8 * HOUR_MS
      const headers = { ...request.headers }
      if (i % 2 === 0) headers['idempotency-key'] = `${RUN_TAG}-${i}`
      return {
        ...request,
        headers,
        body: JSON.stringify({
          operator_ident: operatorIdent(i % OPERATORS),
          device_id: DEVICE,
          check_in: { time: new Date(checkIn).toISOString() },
          check_out: { time: new Date(checkIn + 8 * HOUR_MS).toISOString() },
          break_minutes: 30,
        }),
      }
    },
  }
}

async function load(target: Target, kind: Kind, how: { seconds: number } | { amount: number }) {
  const samples: string[] = []
  const pid = target.child.proc.pid
  const ticksBefore = pid === undefined ? Number.NaN : cpuTicks(pid)
  const postgresBefore = DATABASE === 'postgres' ? postgresCpuTicks() : undefined
  const result = await autocannon({
    url: baseUrl(target),
    connections: CONNECTIONS,
    ...('amount' in how ? { amount: how.amount } : { duration: how.seconds }),
    headers: { authorization: `Bearer ${target.secret}`, 'content-type': 'application/json' },
    requests: [requestFor(target, kind, samples)],
  })
  const statuses: Record<string, number> = {}
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = stat.count ?? 0
  const outcome: Outcome = {
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    reqPerSec: result['2xx'] / result.duration,
    cpuMsPerRequest:
      pid === undefined || !fs.existsSync(`/proc/${pid}/stat`)
        ? Number.NaN
        : ((cpuTicks(pid) - ticksBefore) * MS_PER_TICK) / Math.max(1, result['2xx']),
    postgresCpuMsPerRequest: postgresBefore
      ? (postgresTicksSince(postgresBefore) * MS_PER_TICK) / Math.max(1, result['2xx'])
      : Number.NaN,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statuses,
    samples,
  }
  return outcome
}

/** Throws (the run is invalid) when any answer was not 2xx or any request failed. */
function mustBeClean(target: Target, what: string, outcome: Outcome): void {
  if (outcome.non2xx === 0 && outcome.errors === 0 && outcome.timeouts === 0) return
  throw new Error(
    `INVALID RUN: ${target.label}, ${what}: ${outcome.non2xx} non-2xx, ${outcome.errors} errors, ` +
      `${outcome.timeouts} timeouts; statuses ${JSON.stringify(outcome.statuses)}\n` +
      outcome.samples.map((s) => `  sample: ${s}`).join('\n'),
  )
}

// ---- quiet: a round starts when no server process is still busy (e.g. the inline webhook worker
// dispatching the events of the previous round), so one target's backlog does not load another's.

/** /proc reports CPU time in clock ticks of 10 ms (USER_HZ = 100 on Linux). */
const MS_PER_TICK = 10

function cpuTicks(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command.
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/**
 * CPU ticks of each process named `postgres` (the server: its backends, WAL writer, checkpointer),
 * by pid; empty without /proc.
 */
function postgresCpuTicks(): Map<number, number> {
  const ticks = new Map<number, number>()
  if (!fs.existsSync('/proc/self/stat')) return ticks
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') {
        ticks.set(Number(entry), cpuTicks(Number(entry)))
      }
    } catch {
      // gone meanwhile
    }
  }
  return ticks
}

/**
 * The ticks the server's processes used from `before` to now, process by process: a backend that
 * exited meanwhile (a pool closing an idle connection of the other stack) must not take its whole
 * life's ticks off the sum, and one that started counts from zero. NaN without /proc.
 */
function postgresTicksSince(before: Map<number, number>): number {
  if (!fs.existsSync('/proc/self/stat')) return Number.NaN
  let used = 0
  for (const [pid, ticks] of postgresCpuTicks()) used += ticks - (before.get(pid) ?? 0)
  return used
}

async function waitQuiet(targets: Target[], timeoutMs = 15_000): Promise<void> {
  if (!fs.existsSync('/proc/self/stat')) return sleep(1000).then(() => undefined)
  const pids = targets.map((t) => t.child.proc.pid).filter((pid): pid is number => pid !== undefined)
  const total = () => pids.reduce((sum, pid) => sum + cpuTicks(pid), 0)
  const deadline = Date.now() + timeoutMs
  let before = total()
  for (;;) {
    await sleep(250)
    const now = total()
    // At most 1 tick (10 ms) in 250 ms across all servers.
    if (now - before <= 1) return
    if (Date.now() > deadline) {
      log(`  (servers still busy after ${timeoutMs} ms; starting anyway)`)
      return
    }
    before = now
  }
}

// ---- the run

interface KindResult {
  kind: Kind
  rounds: Map<TargetId, Outcome[]>
  /** BENCH_PG_STATEMENTS: pg_stat_statements over the rounds, per stack. */
  statements?: string[]
  /** performance.now() when the first round began (after the warm-up). */
  roundsStartedAt: number
}

async function measure(targets: Target[], kind: Kind): Promise<KindResult> {
  const name = kind === 'post' ? 'POST /v1/sessions' : `GET ${LIST_PATH}`
  if (WARMUP_SECONDS > 0) {
    for (const target of targets) {
      await waitQuiet(targets)
      log(`${name}: warm-up ${target.label}, ${WARMUP_SECONDS} s`)
      mustBeClean(target, `${name} warm-up`, await load(target, kind, { seconds: WARMUP_SECONDS }))
    }
  }
  const rounds = new Map<TargetId, Outcome[]>(targets.map((t) => [t.id, []]))
  if (PG_STATEMENTS) await onServer(POSTGRES_URL, 'select pg_stat_statements_reset()')
  const roundsStartedAt = performance.now()
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order so that no target always runs right after another's load.
    const order = targets.map((_, i) => targets[(i + round) % targets.length] as Target)
    for (const target of order) {
      await waitQuiet(targets)
      const outcome = await load(target, kind, { seconds: SECONDS })
      log(
        `${name}: round ${round + 1}/${ROUNDS} ${target.label}: ${outcome.reqPerSec.toFixed(0)} req/s, ` +
          `${outcome.cpuMsPerRequest.toFixed(3)} CPU ms/request` +
          (DATABASE === 'postgres' ? ` (PostgreSQL ${outcome.postgresCpuMsPerRequest.toFixed(3)})` : '') +
          ', ' +
          `p50 ${outcome.p50} ms, p99 ${outcome.p99} ms`,
      )
      mustBeClean(target, `${name} round ${round + 1}`, outcome)
      rounds.get(target.id)?.push(outcome)
    }
  }
  const statements = PG_STATEMENTS ? await statementsReport(kind, rounds) : undefined
  return { kind, rounds, roundsStartedAt, ...(statements ? { statements } : {}) }
}

interface StatementStats {
  query: string
  calls: number
  plan_ms: number
  exec_ms: number
  rows: number
  blks_hit: number
  blks_dirtied: number
  wal_bytes: number
}

/**
 * PostgreSQL's account of the rounds just run, statement by statement, per request of each stack:
 * the bare stack's statements are the ones bench/bare-server-pg.ts tags `/* bare *\/`, every other
 * statement of the database is the service's (the rounds run nothing else there). BEGIN and COMMIT
 * are statements too (track_utility): a commit's time is its WAL flush.
 */
async function statementsReport(kind: Kind, rounds: Map<TargetId, Outcome[]>): Promise<string[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  let rows: StatementStats[]
  try {
    const result = await client.query<StatementStats>(`
      select query, calls::float8 as calls, total_plan_time as plan_ms, total_exec_time as exec_ms,
             rows::float8 as rows, shared_blks_hit::float8 as blks_hit,
             shared_blks_dirtied::float8 as blks_dirtied, wal_bytes::float8 as wal_bytes
        from pg_stat_statements
       where dbid = (select oid from pg_database where datname = current_database())
         and query not like '%pg_stat_statements%'`)
    rows = result.rows
  } finally {
    await client.end()
  }
  const lines: string[] = []
  const stacks = [
    { id: 'service-pg' as const, mine: (q: string) => !q.includes('/* bare */') },
    { id: 'bare-pg' as const, mine: (q: string) => q.includes('/* bare */') },
  ]
  for (const stack of stacks) {
    const requests = (rounds.get(stack.id) ?? []).reduce((sum, o) => sum + o.ok, 0)
    if (requests === 0) continue
    const own = rows
      .filter((r) => stack.mine(r.query))
      .sort((a, b) => b.plan_ms + b.exec_ms - (a.plan_ms + a.exec_ms))
    const per = (value: number, scale = 1) =>
      ((value * scale) / requests).toFixed(value * scale >= requests * 10 ? 0 : 2)
    const total = own.reduce(
      (t, r) => ({
        calls: t.calls + r.calls,
        plan: t.plan + r.plan_ms,
        exec: t.exec + r.exec_ms,
        hit: t.hit + r.blks_hit,
        dirtied: t.dirtied + r.blks_dirtied,
        wal: t.wal + r.wal_bytes,
      }),
      { calls: 0, plan: 0, exec: 0, hit: 0, dirtied: 0, wal: 0 },
    )
    lines.push(
      '',
      `pg_stat_statements, ${stack.id}, ${kind.toUpperCase()}: ${requests} requests; per request: ${per(total.calls)} statements, ` +
        `planning ${per(total.plan, 1000)} µs, execution ${per(total.exec, 1000)} µs, ${per(total.hit)} shared blocks hit, ` +
        `${per(total.dirtied)} dirtied, ${per(total.wal)} WAL bytes`,
      '',
      '| statement | calls/request | planning µs/request | execution µs/request | rows/call | blocks hit/request | dirtied/request | WAL bytes/request |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...own
        .slice(0, 20)
        .map(
          (r) =>
            `| \`${r.query.replace(/\s+/g, ' ').slice(0, 110).replaceAll('|', '\\|')}\` | ${per(r.calls)} | ${per(r.plan_ms, 1000)} | ` +
            `${per(r.exec_ms, 1000)} | ${(r.rows / Math.max(1, r.calls)).toFixed(1)} | ${per(r.blks_hit)} | ${per(r.blks_dirtied)} | ${per(r.wal_bytes)} |`,
        ),
    )
  }
  return lines
}

function report(targets: Target[], results: KindResult[]): string[] {
  const lines: string[] = []
  const summary: string[] = []
  for (const { kind, rounds, statements } of results) {
    const name = kind === 'post' ? 'POST /v1/sessions' : `GET ${LIST_PATH}`
    lines.push('', `${name}: ${ROUNDS} rounds × ${SECONDS} s per target, ${CONNECTIONS} connections`, '')
    const roundHeads = Array.from({ length: ROUNDS }, (_, i) => `r${i + 1}`)
    lines.push(
      `| target | ${roundHeads.join(' | ')} | median req/s | p50 ms | p99 ms | CPU ms/request | PostgreSQL CPU ms/request | 2xx | non-2xx |`,
    )
    lines.push(`|---|${roundHeads.map(() => '---:|').join('')}---:|---:|---:|---:|---:|---:|---:|`)
    for (const target of targets) {
      const outcomes = rounds.get(target.id) ?? []
      const rates = outcomes.map((o) => o.reqPerSec)
      lines.push(
        `| ${target.label} | ${rates.map((r) => r.toFixed(0)).join(' | ')} | **${median(rates).toFixed(0)}** | ` +
          `${median(outcomes.map((o) => o.p50)).toFixed(1)} | ${median(outcomes.map((o) => o.p99)).toFixed(1)} | ` +
          `${median(outcomes.map((o) => o.cpuMsPerRequest)).toFixed(3)} | ` +
          `${target.id.endsWith('-pg') ? median(outcomes.map((o) => o.postgresCpuMsPerRequest)).toFixed(3) : ''} | ` +
          `${outcomes.reduce((s, o) => s + o.ok, 0)} | ${outcomes.reduce((s, o) => s + o.non2xx + o.errors, 0)} |`,
      )
    }
    for (const pair of PAIRS) {
      const service = rounds.get(pair.service)
      const bare = rounds.get(pair.bare)
      if (!service || !bare) continue
      const ratios = service.map((o, i) => o.reqPerSec / (bare[i]?.reqPerSec ?? Number.NaN))
      // The same comparison by CPU cost (bare's CPU per request ÷ the service's): what the req/s
      // ratio would be with both CPU-bound on a machine of their own. Steadier than req/s on a
      // shared machine, where other jobs take the cores a target would have used.
      const cpuRatios = service.map((o, i) => (bare[i]?.cpuMsPerRequest ?? Number.NaN) / o.cpuMsPerRequest)
      const { label } = pair
      lines.push(
        '',
        `${label} per round: ${ratios.map((r) => r.toFixed(3)).join(', ')} → median **${median(ratios).toFixed(3)}**`,
        `${label} by CPU per request: ${cpuRatios.map((r) => r.toFixed(3)).join(', ')} → median **${median(cpuRatios).toFixed(3)}**`,
      )
      if (pair.service === 'service-pg') {
        // How many times the bare stack's database CPU a request of the service costs the database.
        const databaseRatios = service.map(
          (o, i) => o.postgresCpuMsPerRequest / (bare[i]?.postgresCpuMsPerRequest ?? Number.NaN),
        )
        lines.push(
          `PostgreSQL's CPU per request, service ÷ bare: ${databaseRatios.map((r) => r.toFixed(2)).join(', ')} → median **${median(databaseRatios).toFixed(2)}×**`,
        )
      }
      summary.push(
        `${kind.toUpperCase()} ${label} = ${median(ratios).toFixed(3)} ` +
          `(${median(service.map((o) => o.reqPerSec)).toFixed(0)} vs ${median(bare.map((o) => o.reqPerSec)).toFixed(0)} req/s); ` +
          `by CPU per request ${median(cpuRatios).toFixed(3)}`,
      )
    }
    if (statements) lines.push(...statements)
  }
  if (summary.length) lines.push('', ...summary)
  return lines
}

async function main(): Promise<number> {
  if (BUILD) {
    log('npm run build…')
    const build = await run('npm', ['run', '--silent', 'build'], { timeoutMs: 300_000 })
    if (build.code !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`)
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-http-bench-'))
  const profileDir = PROFILE
    ? (process.env.BENCH_PROFILE_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-http-profile-')))
    : undefined
  const runId = randomBytes(4).toString('hex')
  const postgres =
    DATABASE === 'postgres'
      ? await benchSchema(POSTGRES_URL, `bench_http_${runId}`, { keep: KEEP, log })
      : undefined
  const barePostgres =
    DATABASE === 'postgres' && !PROFILE
      ? await benchSchema(POSTGRES_URL, `bench_http_bare_${runId}`, { keep: KEEP, log })
      : undefined
  const targets: Target[] = []
  try {
    targets.push(await startService('service', `sqlite:${path.join(dir, 'service.db')}`))
    if (!PROFILE) targets.push(await startBare({ sqlite: path.join(dir, 'bare.db') }))
    if (postgres) targets.push(await startService('service-pg', postgres.url))
    if (barePostgres) targets.push(await startBare({ postgres: barePostgres.url }))
    log(`targets: ${targets.map((t) => `${t.label} on :${t.port}`).join(', ')}`)

    for (const target of targets) {
      if (target.id === 'service' || target.id === 'service-pg') await createWorld(target)
      if (PREFILL > 0) {
        log(`prefill ${target.label}: ${PREFILL} sessions`)
        mustBeClean(target, 'prefill', await load(target, 'post', { amount: PREFILL }))
      }
    }

    const listCheck = await checkLists(targets)
    log(listCheck)

    const kinds = PROFILE ? [PROFILE] : (['get', 'post'] as const).filter((k) => KINDS.includes(k))
    if (profileDir) {
      for (const target of targets) {
        const own = path.join(profileDir, `${target.id}-${PROFILE}`)
        fs.mkdirSync(own, { recursive: true })
        await target.restart(own)
      }
      log(`profiling into ${profileDir}`)
    }

    const results: KindResult[] = []
    for (const kind of kinds) results.push(await measure(targets, kind))
    // POST first in the report, as in the docs.
    results.sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'post' ? -1 : 1))
    console.log(
      [
        `node ${process.version}, ${os.cpus().length} CPUs, load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}; ${PREFILL} sessions prefilled per target`,
        listCheck,
        ...report(targets, results),
      ].join('\n'),
    )

    for (const target of targets) await stop(target.child)
    if (profileDir) {
      for (const target of targets) {
        const own = path.join(profileDir, `${target.id}-${PROFILE}`)
        for (const file of fs.readdirSync(own).filter((f) => f.endsWith('.cpuprofile'))) {
          const full = path.join(own, file)
          console.log(`\n## ${target.label} under ${PROFILE?.toUpperCase()} load: ${full}\n`)
          // Only the rounds: start-up, set-up requests and the warm-up are left out.
          const fromMs = (results[0]?.roundsStartedAt ?? target.spawnedAt) - target.spawnedAt
          console.log(`(samples from ${(fromMs / 1000).toFixed(1)} s after the process started)\n`)
          console.log(formatSummary(summariseProfile(readProfile(full), fromMs), 20))
        }
      }
    }
    return 0
  } finally {
    await killAll()
    if (postgres) await postgres.drop()
    if (barePostgres) await barePostgres.drop()
    if (KEEP) log(`kept ${dir}`)
    else fs.rmSync(dir, { recursive: true, force: true })
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
