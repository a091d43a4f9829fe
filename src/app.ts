import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type { Config } from './config.js'
import { errors } from './core/errors.js'
import { loadSecret } from './db/settings.js'
import type { Db } from './db/types.js'
import { enforce, identify, KeyCache, registerAuth } from './http/auth.js'
import { answerUnsupportedRequests, clientErrorHandler, requireHostHeader } from './http/client-errors.js'
import { consoleRoutes } from './http/console.js'
import { BODY_LIMIT_BYTES, registerErrorHandling, sendError } from './http/error-handler.js'
import { CreateRunner, purgeExpiredIdempotencyKeys } from './http/idempotency.js'
import { registerRequestMetrics } from './http/metrics.js'
import { registerOpenApi } from './http/openapi.js'
import { Paginator } from './http/pagination.js'
import { registerRateLimit } from './http/rate-limit.js'
import { registerReadiness } from './http/readiness.js'
import { newRequestId } from './http/request-id.js'
import { serializerFactory } from './http/serialization.js'
import { rejectNulCharacters, validatorCompiler } from './http/validation.js'
import { clock } from './lib/clock.js'
import { authRoutes } from './modules/auth/routes.js'
import { deviceRoutes } from './modules/devices/routes.js'
import { DeviceSightings } from './modules/devices/service.js'
import { EventRetention, retentionWindowMs } from './modules/events/retention.js'
import { eventRoutes } from './modules/events/routes.js'
import { accountRoutes, apiKeyRoutes } from './modules/keys/routes.js'
import { locationRoutes } from './modules/locations/routes.js'
import { operatorRoutes } from './modules/operators/routes.js'
import { payPeriodRoutes } from './modules/pay-periods/routes.js'
import { payRuleRoutes } from './modules/pay-rules/routes.js'
import { scanRoutes } from './modules/scans/routes.js'
import { sessionRoutes } from './modules/sessions/routes.js'
import { ForgottenCheckOutSweep } from './modules/sessions/sweep.js'
import { ssoRoutes } from './modules/sso/routes.js'
import { timesheetRoutes } from './modules/timesheets/routes.js'
import { userRoutes } from './modules/users/routes.js'
import { PersonSessions } from './modules/users/sessions.js'
import { webhookRoutes } from './modules/webhooks/routes.js'
import { DeliverySender } from './modules/webhooks/sender.js'
import { deliveryRetention } from './modules/webhooks/service.js'
import { WebhookWorker } from './modules/webhooks/worker.js'

declare module 'fastify' {
  interface FastifyInstance {
    db: Db
    creates: CreateRunner
    paginator: Paginator
    /** Signed-in people's sessions (cookie look-ups, CSRF tokens), shared by `identify` and /v1/auth. */
    personSessions: PersonSessions
  }
}

export interface AppDependencies {
  config: Config
  db: Db
  /** Shared rate-limit counters; the app closes it on shutdown. */
  redis?: Redis
  /** Where the log lines go (stdout when absent): a test reads what the service would log. */
  logStream?: { write(line: string): void }
}

const PURGE_INTERVAL_MS = 10 * 60 * 1000

/**
 * Builds the HTTP app from its dependencies; the caller has run migrations. The app owns `db` and
 * `redis` from here on and closes them when it closes.
 */
export async function buildApp({ config, db, redis, logStream }: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // The request serializer logs no headers; this is a second guard for anything that does.
      // PINs and their ciphertext are never written anywhere but the PIN check (decisions.md).
      redact: [
        'req.headers.authorization',
        'headers.authorization',
        'secret',
        'pin',
        'pin_ciphertext',
        '*.pin',
        '*.pin_ciphertext',
        // A batch's scans (`body.scans[n].pin`), one level further down than the paths above reach.
        '*.scans[*].pin',
        '*.scans[*].pin_ciphertext',
        // Sign-in's secrets: the session cookie, passwords, and the tokens of invitation and reset links.
        'req.headers.cookie',
        'headers.cookie',
        'password',
        'current_password',
        'new_password',
        'token',
        '*.password',
        '*.current_password',
        '*.new_password',
        '*.token',
      ],
      ...(logStream ? { stream: logStream } : {}),
    },
    bodyLimit: BODY_LIMIT_BYTES,
    // `request.ip` (the rate limit's and the log's client address) is the socket's peer, unless that
    // peer is one of these proxies: then the address it forwarded in X-Forwarded-For.
    trustProxy: config.trustProxy ?? false,
    requestIdHeader: false,
    genReqId: newRequestId,
    clientErrorHandler,
    // A request without Host is refused by `requireHostHeader` below, with the envelope.
    http: { requireHostHeader: false },
    // Errors raised before routing (a malformed URL) get the envelope too.
    frameworkErrors: (_error, request, reply) => {
      sendError(request, reply, errors.malformedUrl())
    },
    // Responses are serialised from simpler but equivalent schemas (see http/serialization.ts).
    schemaController: { compilersFactory: { buildSerializer: serializerFactory() } },
  })
  answerUnsupportedRequests(app.server, BODY_LIMIT_BYTES)
  app.setValidatorCompiler(validatorCompiler)
  // Only JSON bodies: anything else is 415 rather than being read as a string.
  app.removeContentTypeParser('text/plain')

  app.decorate('db', db)
  app.decorate('creates', new CreateRunner(db))
  app.decorate('paginator', new Paginator(await loadSecret(db, 'cursor_secret')))

  registerErrorHandling(app)
  registerAuth(app)

  // Order matters: the id header first (every response has it), then a request HTTP/1.1 forbids,
  // then who is calling, then the rate limit (per key, so it needs the key), then the refusals.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
  app.addHook('onRequest', requireHostHeader)
  const sightings = new DeviceSightings(db)
  const personSessions = new PersonSessions(db, await loadSecret(db, 'csrf_secret'))
  app.decorate('personSessions', personSessions)
  app.addHook(
    'onRequest',
    identify(new KeyCache(db), personSessions, config.publicUrl, (deviceId) => sightings.seen(deviceId)),
  )
  await registerRateLimit(app, { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs, redis })
  app.addHook('onRequest', enforce)
  app.addHook('preValidation', rejectNulCharacters)
  // Counted only where they are served (server.ts opens the listener): otherwise a per-request
  // cost for nothing.
  if (config.metricsPort !== undefined) registerRequestMetrics(app)

  // Liveness: the process answers. The database is readiness's question (/readyz): a liveness probe
  // that failed with it would have a supervisor restart processes that are fine.
  app.get('/healthz', { config: { public: true }, schema: { hide: true } }, async () => ({ status: 'ok' }))
  registerReadiness(app, db)
  // Named schemas, GET /v1/openapi.json and /docs; before the routes, which it documents.
  await registerOpenApi(app)
  await app.register(operatorRoutes)
  await app.register(locationRoutes)
  await app.register(deviceRoutes)
  await app.register(sessionRoutes)
  await app.register(scanRoutes)
  await app.register(payPeriodRoutes)
  await app.register(payRuleRoutes)
  await app.register(timesheetRoutes)
  await app.register(eventRoutes)
  await app.register(accountRoutes)
  await app.register(authRoutes(config))
  await app.register(userRoutes(config))
  await app.register(apiKeyRoutes)
  await app.register(ssoRoutes({ oidc: config.oidc, publicUrl: config.publicUrl }))
  await app.register(consoleRoutes)

  // Resends are sent from the API process itself, whether or not it runs the worker.
  const sender = new DeliverySender({
    timeoutMs: config.webhookTimeoutMs,
    allowPrivateUrls: config.webhookAllowPrivateUrls,
  })
  await app.register(webhookRoutes({ urlPolicy: { allowPrivate: config.webhookAllowPrivateUrls }, sender }))
  const worker = config.worker === 'inline' ? createWorker(config, db, app.log) : undefined
  const sweep = config.worker === 'inline' ? createSweep(config, db, app.log) : undefined
  const retention = config.worker === 'inline' ? createRetention(config, db, app.log) : undefined
  app.addHook('onReady', async () => {
    worker?.start()
    sweep?.start()
    retention?.start()
  })

  // On the process clock, so that a test's clock steps run it; rescheduled after each purge ends.
  let closing = false
  let cancelPurge = schedulePurge()
  function schedulePurge(): () => void {
    return clock.schedule(
      () => {
        purgeExpiredIdempotencyKeys(db)
          .catch((error: unknown) => app.log.error({ err: error }, 'idempotency purge failed'))
          .finally(() => {
            if (!closing) cancelPurge = schedulePurge()
          })
      },
      PURGE_INTERVAL_MS,
      { unref: true },
    )
  }
  app.addHook('onClose', async () => {
    closing = true
    cancelPurge()
    await Promise.all([worker?.stop(), sweep?.stop(), retention?.stop()])
    await sender.close()
    await db.destroy()
    if (redis) await redis.quit().catch(() => redis.disconnect())
  })
  return app
}

export function createWorker(config: Config, db: Db, log: FastifyBaseLogger): WebhookWorker {
  return new WebhookWorker(
    db,
    {
      timeoutMs: config.webhookTimeoutMs,
      backoffScale: config.webhookBackoffScale,
      disableThreshold: config.webhookDisableThreshold,
      allowPrivateUrls: config.webhookAllowPrivateUrls,
    },
    log,
  )
}

/** The worker's other duty: closing forgotten check-outs (docs/attendance.md). */
export function createSweep(config: Config, db: Db, log: FastifyBaseLogger): ForgottenCheckOutSweep {
  return new ForgottenCheckOutSweep(db, { intervalMs: config.sessionSweepIntervalMs }, log)
}

/** And deleting events and webhook deliveries past EVENT_RETENTION_DAYS (docs/operations.md). */
export function createRetention(config: Config, db: Db, log: FastifyBaseLogger): EventRetention {
  return new EventRetention(
    db,
    deliveryRetention,
    { windowMs: retentionWindowMs(config.eventRetentionDays), intervalMs: config.retentionIntervalMs },
    log,
  )
}
