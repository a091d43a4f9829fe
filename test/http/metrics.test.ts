import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openServiceDatabase } from '../../src/db/connection.js'
import {
  METRICS_DATABASE_TIMEOUT_MS,
  type MetricsListener,
  startMetricsListener,
  UNMATCHED_ROUTE,
} from '../../src/http/metrics.js'
import { type ApiClient, buildTestApp, type TestApp } from '../helpers/app.js'
import { expectError, type Operator, uniq, waitUntil } from '../helpers/assertions.js'
import { useTestClock } from '../helpers/clock.js'
import { dialect, holdDatabase } from '../helpers/database.js'
import { builtScript, type Child, killAll, ROOT, START_MS, spawnChild } from '../helpers/process.js'
import { listeningUrl, startServerProcess } from '../helpers/server-process.js'
import { WebhookReceiver } from '../helpers/webhook-receiver.js'
import { sessionHelpers } from '../modules/sessions/helpers.js'

/**
 * The Prometheus metrics, scraped from their own listener as Prometheus would: counts that move by
 * exactly what known requests did, route templates as labels (never an id), gauges read from the
 * database, and the same listener in `npm start` and in `cli worker` as separate processes.
 */

const HOUR = 3_600_000
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined }

/**
 * The samples of a text exposition, keyed by name and sorted labels (`name{a="x",b="y"}`), so a test
 * names a series without depending on the order prom-client writes its labels in.
 */
function parseSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match) throw new Error(`not a sample line: ${line}`)
    const labels = [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(
      ([, k, v]) => `${k}="${v}"`,
    )
    samples.set(`${match[1]}{${labels.sort().join(',')}}`, Number(match[3]))
  }
  return samples
}

const series = (name: string, labels: Record<string, string> = {}) =>
  `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',')}}`

interface Scrape {
  text: string
  samples: Map<string, number>
  /** A series' value; 0 for one not written yet (a counter no request has moved). */
  value(name: string, labels?: Record<string, string>): number
}

async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  const text = await res.text()
  const samples = parseSamples(text)
  return { text, samples, value: (name, labels) => samples.get(series(name, labels)) ?? 0 }
}

afterAll(killAll)

describe(`GET /metrics on its own listener (${dialect})`, () => {
  const clock = useTestClock()
  let t: TestApp
  let metrics: MetricsListener
  let api: ApiClient
  const { world } = sessionHelpers(() => t)

  beforeAll(async () => {
    // Private URLs: the pending delivery's endpoint is on loopback, where nothing sends to it.
    t = await buildTestApp({ metricsPort: 0, webhookAllowPrivateUrls: true })
    metrics = await startMetricsListener({ host: '127.0.0.1', port: 0, db: t.db, log: silent })
    api = t.client((await t.key()).secret)
  })
  afterAll(async () => {
    await metrics?.close()
    await t?.close()
  })

  it('counts known requests exactly, by route template, with no raw path or id in any label', async () => {
    const before = await scrape(metrics.url)
    const body = { ident: uniq('M'), name: 'Ada' }
    const first = await api.post<Operator>('/v1/operators', body, { 'idempotency-key': 'metrics-1' })
    expect(first.status).toBe(201)
    expect((await api.post('/v1/operators', { ident: uniq('M'), name: 'Grace' })).status).toBe(201)
    expect((await api.get(`/v1/operators/${first.body.id}`)).status).toBe(200)
    expect((await api.get('/v1/no-such-resource/op_01HZZZZZZZZZZZZZZZZZZZZZZZ')).status).toBe(404)
    const replay = await api.post('/v1/operators', body, { 'idempotency-key': 'metrics-1' })
    expect(replay.headers['idempotent-replayed']).toBe('true')
    const after = await scrape(metrics.url)

    const delta = (name: string, labels?: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels)
    const created = { method: 'POST', route: '/v1/operators' }
    const retrieved = { method: 'GET', route: '/v1/operators/:id' }
    const unmatched = { method: 'GET', route: UNMATCHED_ROUTE }
    expect(delta('http_requests_total', { ...created, status: '201' })).toBe(3)
    expect(delta('http_requests_total', { ...retrieved, status: '200' })).toBe(1)
    expect(delta('http_requests_total', { ...unmatched, status: '404' })).toBe(1)
    expect(delta('http_request_duration_seconds_count', created)).toBe(3)
    expect(delta('http_request_duration_seconds_count', retrieved)).toBe(1)
    expect(delta('http_request_duration_seconds_bucket', { ...retrieved, le: '+Inf' })).toBe(1)
    expect(delta('http_request_duration_seconds_sum', retrieved)).toBeGreaterThan(0)
    expect(delta('idempotency_replays_total')).toBe(1)
    // The two creates recorded one event each; no worker runs here to relay them.
    expect(delta('events_undispatched')).toBe(2)
    // Every request of the test is in these three series, and no other request series moved.
    const moved = [...after.samples.keys()].filter(
      (k) => k.startsWith('http_requests_total{') && after.samples.get(k) !== before.samples.get(k),
    )
    expect(moved.sort()).toEqual(
      [
        series('http_requests_total', { ...created, status: '201' }),
        series('http_requests_total', { ...retrieved, status: '200' }),
        series('http_requests_total', { ...unmatched, status: '404' }),
      ].sort(),
    )
    expect(after.text).not.toContain(first.body.id)
    expect(after.text).not.toContain('no-such-resource')
    // The process's default metrics are served beside them.
    expect(after.value('process_cpu_user_seconds_total')).toBeGreaterThan(0)
    expect(after.text).toContain('nodejs_eventloop_lag_seconds')
    expect(after.value('metrics_database_up')).toBe(1)
  })

  it('docs/operations.md lists every series served, and its alert rules name only those', async () => {
    const docs = readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8')
    const start = docs.indexOf('\n## Metrics\n')
    const section = docs.slice(start, docs.indexOf('\n## ', start + 1))
    // prom-client's defaults are listed as `process_*`, `nodejs_*`.
    const served = [...(await scrape(metrics.url)).text.matchAll(/^# TYPE (\S+)/gm)]
      .map((m) => m[1] as string)
      .filter((name) => !/^(process|nodejs)_/.test(name))
    expect(served.filter((name) => !section.includes(`| \`${name}\` |`))).toEqual([])
    const expressions = [...section.matchAll(/^ +expr: (.+)$/gm)].map((m) => m[1] as string)
    expect(expressions).toHaveLength(3)
    const named = expressions.flatMap((e) => [...e.matchAll(/\b[a-z]+(?:_[a-z]+)+\b/g)].map((m) => m[0]))
    expect(named.length).toBeGreaterThanOrEqual(3)
    expect(named.filter((name) => !served.includes(name))).toEqual([])
  })

  it('is never served on the API port: /metrics there is an ordinary unknown path', async () => {
    // With a key or without: the error envelope of an unknown path, with its request id.
    for (const caller of [api, t.client(undefined)]) {
      const error = expectError(await caller.get('/metrics'), 404, 'not_found', 'route_not_found')
      expect(error.message).toBe('Unrecognized request URL (GET /metrics).')
    }
    // And the listener serves /metrics alone.
    expect((await fetch(metrics.url.replace('/metrics', '/v1/operators'))).status).toBe(404)
  })

  it('reads the gauges from the database at scrape time: an open session, a pending delivery and its age', async () => {
    const w = await world()
    const before = await scrape(metrics.url)
    const scan = await w.api.post<{ result: string }>('/v1/scans', {
      device_id: w.device.code,
      operator_id: w.operator.id,
      time: new Date().toISOString(),
    })
    expect(scan.body.result).toBe('checked_in')
    expect((await scrape(metrics.url)).value('sessions_open') - before.value('sessions_open')).toBe(1)

    // No worker runs: a send-test's delivery stays pending. Made two minutes old by the test.
    const endpoint = await w.api.post<{ id: string }>('/v1/webhook-endpoints', {
      url: 'http://127.0.0.1:9/metrics',
      enabled_events: ['*'],
    })
    expect(endpoint.status).toBe(201)
    const delivery = await w.api.post<{ id: string }>(`/v1/webhook-endpoints/${endpoint.body.id}/send-test`)
    expect(delivery.status).toBe(201)
    await t.db
      .updateTable('webhook_deliveries')
      .set({ created_at: clock.now() - 120_000 })
      .where('id', '=', delivery.body.id)
      .execute()
    const after = await scrape(metrics.url)
    expect(after.value('webhook_deliveries_pending') - before.value('webhook_deliveries_pending')).toBe(1)
    // Its age on the service's clock, which stands still: exactly the two minutes.
    expect(after.value('webhook_oldest_pending_seconds')).toBe(120)
    expect(after.value('metrics_database_up')).toBe(1)
  })

  it(`a database that answers late: the scrape answers after ${METRICS_DATABASE_TIMEOUT_MS} ms with the gauges unknown`, async () => {
    // SQLite: the process's one connection is held. PostgreSQL: another connection holds a lock on
    // a table the gauges count. The hold ends only after the scrape has answered, so the answer
    // cannot have waited for the database: it gave up on it (after its timeout, in real time).
    const hold = await holdDatabase(t.db, 'sessions')
    try {
      const late = await scrape(metrics.url)
      expect(late.value('metrics_database_up')).toBe(0)
      expect(late.value('sessions_open')).toBeNaN()
      expect(late.value('process_cpu_user_seconds_total')).toBeGreaterThan(0)
    } finally {
      await hold.release()
    }
    const back = await scrape(metrics.url)
    expect(back.value('metrics_database_up')).toBe(1)
    expect(back.value('sessions_open')).not.toBeNaN()
  })

  it('a database that does not answer leaves its gauges unknown (NaN) and still serves the rest', async () => {
    const { db } = openServiceDatabase({ databaseUrl: t.database.url })
    // Used once first: Kysely opens a handle at its first query, and a destroy before that is undone by it.
    await db.selectFrom('sessions').select('id').limit(1).execute()
    await db.destroy()
    const broken = await startMetricsListener({ host: '127.0.0.1', port: 0, db, log: silent })
    try {
      const result = await scrape(broken.url)
      expect(result.value('metrics_database_up')).toBe(0)
      for (const gauge of [
        'webhook_deliveries_pending',
        'webhook_oldest_pending_seconds',
        'events_undispatched',
        'sessions_open',
      ])
        expect(result.value(gauge)).toBeNaN()
      expect(result.value('process_cpu_user_seconds_total')).toBeGreaterThan(0)
    } finally {
      await broken.close()
    }
  })
})

describe(`metrics of the processes an operator starts (${dialect})`, () => {
  /** A child's metrics URL, from the line the listener logs (METRICS_PORT=0 picks the port). */
  async function metricsUrl(child: Child): Promise<string> {
    const match = await child.waitForStdout(
      /"msg":"metrics listening at (http:\/\/127\.0\.0\.1:\d+\/metrics)"/,
    )
    return match[1] as string
  }

  it(
    'the server (src/server.ts, what npm start runs) serves /metrics beside the API when METRICS_PORT is set, and closes it on SIGTERM',
    async () => {
      const t = await buildTestApp()
      try {
        const server = startServerProcess({
          DATABASE_URL: t.database.url,
          METRICS_PORT: '0',
          METRICS_HOST: undefined,
          WORKER: 'off',
        }).child
        const url = await metricsUrl(server)
        const base = await listeningUrl(server)
        expect((await fetch(`${base}/healthz`)).status).toBe(200)
        expect((await fetch(`${base}/metrics`)).status).toBe(404)
        const result = await scrape(url)
        expect(result.value('http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBe(
          1,
        )
        expect(
          result.value('http_requests_total', { method: 'GET', route: UNMATCHED_ROUTE, status: '404' }),
        ).toBe(1)
        server.kill('SIGTERM')
        expect((await server.waitForExit(30_000)).code).toBe(0)
        await expect(fetch(url)).rejects.toThrow()
      } finally {
        await t.close()
      }
    },
    START_MS + 60_000,
  )

  it(
    'cli worker serves /metrics when METRICS_PORT is set, counting its deliveries and sweep closures',
    async () => {
      const t = await buildTestApp({ webhookAllowPrivateUrls: true })
      const receiver = await WebhookReceiver.start()
      try {
        const w = await sessionHelpers(() => t).world()
        const ok = receiver.freshPath('ok')
        const failing = receiver.freshPath('failing')
        receiver.respond(failing, { status: 500 })
        for (const path of [ok, failing]) {
          const res = await w.api.post('/v1/webhook-endpoints', {
            url: receiver.url(path),
            enabled_events: ['operator.created'],
          })
          expect(res.status).toBe(201)
        }
        // A check-in 17 hours old: the worker's first sweep, at its start, closes it.
        const scan = await w.api.post<{ result: string }>('/v1/scans', {
          device_id: w.device.code,
          operator_id: w.operator.id,
          time: new Date(Date.now() - 17 * HOUR).toISOString(),
        })
        expect(scan.body.result).toBe('checked_in')

        const worker = spawnChild(process.execPath, [builtScript('cli'), 'worker'], {
          env: {
            DATABASE_URL: t.database.url,
            METRICS_PORT: '0',
            METRICS_HOST: undefined,
            WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
            WEBHOOK_BACKOFF_SCALE: undefined,
            WORKER: undefined,
            LOG_LEVEL: 'info',
          },
        })
        const url = await metricsUrl(worker)
        // Three operator.created, each delivered to both endpoints (the world's own came before them).
        for (let i = 0; i < 3; i++)
          expect((await w.api.post('/v1/operators', { ident: uniq('W'), name: `Worker ${i}` })).status).toBe(
            201,
          )

        // The receiver sees an attempt before the worker records it: wait for the counts themselves.
        const result = await waitUntil(
          () => scrape(url),
          (s) =>
            s.value('webhook_deliveries_total', { outcome: 'succeeded' }) >= 3 &&
            s.value('webhook_deliveries_total', { outcome: 'retry' }) >= 3 &&
            s.value('sessions_closed_by_sweep_total') >= 1,
          { timeoutMs: 30_000, everyMs: 100 },
        )
        expect(receiver.requestsTo(ok)).toHaveLength(3)
        expect(result.value('webhook_deliveries_total', { outcome: 'succeeded' })).toBe(3)
        // The first retry is a minute away (WEBHOOK_BACKOFF_SCALE 1): one attempt each so far.
        expect(result.value('webhook_deliveries_total', { outcome: 'retry' })).toBe(3)
        expect(result.value('webhook_deliveries_total', { outcome: 'failed' })).toBe(0)
        expect(result.value('webhook_delivery_duration_seconds_count')).toBe(6)
        expect(result.value('sessions_closed_by_sweep_total')).toBe(1)
        // Its gauges read the same database: the failing endpoint's three wait for their retry.
        expect(result.value('webhook_deliveries_pending')).toBe(3)
        // A worker answers no HTTP requests of the API.
        expect(result.text).not.toMatch(/^http_requests_total\{/m)
        worker.kill('SIGTERM')
        expect((await worker.waitForExit(30_000)).code).toBe(0)
      } finally {
        await receiver.close()
        await t.close()
      }
    },
    START_MS + 60_000,
  )
})
