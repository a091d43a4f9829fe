import type { HTTPMethods, InjectOptions } from 'fastify'
import { expect } from 'vitest'
import { grants, KEY_SCOPES, type Scope } from '../../src/modules/keys/scopes.js'
import { createKey } from '../../src/modules/keys/service.js'
import { ROLE_SCOPES, ROLES, type Role } from '../../src/modules/users/roles.js'
import { sessionCookieName, startSession } from '../../src/modules/users/sessions.js'
import type { ApiClient, ApiResponse, TestApp } from './app.js'
import { errorOf, expectError, uniq } from './assertions.js'
import { pairedDevice } from './fixtures.js'
import { createPerson, HeaderClient } from './people.js'
import type { RegisteredRoute } from './routes.js'

/** A request that the owner may send: a real path (its objects exist) and a valid body. */
export interface SecuredRequest {
  path: string
  body?: unknown
  /**
   * On a list of objects at sites (`per-site`): what the owner's answer shows and a principal held
   * to another location must not be shown (the id of an object standing at `at.location`).
   */
  excluded?: string
  /**
   * What a principal held to another location gets, where the route's `config.sites` does not say
   * it alone: a create naming objects it cannot see (422), a readable operator (200), a change to an
   * operator homed elsewhere (403 `location_restricted`). A function checks the answer itself.
   */
  restricted?: { status: number; code?: string } | ((res: ApiResponse) => void)
  /** The object is the account's in both modes (a person, an API key): no 404 in the other mode. */
  modeless?: boolean
}

/** Where a route's objects are: a device of the owner's, paired, and the location it and the others stand at. */
export interface Placement {
  /** A route a device key may call names it (a scan at it). */
  device: { code: string }
  /** The location the prepared objects stand at (or are homed at): not the restricted principal's. */
  location: string
}

/**
 * Makes, with the owner (its live key, or a signed-in owner for a route no key may call), what a
 * route's request needs, and returns the request.
 */
export type PrepareRequest = (owner: ApiClient, at: Placement) => Promise<SecuredRequest>

/** The methods `app.inject` sends (light-my-request's list is shorter than Fastify's). */
const INJECTABLE = new Set(['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'])

export function send(api: ApiClient, method: HTTPMethods, request: SecuredRequest): Promise<ApiResponse> {
  if (!INJECTABLE.has(method.toUpperCase())) throw new Error(`app.inject cannot send ${method}`)
  return api.request({
    method: method as InjectOptions['method'],
    url: request.path,
    ...(request.body === undefined ? {} : { payload: request.body as object }),
  })
}

/** A signed-in person's clients, one for each mode its requests may name. */
export interface PersonClients {
  live: ApiClient
  test: ApiClient
}

/**
 * A person with a membership of `role` in the account (made when new), signed in by a session
 * written straight to its table (no password to hash): clients that send the session cookie,
 * `Attendance-Mode` and the session's `X-CSRF-Token`, as the console does.
 */
export async function signedInPerson(
  t: TestApp,
  account: string,
  role: Role,
  locationIds?: readonly string[],
): Promise<PersonClients> {
  const person = await createPerson(t, { account, role, password: null, locationIds })
  const { token, sessionId } = await startSession(t.db, person.userId)
  const client = (mode: 'test' | 'live') =>
    new HeaderClient(t, {
      cookie: `${sessionCookieName(t.config.publicUrl)}=${token}`,
      'x-csrf-token': t.app.personSessions.csrfToken(sessionId),
      'attendance-mode': mode,
    })
  return { live: client('live'), test: client('test') }
}

/** Whether these scopes grant every scope the route needs. */
const holdsAll = (held: ReadonlySet<string>, needed: readonly Scope[]) =>
  needed.every((one) => grants(held, one))

function expectAllowed(res: ApiResponse, who: string, method: HTTPMethods, path: string) {
  expect(res.status, `${who}: ${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300)
}

/** The same path with its first object id (`<prefix>_<ULID>`) replaced by one that names nothing. */
const pathOfMissing = (path: string) => path.replace(/\b([a-z]+)_[0-9A-Z]{26}\b/, `$1_${'0'.repeat(26)}`)

/**
 * The security cases of one route, on objects of a fresh live-mode account:
 * - no key: 401;
 * - a key of that account lacking a scope the route needs (every key, on a route only people may
 *   call): 403;
 * - on a route that names an object (a path parameter): the other mode (unless the object is
 *   `modeless`) and another account: 404, as if the object did not exist;
 * - a device key of that account: 403 unless the route lets device keys call it (`config.deviceKey`);
 *   where it does, another device's key is refused (403) and the device's own key is not;
 * - each of the five roles, as a signed-in person of the account (cookie, mode and CSRF token):
 *   403 exactly when the role's scopes lack one the route needs (always, on a device key's own
 *   route), and allowed otherwise (each on a request of its own: a change is not repeated);
 * - a principal held to another location than the one the route's objects stand at (a key, or a
 *   person where no key may call the route): `account-wide`, 403 `location_restricted`; `none`,
 *   as any other; `per-site`, the object answers as a missing id (404, word for word), a list does
 *   not show `excluded`, and a create answers what the request says (`restricted`);
 * - then, as the control that makes the refusals mean something, the owner: not refused (refused
 *   with 403 on a route only a device key may call).
 */
export async function expectRouteSecured(t: TestApp, route: RegisteredRoute, prepare: PrepareRequest) {
  const name = `${route.method} ${route.url}`
  expect(route.scope, `${name} declares config.scope`).toBeDefined()
  expect(route.sites, `${name} declares config.sites`).toBeDefined()
  if (route.scope === undefined) return
  const needed = [route.scope].flat()
  // A route of `users:*` or `keys:*`: no key may call it, only people.
  const forKeys = needed.every((one) => KEY_SCOPES.some((held) => grants(new Set([held]), one)))
  const account = uniq('sec')
  const ownerKey = t.client((await t.key({ account, mode: 'live' })).secret)
  const ownerPerson = await signedInPerson(t, account, 'owner')
  const owner = forKeys ? ownerKey : ownerPerson.live
  const location = async (label: string) => {
    const res = await ownerKey.post<{ id: string }>('/v1/locations', { name: uniq(label), timezone: 'UTC' })
    expect(res.status).toBe(201)
    return res.body.id
  }
  const heldTo = await location('held-to')
  const elsewhere = await location('elsewhere')
  const paired = await pairedDevice(t, ownerKey, { location_id: elsewhere })
  const at: Placement = { device: paired.device, location: elsewhere }
  const request = await prepare(owner, at)
  const fresh = () => prepare(owner, at)

  expectError(await send(t.client(undefined), route.method, request), 401, 'authentication_error')

  // Every scope a key may hold except those granting one the route needs: a route needing several
  // refuses a key that lacks any of them.
  const unscoped = await t.key({
    account,
    mode: 'live',
    scopes: KEY_SCOPES.filter((other) => !needed.some((one) => grants(new Set([other]), one))),
  })
  expectError(await send(t.client(unscoped.secret), route.method, request), 403, 'insufficient_scope')

  if (route.url.includes('/:')) {
    const wrongMode = forKeys ? t.client((await t.key({ account, mode: 'test' })).secret) : ownerPerson.test
    if (!request.modeless) expectError(await send(wrongMode, route.method, request), 404, 'not_found')
    const otherAccount = forKeys
      ? t.client((await t.key({ account: uniq('other'), mode: 'live' })).secret)
      : (await signedInPerson(t, uniq('other'), 'owner')).live
    expectError(await send(otherAccount, route.method, request), 404, 'not_found')
  }

  if (route.deviceKey === undefined) {
    expectError(await send(paired.api, route.method, request), 403, 'insufficient_scope')
  } else {
    const other = await pairedDevice(t, ownerKey)
    if (route.deviceKey === 'also') {
      // A batch answers the refusal in the scan's slot, as it answers every scan's own outcome.
      const refused = await send(other.api, route.method, request)
      const error =
        refused.status === 200
          ? (refused.body as { data: Array<{ type?: string; code?: string }> }).data[0]
          : expectError(refused, 403, 'insufficient_scope')
      expect(error).toMatchObject({ type: 'insufficient_scope', code: 'device_mismatch' })
    }
    const byDevice = await send(paired.api, route.method, request)
    expect(byDevice.status, `${route.method} ${request.path}: ${JSON.stringify(byDevice.body)}`).toBeLessThan(
      300,
    )
  }

  await expectRolesJudged(t, route, account, ownerPerson, request, fresh)
  await expectSitesJudged(t, route, { account, forKeys, heldTo, owner, request, fresh })

  const allowed = await send(owner, route.method, request)
  if (route.deviceKey === 'only') {
    expectError(allowed, 403, 'insufficient_scope')
    return
  }
  expectAllowed(allowed, 'the owner', route.method, request.path)
}

/**
 * Each role as a signed-in person of the account: refused with 403 (`missing_scope`) exactly when
 * its scopes lack one the route needs, else allowed. The owner is the person who prepared the request.
 */
async function expectRolesJudged(
  t: TestApp,
  route: RegisteredRoute,
  account: string,
  ownerPerson: PersonClients,
  request: SecuredRequest,
  fresh: () => Promise<SecuredRequest>,
) {
  const needed = [route.scope ?? []].flat()
  for (const role of ROLES) {
    const person = (role === 'owner' ? ownerPerson : await signedInPerson(t, account, role)).live
    const who = `a signed-in ${role}`
    if (route.deviceKey === 'only' || !holdsAll(ROLE_SCOPES[role], needed)) {
      const res = await send(person, route.method, request)
      expect(res.status, `${who}: ${route.method} ${request.path}: ${JSON.stringify(res.body)}`).toBe(403)
      expect(errorOf(res)).toMatchObject({ type: 'insufficient_scope', code: 'missing_scope' })
    } else {
      const own = await fresh()
      expectAllowed(await send(person, route.method, own), who, route.method, own.path)
    }
  }
}

/**
 * A principal held to `heldTo`, where none of the route's objects stand: a key with every scope a
 * key may hold, or an owner held there on a route only people may call.
 */
async function expectSitesJudged(
  t: TestApp,
  route: RegisteredRoute,
  context: {
    account: string
    forKeys: boolean
    heldTo: string
    owner: ApiClient
    request: SecuredRequest
    fresh: () => Promise<SecuredRequest>
  },
) {
  const { account, forKeys, heldTo, owner, request } = context
  const restricted = forKeys
    ? t.client((await createKey(t.db, { account, mode: 'live', locationIds: [heldTo] })).secret)
    : (await signedInPerson(t, account, 'owner', [heldTo])).live
  const who = `a ${forKeys ? 'key' : 'person'} held to another location`
  const expected = request.restricted
  if (expected !== undefined) {
    const res = await send(restricted, route.method, request)
    if (typeof expected === 'function') expected(res)
    else {
      expect(res.status, `${who}: ${route.method} ${request.path}: ${JSON.stringify(res.body)}`).toBe(
        expected.status,
      )
      if (expected.code !== undefined) expect(errorOf(res).code).toBe(expected.code)
    }
    return
  }
  if (route.sites === 'account-wide') {
    expectError(
      await send(restricted, route.method, request),
      403,
      'insufficient_scope',
      'location_restricted',
    )
    return
  }
  if (route.sites === 'none') {
    const own = await context.fresh()
    expectAllowed(await send(restricted, route.method, own), who, route.method, own.path)
    return
  }
  if (route.url.includes('/:')) {
    // Word for word what an id that names nothing gets.
    const res = await send(restricted, route.method, request)
    const missing = await send(restricted, route.method, { ...request, path: pathOfMissing(request.path) })
    expect(res.status, `${who}: ${route.method} ${request.path}: ${JSON.stringify(res.body)}`).toBe(404)
    const shape = (answer: ApiResponse, path: string) => {
      const { request_id: _, ...error } = errorOf(answer)
      const id = /\b[a-z]+_[0-9A-Z]{26}\b/.exec(path)?.[0] ?? ''
      return { status: answer.status, ...error, message: error.message.replaceAll(id, '<id>') }
    }
    expect(shape(res, request.path)).toEqual(shape(missing, pathOfMissing(request.path)))
    return
  }
  expect(route.method, `${who}: ${route.method} ${route.url} needs its restricted answer declared`).toBe(
    'GET',
  )
  expect(request.excluded, `${route.method} ${route.url}: the list's excluded object`).toBeDefined()
  const text = (res: ApiResponse) => JSON.stringify(res.body)
  const seen = await send(owner, route.method, request)
  expect(seen.status).toBe(200)
  expect(text(seen)).toContain(request.excluded)
  const hidden = await send(restricted, route.method, request)
  expect(hidden.status, `${who}: ${route.method} ${request.path}: ${text(hidden)}`).toBe(200)
  expect(text(hidden)).not.toContain(request.excluded)
}
