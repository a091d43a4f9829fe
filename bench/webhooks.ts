/**
 * Webhook delivery throughput and latency: 10 endpoints subscribed to `*`, 10,000 events created
 * through the API (`POST /v1/operators` with `app.inject`), so 100,000 deliveries to a receiver on
 * 127.0.0.1 that answers 200 at once and records when each `X-Service-Id` arrived. Not a test:
 * `npm run bench:webhooks`.
 *
 * Scenarios (BENCH_SCENARIOS, comma-separated, default all three):
 *   sqlite-inline      the API with its inline worker on a fresh SQLite file
 *   postgres-inline    the API with its inline worker on PostgreSQL
 *   postgres-workers   the API at WORKER=off and BENCH_WORKERS (default 2) `cli worker` processes
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
import pg from 'pg'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { type Db, openDatabase } from '../src/db/connection.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { createKey } from '../src/modules/keys/service.js'
import { WebhookWorker } from '../src/modules/webhooks/worker.js'

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
  })
})
server.keepAliveTimeout = 120000
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'port', port: server.address().port }))
parentPort.on('message', (m) => {
  if (m === 'count') parentPort.postMessage({ type: 'count', unique: seen.size, total: ids.length })
  else if (m === 'dump') parentPort.postMessage({ type: 'dump', ids, ats, created })
  else if (m === 'reset') { seen.clear(); ids.length = 0; ats.length = 0; created.length = 0; parentPort.postMessage({ type: 'reset' }) }
  else if (m === 'close') { server.closeAllConnections(); server.close(() => process.exit(0)) }
})
`

interface Dump {
  ids: string[]
  ats: number[]
  created: number[]
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
  const schema = `bench_webhooks_${randomBytes(4).toString('hex')}`
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }
  await admin(`create schema ${schema}`)
  const url = new URL(POSTGRES_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return {
    url: url.toString(),
    cleanup: async () => {
      if (KEEP) log(`  kept schema ${schema}`)
      else await admin(`drop schema if exists ${schema} cascade`)
    },
  }
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
      if (out.includes('webhook worker started')) {
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

async function createEvents(app: FastifyInstance, secret: string, prefix: string, count: number) {
  const headers = { authorization: `Bearer ${secret}` }
  let next = 0
  const started = performance.now()
  const lane = async () => {
    for (;;) {
      const i = next++
      if (i >= count) return
      if (RATE > 0) {
        const due = started + (i / RATE) * 1000
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
    await ownWorker?.stop()
    await app?.close()
    await probe.destroy()
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

async function main() {
  const unknown = SCENARIOS.filter(
    (s) => !['sqlite-inline', 'postgres-inline', 'postgres-workers'].includes(s),
  )
  if (unknown.length) throw new Error(`Unknown scenario(s): ${unknown.join(', ')}`)
  const results: Result[] = []
  for (const scenario of SCENARIOS) results.push(await runScenario(scenario))

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
  let failed = false
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
