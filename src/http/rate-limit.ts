import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit'
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify'
import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import { errors } from '../core/errors.js'
import { clock } from '../lib/clock.js'

export interface RateLimitOptions {
  max: number
  windowMs: number
  /** When set, counters live in Redis and are shared by every API process. */
  redis?: Redis
}

/**
 * Per key, or per client IP for requests without a valid key. Registered as an app-wide onRequest
 * hook after `identify` (so the key is known) and before `enforce` (so 401s are limited and carry
 * the headers too). A Redis outage lets requests through rather than failing them: the limit
 * protects the service, it must not take it down.
 */
export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    max: options.max,
    timeWindow: options.windowMs,
    ...(options.redis ? { redis: options.redis, nameSpace: 'attendance:rl:' } : { store: ClockedStore }),
    skipOnError: true,
    keyGenerator: (request) => (request.auth ? `key:${request.auth.keyId}` : `ip:${request.ip}`),
    errorResponseBuilder: (_request, context) => errors.rateLimited(retryAfterSeconds(context.ttl)),
  })
  app.addHook('onRequest', app.rateLimit())
}

/** Clients counted at once by one process's counters, as the plugin's own in-process store keeps. */
const LOCAL_CLIENTS = 5000

/**
 * The in-process counters (no Redis): fixed windows, as the plugin's own store counts them, but on
 * the process clock (the plugin's own store reads the system's time), since a window is the service's time
 * and a test steps through it. With Redis the windows are Redis's keys' expiry.
 */
class ClockedStore implements FastifyRateLimitStore {
  private readonly windows = new LRUCache<string, { count: number; startedAt: number }>({
    max: LOCAL_CLIENTS,
  })

  incr(
    key: string,
    callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
    timeWindow: number,
  ): void {
    const now = clock.now()
    let window = this.windows.get(key)
    if (!window || window.startedAt + timeWindow <= now) {
      window = { count: 0, startedAt: now }
      this.windows.set(key, window)
    }
    window.count += 1
    callback(null, { current: window.count, ttl: window.startedAt + timeWindow - now })
  }

  /** A route's own limit (perAddressLimit) counts apart from the app-wide one. */
  child(): FastifyRateLimitStore {
    return new ClockedStore()
  }
}

/** `Retry-After` for what is left of the window: whole seconds, rounded up, never 0. */
export function retryAfterSeconds(ttlMs: number): number {
  return Math.max(1, Math.ceil(ttlMs / 1000))
}

/**
 * A route's own limit per client address, beside the app-wide one (which counts the same request
 * too): for a public route whose guesses must be slow (pairing codes). A route `onRequest` hook. The
 * plugin runs one limit hook per request, so this one asks the plugin's store itself (in Redis
 * when the app-wide counters are) and answers the same 429 with `Retry-After`.
 */
export function perAddressLimit(
  app: FastifyInstance,
  name: string,
  max: number,
  windowMs: number,
): onRequestAsyncHookHandler {
  const check = app.createRateLimit({
    max,
    timeWindow: windowMs,
    keyGenerator: (request) => `${name}:ip:${request.ip}`,
  })
  return async (request, reply) => {
    const outcome = await check(request)
    if (outcome.isAllowed || !outcome.isExceeded) return
    const seconds = retryAfterSeconds(outcome.ttl)
    reply.header('retry-after', String(seconds))
    throw errors.rateLimited(seconds)
  }
}
