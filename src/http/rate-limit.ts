import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit'
import type { FastifyBaseLogger, FastifyInstance, onRequestAsyncHookHandler } from 'fastify'
import { type ClientContext, Redis, type Result } from 'ioredis'
import { LRUCache } from 'lru-cache'
import { errors } from '../core/errors.js'
import { rateLimitRedisUp } from '../core/metrics.js'
import { clock } from '../lib/clock.js'

declare module 'ioredis' {
  interface RedisCommander<Context extends ClientContext = { type: 'default' }> {
    /** `COUNT_IN_WINDOW`, defined on the client by `RedisCounters`. */
    countInWindow(key: string, windowMs: number): Result<[number, number], Context>
  }
}

export interface RateLimitOptions {
  max: number
  windowMs: number
  /** When set, counters live in Redis and are shared by every API process. */
  redis?: Redis
}

/**
 * The client of REDIS_URL, not yet connected: `registerRateLimit` connects it once it listens to its
 * events, so that no connection error is ever unheard (ioredis prints an unheard one on stderr).
 */
export function createRateLimitRedis(url: string): Redis {
  return new Redis(url, {
    lazyConnect: true,
    // A count that cannot reach Redis fails at once and is counted in memory (`SharedStore`),
    // rather than waiting in a queue while requests pile up behind it.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // A Redis cut off without the connection closing (a partition) answers nothing: each request
    // would wait for its count as long as the connection lives.
    commandTimeout: COUNT_TIMEOUT_MS,
    // The ready check prints on stderr when INFO is refused (a user without the right); the
    // counters need no loaded data set, and a count refused while Redis loads is counted in memory.
    enableReadyCheck: false,
  })
}

/**
 * Per key, or per client address (`request.ip`: the socket's peer, or with TRUST_PROXY the address
 * a trusted proxy forwarded) for requests without a valid key. Registered as an app-wide onRequest
 * hook after `identify` (so the key is known) and before `enforce` (so 401s are limited and carry
 * the headers too). With Redis, a count Redis cannot take is taken by the process's own counters:
 * while Redis is unreachable each process limits alone (fail closed per process); no request goes
 * uncounted.
 */
export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  const redis = options.redis
  let store: new () => FastifyRateLimitStore = ClockedStore
  if (redis) {
    const counters = new RedisCounters(redis, app.log)
    store = class extends SharedStore {
      constructor() {
        super(counters)
      }
    }
  }
  await app.register(rateLimit, {
    global: false,
    max: options.max,
    timeWindow: options.windowMs,
    store,
    keyGenerator: (request) => (request.auth ? `key:${request.auth.principalId}` : `ip:${request.ip}`),
    errorResponseBuilder: (_request, context) => errors.rateLimited(retryAfterSeconds(context.ttl)),
  })
  app.addHook('onRequest', app.rateLimit())
}

/** Clients counted at once by one process's counters, as the plugin's own in-process store keeps. */
const LOCAL_CLIENTS = 5000

/**
 * The in-process counters (no Redis, or Redis unreachable): fixed windows, as the plugin's own store
 * counts them, but on the process clock (the plugin's own store reads the system's time), since a
 * window is the service's time and a test steps through it. With Redis the windows are Redis's keys' expiry.
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

/**
 * Counts a key's requests in a fixed window whose expiry the first count sets: `[count, ms left]`.
 * A key left without an expiry (none should be) gets one rather than counting forever.
 */
const COUNT_IN_WINDOW = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`

/** Where the counters live in Redis, shared by every API process of the same Redis. */
const REDIS_NAMESPACE = 'attendance:rl:'

/** How long a request waits for Redis to count it before it is counted in memory. */
const COUNT_TIMEOUT_MS = 500

/**
 * After a count Redis refused or did not answer, how long counts stay in memory before they try
 * Redis again: a Redis that does not answer delays the requests of COUNT_TIMEOUT_MS in each such
 * period, not every request.
 */
const RETRY_REDIS_AFTER_MS = 5000

/**
 * The Redis client as the counters see it: whether it takes counts, told to the
 * `rate_limit_redis_up` gauge and to the log, once when it stops (not at each reconnection attempt,
 * every 2 s) and once when it is back.
 */
class RedisCounters {
  private up = false
  /** Whether the log said it is unreachable and has not said it is back. */
  private announcedDown = false
  /** When counts may try Redis again after one it did not take (process clock). */
  private retryAt = 0

  constructor(
    private readonly redis: Redis,
    private readonly log: FastifyBaseLogger,
  ) {
    redis.defineCommand('countInWindow', { numberOfKeys: 1, lua: COUNT_IN_WINDOW })
    redis.on('ready', () => this.reached())
    redis.on('close', () => this.lost())
    redis.on('error', (error: Error) => this.failed(error))
    if (redis.status === 'ready') this.reached()
    else this.lost()
    // Not awaited: the app starts, counting in memory, while Redis is unreachable.
    if (redis.status === 'wait') redis.connect().catch(() => undefined)
  }

  get ready(): boolean {
    return this.redis.status === 'ready' && clock.now() >= this.retryAt
  }

  count(key: string, windowMs: number): Promise<[number, number]> {
    return this.redis.countInWindow(REDIS_NAMESPACE + key, windowMs)
  }

  reached(): void {
    this.up = true
    this.retryAt = 0
    rateLimitRedisUp().set(1)
    if (!this.announcedDown) return
    this.announcedDown = false
    this.log.info('rate limit: Redis is reachable again; the counters are shared through it')
  }

  /** The connection closed: on its own, a restart, or the app's shutdown, none of which to log. */
  lost(): void {
    this.up = false
    rateLimitRedisUp().set(0)
  }

  failed(error: unknown): void {
    this.lost()
    if (this.announcedDown) return
    this.announcedDown = true
    this.log.warn(
      { err: error },
      'rate limit: Redis is unreachable; each process counts in its own memory until it is back',
    )
  }

  /** A count Redis refused, or did not answer in time, while connected. */
  refused(error: unknown): void {
    this.retryAt = clock.now() + RETRY_REDIS_AFTER_MS
    this.failed(error)
  }

  /** A count Redis took: after a refused one, Redis takes counts again. */
  counted(): void {
    if (!this.up) this.reached()
  }
}

/**
 * The counters in Redis while it takes them, else the process's own (`ClockedStore`): each
 * request is counted somewhere, so the limit holds, per process, while Redis is away. A client may
 * get up to twice its limit in the window where the counters move from one to the other.
 */
class SharedStore implements FastifyRateLimitStore {
  constructor(
    private readonly counters: RedisCounters,
    private readonly local = new ClockedStore(),
  ) {}

  incr(
    key: string,
    callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
    timeWindow: number,
  ): void {
    if (!this.counters.ready) {
      this.local.incr(key, callback, timeWindow)
      return
    }
    this.counters.count(key, timeWindow).then(
      ([current, ttl]) => {
        this.counters.counted()
        callback(null, { current, ttl })
      },
      (error: unknown) => {
        this.counters.refused(error)
        this.local.incr(key, callback, timeWindow)
      },
    )
  }

  /**
   * A route's own limit: its own counters in memory; in Redis the same namespace, as its keys are
   * named apart (`pairing:ip:…`).
   */
  child(): FastifyRateLimitStore {
    return new SharedStore(this.counters)
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
