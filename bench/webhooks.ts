/**
 * Webhook delivery throughput and latency: 10 endpoints subscribed to `*`, 10,000 events created
 * through the API (`POST /v1/operators` with `app.inject`), so 100,000 deliveries to a receiver on
 * 127.0.0.1 that answers 200 at once and records when each `X-Service-Id` arrived. Not a test:
 * `npm run bench:webhooks`.
 *
 * Scenarios (BENCH_SCENARIOS, comma-separated, default the first three):
 *   sqlite-inline      the API with its inline worker on a fresh SQLite file
 *   postgres-inline    the API with its inline worker on PostgreSQL
 *   postgres-workers   the API at WORKER=off and BENCH_WORKERS (default 2) `cli worker` processes
 *   sqlite-hostile, postgres-hostile
 *                      fairness: one healthy endpoint alone, then beside nine hostile ones (hanging,
 *                      trickling bytes, 50 MB bodies, flapping 500s, 410, 429 with Retry-After,
 *                      garbage, 5 s answers, connection resets); BENCH_HOSTILE_EVENTS (default 300)
 *                      events at 10/s each time. Target: the healthy endpoint's p99 beside them
 *                      within 2× its p99 alone.
 *   sqlite-recover, postgres-recover
 *                      BENCH_RECOVER_DELIVERIES (default 100,000) failed deliveries of one endpoint
 *                      recovered with one request while two other endpoints get 20 events/s:
 *                      the request's time and heap growth, the recovered endpoint's delivery rate,
 *                      the other endpoints' latency during it (target: p99 < 1 s).
 *
 *   BENCH_EVENTS       events to create, default 10000
 *   BENCH_WARMUP       events created (at the same pace) and delivered before the measured ones,
 *                      default 2000; their deliveries are not counted; 0 measures a cold start
 *   BENCH_ENDPOINTS    endpoints subscribed to `*`, default 10
 *   BENCH_CONCURRENCY  API requests in flight while creating events, default 4
 *   BENCH_RATE         events per second to offer (paced), default 100 (1,000 deliveries/s: the
 *                      target's load); 0 = as fast as the API takes them
 *   BENCH_POSTGRES_URL default TEST_POSTGRES_URL or postgres://root@127.0.0.1:5432/test; each
 *                      PostgreSQL scenario runs in a schema of its own, dropped afterwards
 *   BENCH_IN_FLIGHT / BENCH_PER_ENDPOINT / BENCH_POLL_MS  override the worker's maxInFlight /
 *                      maxPerEndpoint / pollMs (inline scenarios only)
 *   BENCH_KEEP=1       keep the SQLite file / PostgreSQL schemas
 *   BENCH_TIMELINE=1   print, per second of the run, events created, deliveries received and
 *                      their median latency
 *
 * Latency is event `created` (stamped in the transaction that made the change) → the receiver has
 * read the whole request. The receiver runs in a worker thread so its work does not queue behind
 * the API's event loop. Exits 1 when a delivery never arrives or a target is missed: p99 < 1 s,
 * and ≥ 1,000 deliveries/s — unpaced, measured; paced (BENCH_RATE), the offered load must be at
 * least that and the workers must keep up with it (≥ 99 % of it).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/connection.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { FirstStatistics } from '../src/db/statistics.js'
import type { Db } from '../src/db/types.js'
import { createKey } from '../src/modules/keys/service.js'
import { WebhookWorker } from '../src/modules/webhooks/worker.js'
import { benchSchema } from './postgres-schema.js'

const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'sqlite-inline,postgres-inline,postgres-workers')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean)
const EVENTS = intEnv('BENCH_EVENTS', 10_000)
const WARMUP = intEnv('BENCH_WARMUP', 2000)
const ENDPOINTS = intEnv('BENCH_ENDPOINTS', 10)
const CONCURRENCY = intEnv('BENCH_CONCURRENCY', 4)
const RATE = intEnv('BENCH_RATE', 100)
const WORKERS = intEnv('BENCH_WORKERS', 2)
const IN_FLIGHT = optionalIntEnv('BENCH_IN_FLIGHT')
const PER_ENDPOINT = optionalIntEnv('BENCH_PER_ENDPOINT')
const POLL_MS = optionalIntEnv('BENCH_POLL_MS')
const POSTGRES_URL =
  process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
const KEEP = process.env.BENCH_KEEP === '1'
const TIMELINE = process.env.BENCH_TIMELINE === '1'
const TARGET_RATE = 1000
const TARGET_P99_MS = 1000
/** Give up on a scenario this long after the last event was created. */
const DRAIN_TIMEOUT_MS = 300_000
const HOSTILE_EVENTS = intEnv('BENCH_HOSTILE_EVENTS', 300)
const HOSTILE_RATE = 10
const RECOVER_DELIVERIES = intEnv('BENCH_RECOVER_DELIVERIES', 100_000)
const RECOVER_SIDE_RATE = 20
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')

function intEnv(name: string, fallback: number): number {
  return optionalIntEnv(name) ?? fallback
}

function optionalIntEnv(name: string): number | undefined {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return undefined
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number ≥ 0`)
  return value
}

const log = (message: string) => process.stderr.write(`${message}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// ---- the receiver, in a worker thread

const RECEIVER_SOURCE = `
const { parentPort } = require('node:worker_threads')
const http = require('node:http')
const seen = new Set()
const ids = []
const ats = []
const created = []
const paths = []
const server = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const at = Date.now()
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' })
    res.end('ok')
    const id = String(req.headers['x-service-id'])
    const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    seen.add(id)
    ids.push(id)
    ats.push(at)
    created.push(Date.parse(envelope.created))
    paths.push(req.url)
  })
})
server.keepAliveTimeout = 120000
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'port', port: server.address().port }))
parentPort.on('message', (m) => {
  if (m === 'count') parentPort.postMessage({ type: 'count', unique: seen.size, total: ids.length })
  else if (m === 'dump') parentPort.postMessage({ type: 'dump', ids, ats, created, paths })
  else if (m === 'reset') { seen.clear(); ids.length = 0; ats.length = 0; created.length = 0; paths.length = 0; parentPort.postMessage({ type: 'reset' }) }
  else if (m === 'close') { server.closeAllConnections(); server.close(() => process.exit(0)) }
})
`

interface Dump {
  ids: string[]
  ats: number[]
  created: number[]
  paths: string[]
}

/**
 * Nine hostile receivers, each on a port of its own, in a thread of their own (50 MB bodies and
 * trickled bytes must not slow the healthy receiver's clock).
 */
const HOSTILE_SOURCE = `
const { parentPort } = require('node:worker_threads')
const http = require('node:http')
const chunk = Buffer.alloc(64 * 1024, 120)
const held = new Set()
let flap = 0
const behaviours = {
  hanging: (req, res) => { held.add(res) },
  trickle: (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    const timer = setInterval(() => { if (res.destroyed) clearInterval(timer); else res.write('.') }, 200)
  },
  huge: (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(50 * 1024 * 1024) })
    let sent = 0
    const more = () => {
      while (sent < 50 * 1024 * 1024 && !res.destroyed) {
        sent += chunk.length
        if (!res.write(chunk)) return res.once('drain', more)
      }
      res.end()
    }
    more()
  },
  flapping: (req, res) => { res.writeHead(flap++ % 2 === 0 ? 500 : 200); res.end() },
  gone: (req, res) => { res.writeHead(410); res.end() },
  throttled: (req, res) => { res.writeHead(429, { 'retry-after': '30' }); res.end() },
  garbage: (req, res) => { res.socket.end('NOT HTTP AT ALL\\r\\n\\r\\n') },
  slow: (req, res) => { setTimeout(() => { res.writeHead(200); res.end('ok') }, 5000) },
  reset: (req, res) => { res.socket.destroy() },
}
const ports = {}
let pending = Object.keys(behaviours).length
for (const [name, behave] of Object.entries(behaviours)) {
  const server = http.createServer((req, res) => { req.resume(); req.on('end', () => behave(req, res)) })
  server.listen(0, '127.0.0.1', () => {
    ports[name] = server.address().port
    if (--pending === 0) parentPort.postMessage({ type: 'ports', ports })
  })
}
parentPort.on('message', (m) => { if (m === 'close') process.exit(0) })
`

class HostileThread {
  private readonly worker = new Worker(HOSTILE_SOURCE, { eval: true })
  ports: Record<string, number> = {}

  async start(): Promise<this> {
    const { ports } = await new Promise<{ ports: Record<string, number> }>((resolve) =>
      this.worker.once('message', (m: { ports: Record<string, number> }) => resolve(m)),
    )
    this.ports = ports
    return this
  }

  async close() {
    const exited = new Promise((resolve) => this.worker.once('exit', resolve))
    this.worker.postMessage('close')
    await exited
  }
}

class ReceiverThread {
  private readonly worker = new Worker(RECEIVER_SOURCE, { eval: true })
  port = 0

  private ask<T>(message: string, type: string): Promise<T> {
    return new Promise((resolve) => {
      const onMessage = (reply: { type: string }) => {
        if (reply.type !== type) return
        this.worker.off('message', onMessage)
        resolve(reply as T)
      }
      this.worker.on('message', onMessage)
      this.worker.postMessage(message)
    })
  }

  async start(): Promise<this> {
    const { port } = await new Promise<{ port: number }>((resolve) =>
      this.worker.once('message', (m: { port: number }) => resolve(m)),
    )
    this.port = port
    return this
  }

  count() {
    return this.ask<{ unique: number; total: number }>('count', 'count')
  }

  dump() {
    return this.ask<Dump>('dump', 'dump')
  }

  reset() {
    return this.ask<{ type: 'reset' }>('reset', 'reset')
  }

  async close() {
    const exited = new Promise((resolve) => this.worker.once('exit', resolve))
    this.worker.postMessage('close')
    await exited
  }
}

// ---- databases

interface Target {
  url: string
  cleanup(): Promise<void>
}

function sqliteTarget(): Target {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-webhook-bench-'))
  return {
    url: `sqlite:${path.join(dir, 'bench.db')}`,
    cleanup: async () => {
      if (!KEEP) fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function postgresTarget(): Promise<Target> {
  const schema = await benchSchema(POSTGRES_URL, `bench_webhooks_${randomBytes(4).toString('hex')}`, {
    keep: KEEP,
    log: (line) => log(`  ${line}`),
  })
  return { url: schema.url, cleanup: schema.drop }
}

// ---- separate worker processes

interface WorkerProcess {
  child: ChildProcess
  exited: Promise<void>
}

async function spawnWorker(databaseUrl: string): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'worker'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'info',
      WORKER: undefined,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    let out = ''
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8')
      if (out.includes('webhook worker and forgotten check-out sweep started')) {
        child.stdout?.off('data', onData)
        child.stdout?.resume()
        resolve()
      }
    }
    child.stdout?.on('data', onData)
    child.once('close', (code) => reject(new Error(`worker exited (${code}) before starting:\n${out}`)))
  })
  return { child, exited }
}

// ---- one scenario

interface Result {
  scenario: string
  deliveries: number
  duplicates: number
  missing: number
  createSeconds: number
  eventsPerSecond: number
  seconds: number
  deliveriesPerSecond: number
  p50: number
  p99: number
  max: number
  drainMs: number
  recordedMs: number
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0
}

async function countSucceeded(db: Db): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status', '=', 'succeeded')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

async function createEvents(
  app: FastifyInstance,
  secret: string,
  prefix: string,
  count: number,
  rate = RATE,
) {
  const headers = { authorization: `Bearer ${secret}` }
  let next = 0
  const started = performance.now()
  const lane = async () => {
    for (;;) {
      const i = next++
      if (i >= count) return
      if (rate > 0) {
        const due = started + (i / rate) * 1000
        const wait = due - performance.now()
        if (wait > 0) await sleep(wait)
      }
      const res = await app.inject({
        method: 'POST',
        url: '/v1/operators',
        headers,
        payload: { ident: `${prefix}-${i}`, name: `Operator ${i}` },
      })
      if (res.statusCode !== 201) throw new Error(`POST /v1/operators: ${res.statusCode} ${res.body}`)
      if ((i + 1) % 2000 === 0) log(`  ${i + 1} events created`)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, lane))
  return (performance.now() - started) / 1000
}

/**
 * Waits until the receiver has `received` distinct deliveries and the database records `succeeded`
 * of them as succeeded (sent is not done), or gives up DRAIN_TIMEOUT_MS after `since`.
 */
async function waitForDeliveries(
  receiver: ReceiverThread,
  probe: Db,
  succeeded: number,
  since: number,
  received = succeeded,
) {
  let lastLog = Date.now()
  for (;;) {
    const { unique } = await receiver.count()
    if (unique >= received) break
    if (Date.now() - since > DRAIN_TIMEOUT_MS) {
      log(`  gave up with ${unique} of ${received} delivered`)
      break
    }
    if (Date.now() - lastLog > 5000) {
      log(`  ${unique} delivered`)
      lastLog = Date.now()
    }
    await sleep(50)
  }
  for (;;) {
    if ((await countSucceeded(probe)) >= succeeded) break
    if (Date.now() - since > DRAIN_TIMEOUT_MS) break
    await sleep(100)
  }
}

async function runScenario(scenario: string): Promise<Result> {
  const postgres = scenario.startsWith('postgres')
  const separate = scenario === 'postgres-workers'
  const target = postgres ? await postgresTarget() : sqliteTarget()
  const receiver = await new ReceiverThread().start()
  const workers: WorkerProcess[] = []
  let app: FastifyInstance | undefined
  let ownWorker: WebhookWorker | undefined
  let ownStatistics: FirstStatistics | undefined
  const { db: probe } = openDatabase(target.url)
  try {
    const config = {
      ...loadConfig({
        LOG_LEVEL: 'silent',
        RATE_LIMIT_MAX: '1000000000',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WORKER: separate ? 'off' : 'inline',
      }),
      databaseUrl: target.url,
    }
    const { db } = openDatabase(target.url)
    await migrateToLatest(db)
    const key = await createKey(db, { account: 'bench', mode: 'test' })
    if (!separate && [IN_FLIGHT, PER_ENDPOINT, POLL_MS].some((v) => v !== undefined)) {
      // The inline worker with other settings: app.ts builds it from the config, so build one here
      // the same way and run the app at WORKER=off.
      config.worker = 'off'
    }
    app = await buildApp({ config, db })
    await app.ready()
    if (!separate && config.worker === 'off') {
      ownWorker = new WebhookWorker(
        db,
        {
          timeoutMs: config.webhookTimeoutMs,
          backoffScale: config.webhookBackoffScale,
          disableThreshold: config.webhookDisableThreshold,
          allowPrivateUrls: true,
          maxInFlight: IN_FLIGHT,
          maxPerEndpoint: PER_ENDPOINT,
          pollMs: POLL_MS,
        },
        { info: () => {}, error: (obj) => log(`worker error: ${JSON.stringify(obj)}`) },
      )
      ownWorker.start()
      // The first ANALYZE that the inline background work runs beside its sweep (db/statistics.ts).
      ownStatistics = new FirstStatistics(db, (error) => log(`statistics error: ${String(error)}`))
      ownStatistics.start()
    }
    for (let i = 0; i < ENDPOINTS; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/webhook-endpoints',
        headers: { authorization: `Bearer ${key.secret}` },
        payload: { url: `http://127.0.0.1:${receiver.port}/hooks/${i}`, enabled_events: ['*'] },
      })
      if (res.statusCode !== 201) throw new Error(`endpoint: ${res.statusCode} ${res.body}`)
    }
    if (separate) {
      for (let i = 0; i < WORKERS; i++) workers.push(await spawnWorker(target.url))
    }

    if (WARMUP > 0) {
      log(`${scenario}: warming up with ${WARMUP} events…`)
      await createEvents(app, key.secret, `${scenario}-warmup`, WARMUP)
      await waitForDeliveries(receiver, probe, WARMUP * ENDPOINTS, Date.now())
      await receiver.reset()
    }
    const expected = EVENTS * ENDPOINTS
    log(`${scenario}: creating ${EVENTS} events for ${ENDPOINTS} endpoints (${expected} deliveries)…`)
    const createSeconds = await createEvents(app, key.secret, scenario, EVENTS)
    const createdAllAt = Date.now()
    log(`  created in ${createSeconds.toFixed(1)} s; waiting for the deliveries…`)
    await waitForDeliveries(receiver, probe, expected + WARMUP * ENDPOINTS, createdAllAt, expected)
    const recordedAt = Date.now()
    // Anything still in flight (a duplicate) arrives within this pause.
    await sleep(500)
    const dump = await receiver.dump()

    const firstById = new Map<string, number>()
    let firstCreated = Number.POSITIVE_INFINITY
    let lastAt = 0
    const latencies: number[] = []
    for (let i = 0; i < dump.ids.length; i++) {
      const id = dump.ids[i] as string
      const at = dump.ats[i] as number
      if (firstById.has(id)) continue
      firstById.set(id, at)
      const created = dump.created[i] as number
      firstCreated = Math.min(firstCreated, created)
      lastAt = Math.max(lastAt, at)
      latencies.push(at - created)
    }
    if (TIMELINE) printTimeline(scenario, dump, firstCreated)
    latencies.sort((a, b) => a - b)
    const seconds = (lastAt - firstCreated) / 1000
    return {
      scenario,
      deliveries: firstById.size,
      duplicates: dump.ids.length - firstById.size,
      missing: expected - firstById.size,
      createSeconds,
      eventsPerSecond: EVENTS / createSeconds,
      seconds,
      deliveriesPerSecond: firstById.size / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies[latencies.length - 1] ?? 0,
      drainMs: lastAt - createdAllAt,
      recordedMs: recordedAt - createdAllAt,
    }
  } finally {
    for (const w of workers) w.child.kill('SIGTERM')
    await Promise.all(workers.map((w) => w.exited))
    await Promise.all([ownWorker?.stop(), ownStatistics?.stop()])
    await app?.close()
    await probe.destroy()
    await receiver.close()
    await target.cleanup()
  }
}

// ---- fairness and recover scenarios

interface InlineApp {
  app: FastifyInstance
  db: Db
  secret: string
  close(): Promise<void>
}

/** The API with its inline worker on `target`, and a key. */
async function inlineApp(target: Target, overrides: Record<string, string> = {}): Promise<InlineApp> {
  const config = {
    ...loadConfig({
      LOG_LEVEL: 'silent',
      RATE_LIMIT_MAX: '1000000000',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WORKER: 'inline',
      ...overrides,
    }),
    databaseUrl: target.url,
  }
  const { db } = openDatabase(target.url)
  await migrateToLatest(db)
  const key = await createKey(db, { account: 'bench', mode: 'test' })
  const app = await buildApp({ config, db })
  await app.ready()
  return { app, db, secret: key.secret, close: () => app.close() }
}

async function createEndpoint(api: InlineApp, url: string): Promise<string> {
  const res = await api.app.inject({
    method: 'POST',
    url: '/v1/webhook-endpoints',
    headers: { authorization: `Bearer ${api.secret}` },
    payload: { url, enabled_events: ['*'] },
  })
  if (res.statusCode !== 201) throw new Error(`endpoint: ${res.statusCode} ${res.body}`)
  return (JSON.parse(res.body) as { id: string }).id
}

interface Latency {
  count: number
  p50: number
  p99: number
  max: number
}

function latencyOf(dump: Dump, path: string): Latency {
  const seen = new Set<string>()
  const latencies: number[] = []
  dump.ids.forEach((id, i) => {
    if (dump.paths[i] !== path || seen.has(id)) return
    seen.add(id)
    latencies.push((dump.ats[i] as number) - (dump.created[i] as number))
  })
  latencies.sort((a, b) => a - b)
  return {
    count: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? 0,
  }
}

async function waitForPath(receiver: ReceiverThread, path: string, count: number) {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS
  for (;;) {
    const dump = await receiver.dump()
    const got = new Set(dump.ids.filter((_, i) => dump.paths[i] === path)).size
    if (got >= count || Date.now() > deadline) return got
    await sleep(200)
  }
}

/**
 * The healthy endpoint's event → receipt latency, alone and then beside nine hostile receivers,
 * each on a fresh database. Backoff scaled by 0.01 (retries after 0.6 s to 36 s, so the hostile
 * endpoints' retries fall due during the run) and auto-disable off, so they stay hostile
 * throughout; the default 10 s timeout.
 */
async function runHostile(postgres: boolean): Promise<{ alone: Latency; beside: Latency }> {
  const measure = async (hostile: boolean): Promise<Latency> => {
    const target = postgres ? await postgresTarget() : sqliteTarget()
    const receiver = await new ReceiverThread().start()
    const hostiles = hostile ? await new HostileThread().start() : undefined
    const api = await inlineApp(target, {
      WEBHOOK_BACKOFF_SCALE: '0.01',
      WEBHOOK_DISABLE_THRESHOLD: '1000',
    })
    try {
      await createEndpoint(api, `http://127.0.0.1:${receiver.port}/healthy`)
      for (const [name, port] of Object.entries(hostiles?.ports ?? {}))
        await createEndpoint(api, `http://127.0.0.1:${port}/${name}`)
      log(
        `  ${hostile ? 'beside nine hostile endpoints' : 'alone'}: ${HOSTILE_EVENTS} events at ${HOSTILE_RATE}/s…`,
      )
      await createEvents(api.app, api.secret, `hostile-${hostile}`, HOSTILE_EVENTS, HOSTILE_RATE)
      const got = await waitForPath(receiver, '/healthy', HOSTILE_EVENTS)
      if (got < HOSTILE_EVENTS) log(`  only ${got} of ${HOSTILE_EVENTS} reached the healthy endpoint`)
      return latencyOf(await receiver.dump(), '/healthy')
    } finally {
      await api.close()
      await hostiles?.close()
      await receiver.close()
      await target.cleanup()
    }
  }
  return { alone: await measure(false), beside: await measure(true) }
}

interface RecoverResult {
  recoverMs: number
  heapGrowthMb: number
  recovered: number
  /** Recovered deliveries recorded succeeded when the wait ended (all of them, or at the time limit). */
  succeeded: number
  deliverSeconds: number
  deliveriesPerSecond: number
  others: Latency
}

/** `count` events, each with a failed delivery to `endpointId`, written straight into the tables. */
async function seedFailedDeliveries(db: Db, endpointId: string, accountId: string, count: number) {
  const now = Date.now()
  for (let i = 0; i < count; i += 500) {
    const events = Array.from({ length: Math.min(500, count - i) }, (_, j) => {
      const id = `evt_seed${String(i + j).padStart(10, '0')}`
      return {
        id,
        account_id: accountId,
        livemode: 0 as const,
        type: 'operator.created',
        created_at: now,
        dispatched_at: now,
        payload: JSON.stringify({
          object: 'event',
          id,
          type: 'operator.created',
          api_version: '2026-11-22',
          livemode: false,
          created: new Date(now).toISOString(),
          data: { object: { object: 'operator', id: `op_seed${i + j}` } },
        }),
      }
    })
    await db.insertInto('events').values(events).execute()
    await db
      .insertInto('webhook_deliveries')
      .values(
        events.map((e) => ({
          id: `whd_seed${e.id.slice(8)}`,
          account_id: accountId,
          livemode: 0 as const,
          endpoint_id: endpointId,
          event_id: e.id,
          event_type: e.type,
          status: 'failed' as const,
          scheduled_attempts: 6,
          next_attempt_at: null,
          locked_until: null,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute()
  }
}

/**
 * One endpoint with RECOVER_DELIVERIES failed deliveries is recovered while two other endpoints
 * get RECOVER_SIDE_RATE events/s: how long the request takes and how much heap it grows, how fast
 * the recovered endpoint then receives, and the other endpoints' latency meanwhile.
 */
async function runRecover(postgres: boolean): Promise<RecoverResult> {
  const target = postgres ? await postgresTarget() : sqliteTarget()
  const receiver = await new ReceiverThread().start()
  const api = await inlineApp(target)
  try {
    const recovering = await createEndpoint(api, `http://127.0.0.1:${receiver.port}/recovering`)
    for (const name of ['other-1', 'other-2'])
      await createEndpoint(api, `http://127.0.0.1:${receiver.port}/${name}`)
    const { account_id: accountId } = await api.db
      .selectFrom('webhook_endpoints')
      .select('account_id')
      .where('id', '=', recovering)
      .executeTakeFirstOrThrow()
    log(`  seeding ${RECOVER_DELIVERIES} failed deliveries…`)
    await seedFailedDeliveries(api.db, recovering, accountId, RECOVER_DELIVERIES)
    // Side traffic for the whole run: events the other endpoints (and the recovering one) receive.
    let sideEvents = 0
    let sideRunning = true
    const side = (async () => {
      while (sideRunning) {
        await createEvents(api.app, api.secret, `side-${sideEvents}`, RECOVER_SIDE_RATE, RECOVER_SIDE_RATE)
        sideEvents += RECOVER_SIDE_RATE
      }
    })()
    await sleep(2000)
    log('  recovering…')
    const heapBefore = process.memoryUsage().heapUsed
    let heapPeak = heapBefore
    const sampler = setInterval(() => {
      heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)
    }, 50)
    const started = performance.now()
    const res = await api.app.inject({
      method: 'POST',
      url: `/v1/webhook-endpoints/${recovering}/recover`,
      headers: { authorization: `Bearer ${api.secret}` },
      payload: { since: new Date(Date.now() - 3_600_000).toISOString() },
    })
    const recoverMs = performance.now() - started
    clearInterval(sampler)
    if (res.statusCode !== 200) throw new Error(`recover: ${res.statusCode} ${res.body}`)
    const { recovered } = JSON.parse(res.body) as { recovered: number }
    log(`  recovered ${recovered} in ${(recoverMs / 1000).toFixed(1)} s; waiting for them…`)
    const deliverStart = Date.now()
    let succeeded = 0
    for (;;) {
      const [row] = await api.db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('endpoint_id', '=', recovering)
        .where('status', '=', 'succeeded')
        .where('id', 'like', 'whd_seed%')
        .execute()
      succeeded = Number(row?.n)
      if (succeeded >= RECOVER_DELIVERIES || Date.now() - deliverStart > DRAIN_TIMEOUT_MS) break
      await sleep(500)
    }
    const deliverSeconds = (Date.now() - deliverStart) / 1000
    sideRunning = false
    await side
    await waitForPath(receiver, '/other-1', sideEvents)
    return {
      recoverMs,
      heapGrowthMb: (heapPeak - heapBefore) / 2 ** 20,
      recovered,
      succeeded,
      deliverSeconds,
      deliveriesPerSecond: succeeded / deliverSeconds,
      others: latencyOf(await receiver.dump(), '/other-1'),
    }
  } finally {
    await api.close()
    await receiver.close()
    await target.cleanup()
  }
}

function printTimeline(scenario: string, dump: Dump, start: number) {
  const seconds = new Map<number, { created: number; received: number; latencies: number[] }>()
  const slot = (t: number) => {
    const s = Math.floor((t - start) / 1000)
    let entry = seconds.get(s)
    if (!entry) {
      entry = { created: 0, received: 0, latencies: [] }
      seconds.set(s, entry)
    }
    return entry
  }
  for (let i = 0; i < dump.ids.length; i++) {
    const created = dump.created[i] as number
    const at = dump.ats[i] as number
    slot(created).created += 1
    const r = slot(at)
    r.received += 1
    r.latencies.push(at - created)
  }
  log(`${scenario} timeline (s: deliveries whose event was created, deliveries received, median latency)`)
  for (const [s, e] of [...seconds].sort((a, b) => a[0] - b[0])) {
    e.latencies.sort((a, b) => a - b)
    log(`  ${s}: ${e.created} created, ${e.received} received, p50 ${percentile(e.latencies, 50)} ms`)
  }
}

const THROUGHPUT_SCENARIOS = ['sqlite-inline', 'postgres-inline', 'postgres-workers']
const HOSTILE_SCENARIOS = ['sqlite-hostile', 'postgres-hostile']
const RECOVER_SCENARIOS = ['sqlite-recover', 'postgres-recover']

/** The fairness and recover scenarios asked for; returns whether one missed its target. */
async function runOperationsScenarios(): Promise<boolean> {
  let failed = false
  const ms = (l: Latency) => `${l.p50} | ${l.p99} | ${l.max}`
  for (const scenario of SCENARIOS.filter((s) => HOSTILE_SCENARIOS.includes(s))) {
    log(`${scenario}:`)
    const { alone, beside } = await runHostile(scenario.startsWith('postgres'))
    console.log('')
    console.log(
      `${scenario}: ${HOSTILE_EVENTS} events at ${HOSTILE_RATE}/s, the healthy endpoint's latency (ms)`,
    )
    console.log('| healthy endpoint | received | p50 | p99 | max |')
    console.log('|---|---:|---:|---:|---:|')
    console.log(`| alone | ${alone.count} | ${ms(alone)} |`)
    console.log(`| beside nine hostile endpoints | ${beside.count} | ${ms(beside)} |`)
    if (beside.count < HOSTILE_EVENTS || beside.p99 > 2 * alone.p99) {
      failed = true
      console.error(
        `MISS ${scenario}: p99 beside hostile endpoints not within 2× alone, or deliveries missing`,
      )
    }
  }
  for (const scenario of SCENARIOS.filter((s) => RECOVER_SCENARIOS.includes(s))) {
    log(`${scenario}:`)
    const r = await runRecover(scenario.startsWith('postgres'))
    console.log('')
    console.log(`${scenario}: recover of ${RECOVER_DELIVERIES.toLocaleString('en-US')} failed deliveries`)
    console.log(
      '| recovered | request s | heap growth MB | succeeded | after s | deliveries/s | other endpoint p50 / p99 / max ms |',
    )
    console.log('|---:|---:|---:|---:|---:|---:|---:|')
    console.log(
      `| ${r.recovered.toLocaleString('en-US')} | ${(r.recoverMs / 1000).toFixed(1)} | ${r.heapGrowthMb.toFixed(0)} | ${r.succeeded.toLocaleString('en-US')} | ${r.deliverSeconds.toFixed(0)} | ${r.deliveriesPerSecond.toFixed(0)} | ${r.others.p50} / ${r.others.p99} / ${r.others.max} |`,
    )
    if (r.recovered < RECOVER_DELIVERIES || r.others.p99 >= TARGET_P99_MS) {
      failed = true
      console.error(
        `MISS ${scenario}: not all recovered, or other endpoints' p99 not under ${TARGET_P99_MS} ms`,
      )
    }
  }
  return failed
}

async function main() {
  const known = [...THROUGHPUT_SCENARIOS, ...HOSTILE_SCENARIOS, ...RECOVER_SCENARIOS]
  const unknown = SCENARIOS.filter((s) => !known.includes(s))
  if (unknown.length) throw new Error(`Unknown scenario(s): ${unknown.join(', ')}`)
  const operationsFailed = await runOperationsScenarios()
  const results: Result[] = []
  for (const scenario of SCENARIOS.filter((s) => THROUGHPUT_SCENARIOS.includes(s)))
    results.push(await runScenario(scenario))
  if (results.length === 0) process.exit(operationsFailed ? 1 : 0)

  console.log('')
  console.log(
    `${EVENTS.toLocaleString('en-US')} events × ${ENDPOINTS} endpoints${WARMUP ? ` (after ${WARMUP.toLocaleString('en-US')} warm-up events)` : ''}, ${CONCURRENCY} API requests in flight` +
      `${RATE ? `, offered at ${RATE} events/s` : ''}, ${os.cpus().length} CPUs`,
  )
  console.log('')
  console.log(
    '| scenario | deliveries | dup. | events/s (API) | deliveries/s | p50 ms | p99 ms | max ms | last receipt after last event | all recorded after |',
  )
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  let failed = operationsFailed
  for (const r of results) {
    console.log(
      `| ${r.scenario} | ${r.deliveries.toLocaleString('en-US')} | ${r.duplicates} | ${r.eventsPerSecond.toFixed(0)} | ${r.deliveriesPerSecond.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.max} | ${(r.drainMs / 1000).toFixed(1)} s | ${(r.recordedMs / 1000).toFixed(1)} s |`,
    )
    const offered = RATE * ENDPOINTS
    const rateMiss =
      RATE > 0
        ? offered < TARGET_RATE || r.deliveriesPerSecond < 0.99 * offered
        : r.deliveriesPerSecond < TARGET_RATE
    const misses = [
      r.missing > 0 ? `${r.missing} deliveries never arrived` : '',
      rateMiss
        ? RATE > 0
          ? `did not keep up with ${offered} deliveries/s offered (or offered under ${TARGET_RATE})`
          : `under ${TARGET_RATE} deliveries/s`
        : '',
      r.p99 >= TARGET_P99_MS ? `p99 not under ${TARGET_P99_MS} ms` : '',
    ].filter(Boolean)
    if (misses.length) {
      failed = true
      console.error(`MISS ${r.scenario}: ${misses.join('; ')}`)
    }
  }
  process.exit(failed ? 1 : 0)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
