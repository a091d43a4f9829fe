import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { registerAuth } from '../../src/http/auth.js'
import { createKey } from '../../src/modules/keys/service.js'
import { ROLES } from '../../src/modules/users/roles.js'
import { type ApiClient, buildTestApp, type TestApp } from '../helpers/app.js'
import { errorOf, expectError, uniq } from '../helpers/assertions.js'
import { pairedDevice } from '../helpers/fixtures.js'
import { registeredRoutes } from '../helpers/routes.js'
import {
  expectRouteSecured,
  type Placement,
  type PrepareRequest,
  send,
  signedInPerson,
} from '../helpers/security.js'

/** Creates an object as the owner and returns its id. */
async function created(api: ApiClient, path: string, body: unknown = undefined): Promise<string> {
  const res = await api.post<{ id: string }>(path, body)
  expect(res.status, `POST ${path}: ${JSON.stringify(res.body)}`).toBe(201)
  return res.body.id
}

// The objects a request names stand at `at.location` (operators are homed there), never where a
// principal held to sites is held: the security helper expects them hidden from it.
const operator = (api: ApiClient, at: Placement) =>
  created(api, '/v1/operators', { ident: uniq('op'), home_location_id: at.location })
const location = (api: ApiClient) =>
  created(api, '/v1/locations', { name: uniq('site'), timezone: 'Europe/Berlin' })
/** A device's id (its path) and code (how sessions and scans name it). */
async function device(api: ApiClient, at: Placement): Promise<{ id: string; code: string }> {
  const code = uniq('gate')
  return { id: await created(api, '/v1/devices', { code, location_id: at.location }), code }
}
async function sessionBody(api: ApiClient, at: Placement) {
  return {
    operator_id: await operator(api, at),
    device_id: (await device(api, at)).code,
    check_in: { time: '2026-03-02T08:00:00Z' },
    check_out: { time: '2026-03-02T16:00:00Z' },
  }
}
const session = async (api: ApiClient, at: Placement) =>
  created(api, '/v1/sessions', await sessionBody(api, at))
const scan = async (api: ApiClient, at: Placement) =>
  created(api, '/v1/scans', { operator_id: await operator(api, at), device_id: (await device(api, at)).code })
/** A month of its own each time (periods of an account never share a day): January 2001, February 2001… */
let periods = 0
function period() {
  const month = new Date(Date.UTC(2001, periods++, 1))
  const last = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 0))
  return { start_date: month.toISOString().slice(0, 10), end_date: last.toISOString().slice(0, 10) }
}
const payPeriod = (api: ApiClient) => created(api, '/v1/pay-periods', period())
const payRule = (api: ApiClient) => created(api, '/v1/pay-rules', { name: uniq('rule') })
const endpoint = (api: ApiClient) =>
  created(api, '/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] })
const delivery = async (api: ApiClient) =>
  created(api, `/v1/webhook-endpoints/${await endpoint(api)}/send-test`)
async function event(api: ApiClient, at: Placement): Promise<string> {
  await operator(api, at)
  const list = await api.get<{ data: Array<{ id: string }> }>('/v1/events')
  const first = list.body.data[0]
  if (!first) throw new Error('creating an operator recorded no event')
  return first.id
}
const user = (api: ApiClient) =>
  created(api, '/v1/users', {
    email: `${uniq('person')}@example.com`,
    name: 'Pat',
    role: 'viewer',
    location_ids: null,
  })
const apiKey = (api: ApiClient) => created(api, '/v1/api-keys', { label: uniq('key'), mode: 'live' })

/** What a principal held to sites gets from an operator it may read but not change. */
const READABLE = { status: 200 }
const HOMED_ELSEWHERE = { status: 403, code: 'location_restricted' }

/**
 * How to send each route's request: every /v1 route that needs a scope has an entry, which the test
 * below checks against the app's route table, so no route ships without its security cases.
 */
const REQUESTS: Record<string, PrepareRequest> = {
  'POST /v1/operators': async () => ({
    path: '/v1/operators',
    body: { ident: uniq('op') },
    // Homed nowhere: a principal held to sites homes the operators it makes at its locations.
    restricted: { status: 422, code: 'invalid_value' },
  }),
  'GET /v1/operators': async (api, at) => {
    const id = await operator(api, at)
    // Operators are readable by any principal with operators:read, wherever homed.
    return { path: '/v1/operators', restricted: (res) => expect(JSON.stringify(res.body)).toContain(id) }
  },
  'GET /v1/operators/:id': async (api, at) => ({
    path: `/v1/operators/${await operator(api, at)}`,
    restricted: READABLE,
  }),
  'PATCH /v1/operators/:id': async (api, at) => ({
    path: `/v1/operators/${await operator(api, at)}`,
    body: { name: 'N' },
    restricted: HOMED_ELSEWHERE,
  }),
  'DELETE /v1/operators/:id': async (api, at) => ({
    path: `/v1/operators/${await operator(api, at)}`,
    restricted: HOMED_ELSEWHERE,
  }),

  'POST /v1/locations': async () => ({
    path: '/v1/locations',
    body: { name: uniq('site'), timezone: 'UTC' },
  }),
  'GET /v1/locations': async (api) => ({ path: '/v1/locations', excluded: await location(api) }),
  'GET /v1/locations/:id': async (api) => ({ path: `/v1/locations/${await location(api)}` }),
  'PATCH /v1/locations/:id': async (api) => ({
    path: `/v1/locations/${await location(api)}`,
    body: { name: 'N' },
  }),
  'DELETE /v1/locations/:id': async (api) => ({ path: `/v1/locations/${await location(api)}` }),

  'POST /v1/devices': async () => ({
    path: '/v1/devices',
    body: { code: uniq('gate') },
    // Standing nowhere: a principal held to sites places the devices it makes at its locations.
    restricted: { status: 422, code: 'invalid_value' },
  }),
  'GET /v1/devices': async (api, at) => ({ path: '/v1/devices', excluded: (await device(api, at)).id }),
  'GET /v1/devices/:id': async (api, at) => ({ path: `/v1/devices/${(await device(api, at)).id}` }),
  'PATCH /v1/devices/:id': async (api, at) => ({
    path: `/v1/devices/${(await device(api, at)).id}`,
    body: { name: 'N' },
  }),
  'DELETE /v1/devices/:id': async (api, at) => ({ path: `/v1/devices/${(await device(api, at)).id}` }),
  'POST /v1/devices/:id/pairing-codes': async (api, at) => ({
    path: `/v1/devices/${(await device(api, at)).id}/pairing-codes`,
  }),
  'POST /v1/devices/:id/unpair': async (api, at) => ({
    path: `/v1/devices/${(await device(api, at)).id}/unpair`,
  }),
  // A device key's own route: an API key, held to sites or not, is refused before its sites matter.
  'GET /v1/devices/current': async () => ({
    path: '/v1/devices/current',
    restricted: { status: 403, code: 'missing_scope' },
  }),

  'POST /v1/sessions': async (api, at) => ({
    path: '/v1/sessions',
    body: await sessionBody(api, at),
    restricted: { status: 422, code: 'unknown_device' },
  }),
  'GET /v1/sessions': async (api, at) => ({ path: '/v1/sessions', excluded: await session(api, at) }),
  'GET /v1/sessions/:id': async (api, at) => ({ path: `/v1/sessions/${await session(api, at)}` }),
  'PATCH /v1/sessions/:id': async (api, at) => ({
    path: `/v1/sessions/${await session(api, at)}`,
    body: { notes: 'N' },
  }),
  'DELETE /v1/sessions/:id': async (api, at) => ({ path: `/v1/sessions/${await session(api, at)}` }),
  'GET /v1/sessions/:id/revisions': async (api, at) => ({
    path: `/v1/sessions/${await session(api, at)}/revisions`,
  }),
  'POST /v1/sessions/:id/approve': async (api, at) => ({
    path: `/v1/sessions/${await session(api, at)}/approve`,
  }),
  'POST /v1/sessions/:id/reject': async (api, at) => ({
    path: `/v1/sessions/${await session(api, at)}/reject`,
    body: { note: 'Not on site.' },
  }),

  'POST /v1/scans': async (api, at) => ({
    path: '/v1/scans',
    body: { operator_id: await operator(api, at), device_id: at.device.code },
    restricted: { status: 422, code: 'unknown_device' },
  }),
  'POST /v1/scans/batch': async (api, at) => ({
    path: '/v1/scans/batch',
    body: { scans: [{ operator_id: await operator(api, at), device_id: at.device.code }] },
    // Each scan answers in its slot, as it would alone.
    restricted: (res) => {
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect((res.body as { data: unknown[] }).data[0]).toMatchObject({ code: 'unknown_device' })
    },
  }),
  'GET /v1/scans': async (api, at) => ({ path: '/v1/scans', excluded: await scan(api, at) }),
  'GET /v1/scans/:id': async (api, at) => ({ path: `/v1/scans/${await scan(api, at)}` }),

  'GET /v1/events': async () => ({ path: '/v1/events' }),
  'GET /v1/events/:id': async (api, at) => ({ path: `/v1/events/${await event(api, at)}` }),

  'POST /v1/webhook-endpoints': async () => ({
    path: '/v1/webhook-endpoints',
    body: { url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] },
  }),
  'GET /v1/webhook-endpoints': async () => ({ path: '/v1/webhook-endpoints' }),
  'GET /v1/webhook-endpoints/:id': async (api) => ({ path: `/v1/webhook-endpoints/${await endpoint(api)}` }),
  'PATCH /v1/webhook-endpoints/:id': async (api) => ({
    path: `/v1/webhook-endpoints/${await endpoint(api)}`,
    body: { description: 'N' },
  }),
  'DELETE /v1/webhook-endpoints/:id': async (api) => ({
    path: `/v1/webhook-endpoints/${await endpoint(api)}`,
  }),
  'POST /v1/webhook-endpoints/:id/rotate-secret': async (api) => ({
    path: `/v1/webhook-endpoints/${await endpoint(api)}/rotate-secret`,
  }),
  'POST /v1/webhook-endpoints/:id/send-test': async (api) => ({
    path: `/v1/webhook-endpoints/${await endpoint(api)}/send-test`,
  }),
  'POST /v1/webhook-endpoints/:id/recover': async (api) => ({
    path: `/v1/webhook-endpoints/${await endpoint(api)}/recover`,
    body: { since: new Date(Date.now() - 60_000).toISOString() },
  }),
  'GET /v1/webhook-deliveries': async () => ({ path: '/v1/webhook-deliveries' }),
  'GET /v1/webhook-deliveries/:id': async (api) => ({
    path: `/v1/webhook-deliveries/${await delivery(api)}`,
  }),
  'POST /v1/webhook-deliveries/:id/resend': async (api) => ({
    path: `/v1/webhook-deliveries/${await delivery(api)}/resend`,
  }),

  'POST /v1/pay-periods': async () => ({ path: '/v1/pay-periods', body: period() }),
  'GET /v1/pay-periods': async () => ({ path: '/v1/pay-periods' }),
  'GET /v1/pay-periods/:id': async (api) => ({ path: `/v1/pay-periods/${await payPeriod(api)}` }),
  'POST /v1/pay-periods/:id/close': async (api) => ({
    path: `/v1/pay-periods/${await payPeriod(api)}/close`,
  }),
  'POST /v1/pay-periods/:id/reopen': async (api) => ({
    path: `/v1/pay-periods/${await payPeriod(api)}/reopen`,
  }),
  'POST /v1/pay-rules': async () => ({ path: '/v1/pay-rules', body: { name: uniq('rule') } }),
  'GET /v1/pay-rules': async () => ({ path: '/v1/pay-rules' }),
  'GET /v1/pay-rules/:id': async (api) => ({ path: `/v1/pay-rules/${await payRule(api)}` }),
  'PATCH /v1/pay-rules/:id': async (api) => ({
    path: `/v1/pay-rules/${await payRule(api)}`,
    body: { name: 'N' },
  }),
  'DELETE /v1/pay-rules/:id': async (api) => ({ path: `/v1/pay-rules/${await payRule(api)}` }),
  // The operator homed elsewhere has a session this month: the owner's rows show it, not the others'.
  'GET /v1/timesheets': async (api, at) => {
    const body = await sessionBody(api, at)
    await created(api, '/v1/sessions', body)
    return { path: '/v1/timesheets?from=2026-03-01&to=2026-03-31', excluded: body.operator_id }
  },

  // People and keys: only people may (no key holds users:* or keys:*), the owners.
  'POST /v1/users': async () => ({
    path: '/v1/users',
    body: { email: `${uniq('person')}@example.com`, name: 'Pat', role: 'viewer', location_ids: null },
  }),
  'GET /v1/users': async () => ({ path: '/v1/users' }),
  'GET /v1/users/:id': async (api) => ({ path: `/v1/users/${await user(api)}`, modeless: true }),
  'PATCH /v1/users/:id': async (api) => ({
    path: `/v1/users/${await user(api)}`,
    body: { name: 'N' },
    modeless: true,
  }),
  'POST /v1/users/:id/deactivate': async (api) => ({
    path: `/v1/users/${await user(api)}/deactivate`,
    modeless: true,
  }),
  'POST /v1/users/:id/reactivate': async (api) => ({
    path: `/v1/users/${await user(api)}/reactivate`,
    modeless: true,
  }),
  'POST /v1/users/:id/invite': async (api) => ({
    path: `/v1/users/${await user(api)}/invite`,
    modeless: true,
  }),
  'POST /v1/users/:id/sign-out-everywhere': async (api) => ({
    path: `/v1/users/${await user(api)}/sign-out-everywhere`,
    modeless: true,
  }),
  'GET /v1/audit-log': async () => ({ path: '/v1/audit-log' }),
  'POST /v1/api-keys': async () => ({ path: '/v1/api-keys', body: { label: uniq('key'), mode: 'live' } }),
  'GET /v1/api-keys': async () => ({ path: '/v1/api-keys' }),
  'GET /v1/api-keys/:id': async (api) => ({ path: `/v1/api-keys/${await apiKey(api)}`, modeless: true }),
  'POST /v1/api-keys/:id/revoke': async (api) => ({
    path: `/v1/api-keys/${await apiKey(api)}/revoke`,
    modeless: true,
  }),
}

/**
 * Routes any valid key may call, whatever its scopes, a device's key too: each answers about the
 * caller's own account and nothing else.
 */
const ANY_KEY = ['GET /v1/account']

/**
 * The signed-in person's own routes (a session cookie, no key, no account): a body that passes the
 * route's schema, and what the signed-in person gets (a password change with a wrong current
 * password: refused by the route itself, `invalid_credentials`, not by the sign-in checks).
 */
const SIGNED_IN: Record<string, { body?: unknown; status: number; code?: string }> = {
  'GET /v1/auth/session': { status: 200 },
  'POST /v1/auth/password': {
    body: { current_password: 'not-the-password', new_password: 'a-new-password-1' },
    status: 401,
    code: 'invalid_credentials',
  },
  'POST /v1/auth/sign-out': { status: 204 },
}

describe('security of every /v1 route', () => {
  let t: TestApp
  // Endpoints point at the loopback discard port; no worker runs, so nothing is ever sent there.
  beforeAll(async () => {
    t = await buildTestApp({ webhookAllowPrivateUrls: true })
  })
  afterAll(() => t?.close())

  const api = () =>
    registeredRoutes(t.app).filter((r) => r.url.startsWith('/v1/') && r.method !== 'HEAD' && !r.public)
  const guarded = () => api().filter((r) => !r.signedIn)

  it('has the security cases of every route that needs a key, and of no other', () => {
    const routes = guarded().map((r) => `${r.method} ${r.url}`)
    expect(routes.length).toBeGreaterThan(20)
    expect([...Object.keys(REQUESTS), ...ANY_KEY].sort()).toEqual(routes.sort())
    const personal = api()
      .filter((r) => r.signedIn)
      .map((r) => `${r.method} ${r.url}`)
    expect(Object.keys(SIGNED_IN).sort()).toEqual(personal.sort())
  })

  it('a route that declares a scope and no sites stops the app at start-up', async () => {
    const app = Fastify()
    registerAuth(app)
    app.register(async (instance) => {
      instance.get('/v1/anything', { config: { scope: 'operators:read' } }, async () => ({}))
    })
    await expect(app.ready()).rejects.toThrow(
      'Route GET /v1/anything declares no config.sites (account-wide, per-site, none)',
    )
    await app.close()
    // Declared, it starts.
    const declared = Fastify()
    registerAuth(declared)
    declared.register(async (instance) => {
      instance.get('/v1/anything', { config: { scope: 'operators:read', sites: 'none' } }, async () => ({}))
    })
    await declared.ready()
    await declared.close()
  })

  it.each(Object.entries(SIGNED_IN))(
    "%s: the signed-in person's own: 401 without the cookie or with a key, 403 without the CSRF token on a change",
    async (name, expected) => {
      const route = api().find((r) => `${r.method} ${r.url}` === name)
      expect(route, `${name} is a route of the app`).toBeDefined()
      if (!route) return
      const { body } = expected
      const request = { path: route.url, body }
      expectError(await send(t.client(undefined), route.method, request), 401, 'authentication_error')
      const account = uniq('sec')
      const key = t.client((await t.key({ account, mode: 'live' })).secret)
      expectError(await send(key, route.method, request), 401, 'authentication_error')
      const person = await signedInPerson(t, account, 'viewer')
      if (route.method !== 'GET') {
        const withoutToken = await person.live.request({
          method: route.method as 'POST',
          url: route.url,
          headers: { 'x-csrf-token': '' },
          ...(body === undefined ? {} : { payload: body as object }),
        })
        expectError(withoutToken, 403, 'insufficient_scope', 'csrf_token_invalid')
      }
      const res = await send(person.live, route.method, request)
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(expected.status)
      if (expected.code !== undefined) expect(errorOf(res).code).toBe(expected.code)
    },
  )

  it("GET /v1/account: 401 without a key; any key, with no scope or a device's, reads its own account only", async () => {
    expectError(await t.client(undefined).get('/v1/account'), 401, 'authentication_error')
    const account = uniq('sec')
    const owner = await t.key({ account, mode: 'live' })
    const unscoped = await t.key({ account, mode: 'live', scopes: [] })
    const other = await t.key({ account: uniq('other'), mode: 'test' })
    const paired = await pairedDevice(t, t.client(owner.secret))
    const location = await t
      .client(owner.secret)
      .post<{ id: string }>('/v1/locations', { name: 'L', timezone: 'UTC' })
    const restricted = await createKey(t.db, { account, mode: 'live', locationIds: [location.body.id] })
    const people = await Promise.all(
      ROLES.map((role) => signedInPerson(t, account, role, [location.body.id])),
    )
    const ownAccount = { object: 'account', id: owner.account_id, name: account, livemode: true }
    for (const api of [
      t.client(owner.secret),
      t.client(unscoped.secret),
      paired.api,
      t.client(restricted.secret),
      ...people.map((person) => person.live),
    ]) {
      const res = await api.get('/v1/account')
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body).toEqual(ownAccount)
    }
    const res = await t.client(other.secret).get('/v1/account')
    expect(res.body).toMatchObject({ id: other.account_id, livemode: false })
    expect(res.body).not.toMatchObject({ id: owner.account_id })
  })

  it.each(Object.entries(REQUESTS))(
    '%s: 401 without a key; 403 without its scope, with a device key or for a role without it; 404 in the wrong mode or account; what a principal held to another location gets',
    async (name, prepare) => {
      const route = guarded().find((r) => `${r.method} ${r.url}` === name)
      expect(route, `${name} is a route of the app`).toBeDefined()
      if (route) await expectRouteSecured(t, route, prepare)
    },
  )
})
