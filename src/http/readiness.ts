import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { errors } from '../core/errors.js'
import { missingMigrations } from '../db/migrate.js'
import type { Db } from '../db/types.js'
import { withinTimeout } from '../lib/timeout.js'
import { sendError } from './error-handler.js'
import { newRequestId } from './request-id.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The process is shutting down (server.ts, on SIGTERM): `/readyz` answers 503 from now on, so
     * that load balancers take the process out of rotation while it still serves.
     */
    beginShutdown(): void
  }
}

/**
 * How long `GET /readyz` waits for the database before it answers 503: a probe (a load balancer,
 * Kubernetes) needs an answer within its own timeout, not a request that hangs with the database.
 */
export const READINESS_TIMEOUT_MS = 2000

type Readiness = { ready: true } | { ready: false; reason: string; error?: unknown }

/**
 * `GET /readyz` (public, like `/healthz`): 200 `{ "status": "ready" }` when the database answers a
 * query and its schema has every migration of this version, otherwise 503 `not_ready`. `/healthz`
 * stays the liveness check.
 */
export function registerReadiness(app: FastifyInstance, db: Db): void {
  // One check at a time: probes that arrive while the database hangs wait on the same query rather
  // than each holding a pooled connection (or a place in the pool's queue) of its own.
  let inFlight: Promise<Readiness> | undefined
  let shuttingDown = false
  app.decorate('beginShutdown', () => {
    shuttingDown = true
  })
  const check = (): Promise<Readiness> => {
    if (shuttingDown) return Promise.resolve({ ready: false, reason: SHUTTING_DOWN })
    inFlight ??= readinessOf(db).finally(() => {
      inFlight = undefined
    })
    return inFlight
  }

  app.get('/readyz', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const readiness = await withinTimeout(check(), READINESS_TIMEOUT_MS, () => ({
      ready: false,
      reason: `the database did not answer within ${READINESS_TIMEOUT_MS} ms`,
    }))
    if (readiness.ready) return { status: 'ready' }
    // Answered here rather than thrown: the error handler would log a 5xx as an unhandled error.
    request.log.warn({ err: readiness.error }, `not ready: ${readiness.reason}`)
    return sendError(request, reply, errors.notReady(readiness.reason))
  })
}

const SHUTTING_DOWN = 'the process is shutting down'

async function readinessOf(db: Db): Promise<Readiness> {
  let missing: string[]
  try {
    missing = await missingMigrations(db)
  } catch (error) {
    // The error goes to the log only: the route is public.
    return { ready: false, reason: 'the database did not answer a query', error }
  }
  if (missing.length === 0) return { ready: true }
  return {
    ready: false,
    reason: `the database schema lacks ${missing.length === 1 ? 'the migration' : 'the migrations'} ${missing.join(', ')} of this version; run \`cli migrate\``,
  }
}

export interface StartingListener {
  /** The port really bound (PORT=0 picks one): the app listens on it once it has started. */
  port: number
  /** Why the process is not ready yet, as `/readyz` says it. */
  reason: string
  close(): Promise<void>
}

/**
 * The port's listener while the process waits for its database at start-up (server.ts), before the
 * app exists: `/healthz` answers 200 (the process is alive), `/readyz` and every other request 503
 * `not_ready` with the envelope, saying why. A supervisor sees a process that waits rather than one
 * that crash-loops, and a load balancer keeps it out of rotation. A plain `node:http` server, as the
 * app needs the database to be built.
 */
export async function listenWhileStarting(options: {
  host: string
  port: number
  reason: string
}): Promise<StartingListener> {
  const server = http.createServer((request, response) => {
    const requestId = newRequestId()
    const path = (request.url ?? '').split('?', 1)[0]
    const [status, body] =
      path === '/healthz'
        ? [200, { status: 'ok' }]
        : [503, { error: { ...errors.notReady(listener.reason).toBody(), request_id: requestId } }]
    response
      .writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'x-request-id': requestId,
        // The app takes the port over once it has started: no connection is kept for it.
        connection: 'close',
      })
      .end(JSON.stringify(body))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const listener: StartingListener = {
    port: (server.address() as AddressInfo).port,
    reason: options.reason,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
  return listener
}
