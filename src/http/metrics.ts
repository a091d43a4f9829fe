import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { Gauge, Registry } from 'prom-client'
import { collectProcessMetrics, httpRequestDuration, httpRequests, processRegistry } from '../core/metrics.js'
import type { Db } from '../db/types.js'
import { clock } from '../lib/clock.js'
import { listenFailure } from '../lib/listen-failure.js'
import { withinTimeout } from '../lib/timeout.js'
import { countUndispatchedEvents } from '../modules/events/service.js'
import { countOpenSessions } from '../modules/sessions/service.js'
import { pendingDeliveryBacklog } from '../modules/webhooks/service.js'

/**
 * How long a scrape waits for the database gauges: a database that hangs must not hang the
 * scrape too (Prometheus's own timeout is 10 s by default), nor hide the process metrics.
 */
export const METRICS_DATABASE_TIMEOUT_MS = 2000

/** The `route` of a request that matched no route: one label, whatever the path asked for. */
export const UNMATCHED_ROUTE = 'unmatched'

interface Logger {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

/**
 * Counts every answer of the app, after it is sent: `route` is the template the router matched
 * (`/v1/sessions/:id`), never the path, so ids never become series. A counter increment and a
 * histogram observation per request; nothing reads the database.
 */
export function registerRequestMetrics(app: FastifyInstance): void {
  // A callback hook rather than an async one: no promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE
    httpRequests.inc({ method: request.method, route, status: reply.statusCode })
    httpRequestDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000)
    done()
  })
}

/**
 * How long a worker's loop may go without finishing a pass before `GET /healthz` on its metrics
 * listener says it is stalled. A loop waits at most a second between passes, and a pass is a few
 * statements: a minute without one is a call that does not return (a hung connection), which a
 * restart cures, never mere load.
 */
export const LOOP_STALL_MS = 60_000

/** What `GET /healthz` on the metrics listener answers: 200 when `alive`, else 503; the rest is its body. */
export type Liveness = () => { alive: boolean } & Record<string, unknown>

/**
 * A worker's liveness from when each of its loops last finished a pass (`WebhookWorker.lastPassAt`):
 * alive while every one did within `stallMs`, by the process clock.
 */
export function loopLiveness(
  lastPassAt: Readonly<Record<string, number>>,
  stallMs = LOOP_STALL_MS,
): Liveness {
  return () => {
    const now = clock.now()
    const loops = Object.fromEntries(
      Object.entries(lastPassAt).map(([name, at]) => [name, { since_last_pass_ms: now - at }]),
    )
    const alive = Object.values(lastPassAt).every((at) => now - at <= stallMs)
    return { alive, status: alive ? 'alive' : 'stalled', stall_after_ms: stallMs, loops }
  }
}

export interface MetricsListener {
  /** Where `GET /metrics` answers, with the port really bound (METRICS_PORT=0 picks one). */
  url: string
  close(): Promise<void>
}

/**
 * The second listener (METRICS_PORT on METRICS_HOST): `GET /metrics` in the Prometheus text format,
 * and, given a `liveness` (`cli worker`, which has no API port for a probe), `GET /healthz`; never on
 * the API's port, so the API's clients and its rate limit never see it. A plain `node:http` server:
 * no hooks, auth or envelope to go through, and it keeps answering the process metrics while the API
 * is busy or its database is not.
 */
export async function startMetricsListener(options: {
  host: string
  port: number
  db: Db
  log: Logger
  liveness?: Liveness
}): Promise<MetricsListener> {
  const { host, port, db, log, liveness } = options
  collectProcessMetrics()
  const registry = Registry.merge([processRegistry, databaseGauges(db, log)])
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '').split('?', 1)[0]
    const readOnly = request.method === 'GET' || request.method === 'HEAD'
    if (path === '/healthz' && liveness && readOnly) {
      const { alive, ...body } = liveness()
      response
        .writeHead(alive ? 200 : 503, { 'content-type': 'application/json; charset=utf-8' })
        .end(request.method === 'HEAD' ? undefined : JSON.stringify(body))
      return
    }
    if (path !== '/metrics' || !readOnly) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n')
      return
    }
    registry.metrics().then(
      (text) =>
        response
          .writeHead(200, { 'content-type': registry.contentType })
          .end(request.method === 'HEAD' ? undefined : text),
      (error: unknown) => {
        log.error({ err: error }, 'metrics scrape failed')
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('scrape failed\n')
      },
    )
  })
  await new Promise<void>((resolve, reject) => {
    const failed = (error: unknown) =>
      reject(listenFailure(error, { host, port, hostVariable: 'METRICS_HOST', portVariable: 'METRICS_PORT' }))
    server.once('error', failed)
    server.listen(port, host, () => {
      server.off('error', failed)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  const url = `http://${shownHost}:${address.port}/metrics`
  log.info({ url }, `metrics listening at ${url}`)
  return {
    url,
    // close() ends the idle keep-alive connections too (Node.js 19+); a scrape in progress finishes.
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

interface DatabaseReading {
  pendingDeliveries: number
  oldestPendingCreatedAt: number | undefined
  undispatchedEvents: number
  openSessions: number
}

/** Each read uses a partial index that holds only the rows it counts (see each repository). */
async function readDatabase(db: Db): Promise<DatabaseReading> {
  const [backlog, undispatchedEvents, openSessions] = await Promise.all([
    pendingDeliveryBacklog(db),
    countUndispatchedEvents(db),
    countOpenSessions(db),
  ])
  return {
    pendingDeliveries: backlog.count,
    oldestPendingCreatedAt: backlog.oldestCreatedAt,
    undispatchedEvents,
    openSessions,
  }
}

/**
 * The gauges that count rows, read once per scrape for all of them and within
 * METRICS_DATABASE_TIMEOUT_MS. A read that fails or is late sets them to NaN (unknown, rather than a
 * 0 that looks healthy) and `metrics_database_up` to 0. While a late read still runs, later scrapes
 * wait on it rather than start another: a slow database gets one metrics query at a time.
 */
function databaseGauges(db: Db, log: Logger): Registry {
  const registry = new Registry()
  let query: Promise<DatabaseReading> | undefined
  let scrape: Promise<void> | undefined
  // Every gauge's collect is called in the same turn of a scrape: they share one reading.
  const collect = () => {
    scrape ??= readInto().finally(() => {
      scrape = undefined
    })
    return scrape
  }
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [registry], collect })
  const pending = gauge('webhook_deliveries_pending', 'Webhook deliveries waiting to be sent or retried')
  const oldest = gauge(
    'webhook_oldest_pending_seconds',
    'Age of the oldest pending webhook delivery (0 when none is pending)',
  )
  const undispatched = gauge(
    'events_undispatched',
    'Events recorded but not yet relayed into webhook deliveries (the outbox backlog)',
  )
  const open = gauge(
    'sessions_open',
    'Open sessions (checked in, not yet checked out), every account and mode',
  )
  const up = gauge(
    'metrics_database_up',
    `1 when this scrape read the database gauges within ${METRICS_DATABASE_TIMEOUT_MS} ms, else 0 (and they are NaN)`,
  )

  async function readInto(): Promise<void> {
    query ??= readDatabase(db).finally(() => {
      query = undefined
    })
    let reading: DatabaseReading | undefined
    try {
      reading = await withinTimeout(query, METRICS_DATABASE_TIMEOUT_MS, () => undefined)
      if (!reading)
        log.warn({}, `metrics: the database did not answer within ${METRICS_DATABASE_TIMEOUT_MS} ms`)
    } catch (error) {
      log.warn({ err: error }, 'metrics: the database gauges could not be read')
    }
    if (!reading) {
      for (const g of [pending, oldest, undispatched, open]) g.set(Number.NaN)
      up.set(0)
      return
    }
    pending.set(reading.pendingDeliveries)
    oldest.set(
      reading.oldestPendingCreatedAt === undefined
        ? 0
        : Math.max(0, (clock.now() - reading.oldestPendingCreatedAt) / 1000),
    )
    undispatched.set(reading.undispatchedEvents)
    open.set(reading.openSessions)
    up.set(1)
  }
  return registry
}
