import type { FastifyInstance } from 'fastify'
import { errors } from '../core/errors.js'
import { missingMigrations } from '../db/migrate.js'
import type { Db } from '../db/types.js'
import { withinTimeout } from '../lib/timeout.js'
import { sendError } from './error-handler.js'

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
  const check = () => {
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
