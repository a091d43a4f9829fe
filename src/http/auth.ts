import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { LRUCache } from 'lru-cache'
import { errors } from '../core/errors.js'
import type { AuthContext } from '../core/identity.js'
import type { Executor } from '../db/types.js'
import { clock } from '../lib/clock.js'
import { grants, type Scope } from '../modules/keys/scopes.js'
import { type ApiKeyRecord, findKeyByHash, hashSecret } from '../modules/keys/service.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `identify` for a valid key; null otherwise. */
    auth: AuthContext | null
    /** Why the key was refused, when a key was sent and refused. */
    authFailure: string | null
  }
  interface FastifyContextConfig {
    /**
     * The scope a route needs; every /v1 route declares one unless it is public. A list means all
     * of them (closing a pay period needs `timesheets:write` and `sessions:approve`).
     */
    scope?: Scope | readonly Scope[]
    /** A /v1 route served without a key (the OpenAPI document). */
    public?: boolean
    /**
     * Whether a device key may call the route: `also` beside API keys with the scope (recording a
     * scan), `only` a device key (its own device). Absent: never, whatever the route's scope.
     */
    deviceKey?: 'also' | 'only'
  }
}

// API keys (`sk_`) and device keys (`dk_`), which pairing hands a device.
const SECRET_SHAPE = /^(sk|dk)_(test|live)_[A-Za-z0-9_-]{16,128}$/
export const KEY_CACHE_TTL_MS = 5000
const KEY_CACHE_MAX_ENTRIES = 10_000

/**
 * Keeps key lookups off the hot path. Entries, including "no such key", live at most
 * KEY_CACHE_TTL_MS from their lookup, so a key revoked from another process stops working within
 * that time; past KEY_CACHE_MAX_ENTRIES the least recently used entry makes room.
 */
export class KeyCache {
  // lru-cache holds no `undefined`: a lookup that found nothing is kept as `{ record: undefined }`.
  private readonly entries: LRUCache<string, { record: ApiKeyRecord | undefined }>

  constructor(
    private readonly db: Executor,
    ttlMs = KEY_CACHE_TTL_MS,
  ) {
    // Entries age on the process clock, like the expiries they cache; read at every lookup (the
    // cache's default keeps a reading for a millisecond of real time, past a test's clock step).
    this.entries = new LRUCache({ max: KEY_CACHE_MAX_ENTRIES, ttl: ttlMs, ttlResolution: 0, perf: clock })
  }

  async get(secretHash: string): Promise<ApiKeyRecord | undefined> {
    const hit = this.entries.get(secretHash)
    if (hit) return hit.record
    const record = await findKeyByHash(this.db, secretHash)
    this.entries.set(secretHash, { record })
    return record
  }
}

/**
 * Resolves the bearer key, if any, without refusing anything yet: the rate limiter runs next. A
 * device key's request is reported to `deviceSeen` (its device's `last_seen_at`).
 */
export function identify(
  cache: KeyCache,
  deviceSeen: (deviceId: string) => Promise<void>,
): onRequestAsyncHookHandler {
  return async (request) => {
    const header = request.headers.authorization
    if (header === undefined) return
    const match = /^Bearer (\S+)$/.exec(header)
    if (!match?.[1]) {
      request.authFailure = 'The Authorization header must be "Bearer <API key>".'
      return
    }
    const secret = match[1]
    const record = SECRET_SHAPE.test(secret) ? await cache.get(hashSecret(secret)) : undefined
    const now = clock.now()
    if (!record) request.authFailure = 'Invalid API key provided.'
    else if (record.revokedAt !== null && record.revokedAt <= now)
      request.authFailure = 'This API key was revoked.'
    else if (record.expiresAt !== null && record.expiresAt <= now)
      request.authFailure = 'This API key has expired.'
    else if (record.deviceId !== null) {
      request.auth = {
        keyId: record.id,
        accountId: record.accountId,
        livemode: record.livemode,
        deviceId: record.deviceId,
      }
      // A device's last sighting is a convenience for the console: failing to write it must not
      // refuse the device's scan.
      await deviceSeen(record.deviceId).catch((error: unknown) =>
        request.log.warn({ err: error }, 'recording a device sighting failed'),
      )
    } else {
      request.auth = { keyId: record.id, accountId: record.accountId, livemode: record.livemode }
      scopesByRequest.set(request, record.scopes)
    }
  }
}

const scopesByRequest = new WeakMap<FastifyRequest, ReadonlySet<string>>()

/**
 * The API is what lives under /v1/. Routes outside it (the health check, the /docs reference and
 * its static files, which @fastify/swagger-ui registers itself) serve no account data and are
 * public by design: one rule here rather than a flag on routes a plugin owns.
 */
function isApiRoute(url: string | undefined): boolean {
  return url?.startsWith('/v1/') ?? false
}

/** Refuses what `identify` could not accept, and keys without the route's scope. */
export const enforce: onRequestAsyncHookHandler = async (request) => {
  const config = request.routeOptions.config
  // Unknown routes answer 404 with or without a key: the route table is public (OpenAPI) anyway.
  if (config.public || request.is404 || !isApiRoute(request.routeOptions.url)) return
  if (request.authFailure) throw errors.authentication(request.authFailure)
  if (!request.auth) {
    throw errors.authentication('No API key provided. Send "Authorization: Bearer <API key>".')
  }
  if (request.auth.deviceId !== undefined) {
    if (config.deviceKey === undefined) throw errors.deviceKeyRefused()
    return
  }
  if (config.deviceKey === 'only') throw errors.deviceKeyRequired()
  const held = scopesByRequest.get(request) ?? new Set()
  for (const scope of [config.scope ?? []].flat()) {
    if (!grants(held, scope)) throw errors.insufficientScope(scope)
  }
}

export function registerAuth(app: FastifyInstance): void {
  app.decorateRequest('auth', null)
  app.decorateRequest('authFailure', null)
  // Fail at start-up, not at request time, when a route forgets to declare what it needs, or
  // declares a scope that would not be enforced (outside /v1/ everything is public).
  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as {
      scope?: Scope | readonly Scope[]
      public?: boolean
      deviceKey?: 'also' | 'only'
    }
    if (isApiRoute(route.url) && !config.public && !config.scope) {
      throw new Error(`Route ${route.method} ${route.url} declares neither config.scope nor config.public`)
    }
    if (!isApiRoute(route.url) && (config.scope || config.deviceKey)) {
      throw new Error(`Route ${route.method} ${route.url} is outside /v1/ (public): it cannot have a scope`)
    }
  })
}

/** The caller of a route that `enforce` let through. */
export function requireAuth(request: FastifyRequest): AuthContext {
  if (!request.auth) throw errors.authentication('No API key provided.')
  return request.auth
}
