import { parse as parseCookies } from 'cookie'
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { LRUCache } from 'lru-cache'
import { type ApiError, errors } from '../core/errors.js'
import type { AuthContext } from '../core/identity.js'
import type { Executor } from '../db/types.js'
import { clock } from '../lib/clock.js'
import { grants, type Scope } from '../modules/keys/scopes.js'
import { type ApiKeyRecord, findKeyByHash, hashSecret } from '../modules/keys/service.js'
import { ROLE_SCOPES } from '../modules/users/roles.js'
import { type PersonSessions, type SignedInPerson, sessionCookieName } from '../modules/users/sessions.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `identify` for a valid key; null otherwise. */
    auth: AuthContext | null
    /** Why the key was refused, when a key was sent and refused. */
    authFailure: string | null
    /** The person a live session cookie signs in (no Authorization header); null otherwise. */
    person: SignedInPerson | null
    /** Why a signed-in person's request names no account or mode it may act in (refused on account routes). */
    personFailure: ApiError | null
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
    /**
     * Where the route's objects live, for a principal held to sites (decisions.md, "Sites"); every
     * route with a scope declares it. `account-wide`: needs an unrestricted principal (403
     * `location_restricted`); `per-site`: the service leaves out (404, lists without them, 422 for a
     * reference) what happens at other locations; `none`: nothing tied to a place (the account itself).
     */
    sites?: SiteRule
    /** A route of the signed-in person, not of an account (`/v1/auth/session`): a session cookie, no key. */
    signedIn?: boolean
  }
}

export type SiteRule = 'account-wide' | 'per-site' | 'none'
const SITE_RULES: readonly SiteRule[] = ['account-wide', 'per-site', 'none']

/** Requests that change something: a cookie request must prove it comes from the console (CSRF). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

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
 * Resolves who is calling, without refusing anything yet (the rate limiter runs next): the bearer
 * key, or else a session cookie's person in the account and mode its headers name. A request with
 * both is judged by the key. A device key's request is reported to `deviceSeen` (its device's
 * `last_seen_at`).
 */
export function identify(
  cache: KeyCache,
  sessions: PersonSessions,
  publicUrl: string,
  deviceSeen: (deviceId: string) => Promise<void>,
): onRequestAsyncHookHandler {
  const cookieName = sessionCookieName(publicUrl)
  return async (request) => {
    const header = request.headers.authorization
    if (header === undefined) {
      const cookie = request.headers.cookie
      if (cookie !== undefined) await identifyPerson(request, sessions, parseCookies(cookie)[cookieName])
      return
    }
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
        principalId: record.id,
        accountId: record.accountId,
        livemode: record.livemode,
        deviceId: record.deviceId,
        locationIds: null,
      }
      // A device's last sighting is a convenience for the console: failing to write it must not
      // refuse the device's scan.
      await deviceSeen(record.deviceId).catch((error: unknown) =>
        request.log.warn({ err: error }, 'recording a device sighting failed'),
      )
    } else {
      request.auth = {
        principalId: record.id,
        accountId: record.accountId,
        livemode: record.livemode,
        locationIds: record.locationIds,
      }
      scopesByRequest.set(request, record.scopes)
    }
  }
}

/**
 * A session cookie's person, and the membership its request acts in: the account named by
 * `Attendance-Account` (needed only when the person has several), the mode named by
 * `Attendance-Mode`, the role's scopes and the membership's sites. What is missing is kept in
 * `personFailure` and refused by `enforce` only on routes that need an account.
 */
async function identifyPerson(request: FastifyRequest, sessions: PersonSessions, token: string | undefined) {
  if (token === undefined || token.length > 200) return
  const person = await sessions.find(token)
  if (!person) {
    request.authFailure = 'Your sign-in has ended (signed out, expired or idle too long); sign in again.'
    return
  }
  request.person = person
  personsByRequest.set(request, { sessions, token })
  const named = request.headers['attendance-account']
  const membership =
    typeof named === 'string'
      ? person.memberships.find((m) => m.accountId === named)
      : person.memberships.length === 1
        ? person.memberships[0]
        : undefined
  if (!membership) {
    request.personFailure =
      typeof named === 'string'
        ? errors.notFound('account', named)
        : person.memberships.length === 0
          ? errors.authentication('You are no longer active in any account; ask an owner.')
          : errors.missingAccount()
    return
  }
  const mode = request.headers['attendance-mode']
  if (mode !== 'test' && mode !== 'live') {
    request.personFailure = errors.missingMode()
    return
  }
  request.auth = {
    principalId: person.userId,
    accountId: membership.accountId,
    livemode: mode === 'live',
    locationIds: membership.locationIds,
    operatorId: membership.operatorId,
  }
  scopesByRequest.set(request, ROLE_SCOPES[membership.role])
}

const personsByRequest = new WeakMap<FastifyRequest, { sessions: PersonSessions; token: string }>()

/** The signed-in request's session token, for sign-out (which forgets it in this process at once). */
export function sessionTokenOf(request: FastifyRequest): string | undefined {
  return personsByRequest.get(request)?.token
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

/** Refuses what `identify` could not accept, and principals without the route's scope or sites. */
export const enforce: onRequestAsyncHookHandler = async (request) => {
  const config = request.routeOptions.config
  // Unknown routes answer 404 with or without a key: the route table is public (OpenAPI) anyway.
  if (config.public || request.is404 || !isApiRoute(request.routeOptions.url)) return
  if (request.authFailure) throw errors.authentication(request.authFailure)
  if (config.signedIn) {
    if (!request.person || request.headers.authorization !== undefined)
      throw errors.authentication(
        'Sign in first: this request needs the session cookie of POST /v1/auth/sign-in.',
      )
    requireCsrfToken(request, request.person)
    return
  }
  if (request.person) {
    if (request.personFailure) throw request.personFailure
    requireCsrfToken(request, request.person)
  }
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
  if (config.sites === 'account-wide' && request.auth.locationIds !== null) throw errors.locationRestricted()
}

/** A cookie request that changes something carries the session's CSRF token, or changes nothing. */
function requireCsrfToken(request: FastifyRequest, person: SignedInPerson): void {
  if (SAFE_METHODS.has(request.method)) return
  const sent = request.headers['x-csrf-token']
  const sessions = personsByRequest.get(request)?.sessions
  if (!sessions?.isCsrfTokenValid(person.sessionId, typeof sent === 'string' ? sent : undefined))
    throw errors.csrfTokenInvalid()
}

/** The scopes the request's principal holds (a key's, or a signed-in person's role's). */
export function scopesOf(request: FastifyRequest): ReadonlySet<string> {
  return scopesByRequest.get(request) ?? new Set()
}

export function registerAuth(app: FastifyInstance): void {
  app.decorateRequest('auth', null)
  app.decorateRequest('authFailure', null)
  app.decorateRequest('person', null)
  app.decorateRequest('personFailure', null)
  // Fail at start-up, not at request time, when a route forgets to declare what it needs, or
  // declares a scope that would not be enforced (outside /v1/ everything is public).
  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as {
      scope?: Scope | readonly Scope[]
      public?: boolean
      deviceKey?: 'also' | 'only'
      sites?: SiteRule
      signedIn?: boolean
    }
    if (isApiRoute(route.url) && !config.public && !config.signedIn && !config.scope) {
      throw new Error(
        `Route ${route.method} ${route.url} declares none of config.scope, config.signedIn and config.public`,
      )
    }
    if (config.scope && !SITE_RULES.includes(config.sites as SiteRule)) {
      throw new Error(
        `Route ${route.method} ${route.url} declares no config.sites (${SITE_RULES.join(', ')}): what a principal held to some locations may do there`,
      )
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
