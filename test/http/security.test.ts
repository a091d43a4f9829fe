import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiClient, buildTestApp, type TestApp } from '../helpers/app.js'
import { expectError, uniq } from '../helpers/assertions.js'
import { pairedDevice } from '../helpers/fixtures.js'
import { registeredRoutes } from '../helpers/routes.js'
import { expectRouteSecured, type PrepareRequest } from '../helpers/security.js'

/** Creates an object with the owner's key and returns its id. */
async function created(api: ApiClient, path: string, body: unknown = undefined): Promise<string> {
  const res = await api.post<{ id: string }>(path, body)
  expect(res.status, `POST ${path}: ${JSON.stringify(res.body)}`).toBe(201)
  return res.body.id
}

const operator = (api: ApiClient) => created(api, '/v1/operators', { ident: uniq('op') })
const location = (api: ApiClient) =>
  created(api, '/v1/locations', { name: uniq('site'), timezone: 'Europe/Berlin' })
/** A device's id (its path) and code (how sessions and scans name it). */
async function device(api: ApiClient): Promise<{ id: string; code: string }> {
  const code = uniq('gate')
  return { id: await created(api, '/v1/devices', { code }), code }
}
async function sessionBody(api: ApiClient) {
  return {
    operator_id: await operator(api),
    device_id: (await device(api)).code,
    check_in: { time: '2026-03-02T08:00:00Z' },
    check_out: { time: '2026-03-02T16:00:00Z' },
  }
}
const session = async (api: ApiClient) => created(api, '/v1/sessions', await sessionBody(api))
const scan = async (api: ApiClient) =>
  created(api, '/v1/scans', { operator_id: await operator(api), device_id: (await device(api)).code })
const PERIOD = { start_date: '2026-03-01', end_date: '2026-03-31' }
const payPeriod = (api: ApiClient) => created(api, '/v1/pay-periods', PERIOD)
const payRule = (api: ApiClient) => created(api, '/v1/pay-rules', { name: uniq('rule') })
const endpoint = (api: ApiClient) =>
  created(api, '/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] })
const delivery = async (api: ApiClient) =>
  created(api, `/v1/webhook-endpoints/${await endpoint(api)}/send-test`)
async function event(api: ApiClient): Promise<string> {
  await operator(api)
  const list = await api.get<{ data: Array<{ id: string }> }>('/v1/events')
  const first = list.body.data[0]
  if (!first) throw new Error('creating an operator recorded no event')
  return first.id
}

/**
 * How to send each route's request: every /v1 route that needs a key has an entry, which the test
 * below checks against the app's route table, so no route ships without its security cases.
 */
const REQUESTS: Record<string, PrepareRequest> = {
  'POST /v1/operators': async () => ({ path: '/v1/operators', body: { ident: uniq('op') } }),
  'GET /v1/operators': async () => ({ path: '/v1/operators' }),
  'GET /v1/operators/:id': async (api) => ({ path: `/v1/operators/${await operator(api)}` }),
  'PATCH /v1/operators/:id': async (api) => ({
    path: `/v1/operators/${await operator(api)}`,
    body: { name: 'N' },
  }),
  'DELETE /v1/operators/:id': async (api) => ({ path: `/v1/operators/${await operator(api)}` }),

  'POST /v1/locations': async () => ({
    path: '/v1/locations',
    body: { name: uniq('site'), timezone: 'UTC' },
  }),
  'GET /v1/locations': async () => ({ path: '/v1/locations' }),
  'GET /v1/locations/:id': async (api) => ({ path: `/v1/locations/${await location(api)}` }),
  'PATCH /v1/locations/:id': async (api) => ({
    path: `/v1/locations/${await location(api)}`,
    body: { name: 'N' },
  }),
  'DELETE /v1/locations/:id': async (api) => ({ path: `/v1/locations/${await location(api)}` }),

  'POST /v1/devices': async () => ({ path: '/v1/devices', body: { code: uniq('gate') } }),
  'GET /v1/devices': async () => ({ path: '/v1/devices' }),
  'GET /v1/devices/:id': async (api) => ({ path: `/v1/devices/${(await device(api)).id}` }),
  'PATCH /v1/devices/:id': async (api) => ({
    path: `/v1/devices/${(await device(api)).id}`,
    body: { name: 'N' },
  }),
  'DELETE /v1/devices/:id': async (api) => ({ path: `/v1/devices/${(await device(api)).id}` }),
  'POST /v1/devices/:id/pairing-codes': async (api) => ({
    path: `/v1/devices/${(await device(api)).id}/pairing-codes`,
  }),
  'POST /v1/devices/:id/unpair': async (api) => ({ path: `/v1/devices/${(await device(api)).id}/unpair` }),
  'GET /v1/devices/current': async () => ({ path: '/v1/devices/current' }),

  'POST /v1/sessions': async (api) => ({ path: '/v1/sessions', body: await sessionBody(api) }),
  'GET /v1/sessions': async () => ({ path: '/v1/sessions' }),
  'GET /v1/sessions/:id': async (api) => ({ path: `/v1/sessions/${await session(api)}` }),
  'PATCH /v1/sessions/:id': async (api) => ({
    path: `/v1/sessions/${await session(api)}`,
    body: { notes: 'N' },
  }),
  'DELETE /v1/sessions/:id': async (api) => ({ path: `/v1/sessions/${await session(api)}` }),
  'GET /v1/sessions/:id/revisions': async (api) => ({ path: `/v1/sessions/${await session(api)}/revisions` }),

  'POST /v1/scans': async (api, paired) => ({
    path: '/v1/scans',
    body: { operator_id: await operator(api), device_id: paired.code },
  }),
  'POST /v1/scans/batch': async (api, paired) => ({
    path: '/v1/scans/batch',
    body: { scans: [{ operator_id: await operator(api), device_id: paired.code }] },
  }),
  'GET /v1/scans': async () => ({ path: '/v1/scans' }),
  'GET /v1/scans/:id': async (api) => ({ path: `/v1/scans/${await scan(api)}` }),

  'GET /v1/events': async () => ({ path: '/v1/events' }),
  'GET /v1/events/:id': async (api) => ({ path: `/v1/events/${await event(api)}` }),

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
  'POST /v1/sessions/:id/approve': async (api) => ({ path: `/v1/sessions/${await session(api)}/approve` }),
  'POST /v1/sessions/:id/reject': async (api) => ({
    path: `/v1/sessions/${await session(api)}/reject`,
    body: { note: 'Not on site.' },
  }),
  'POST /v1/pay-periods': async () => ({ path: '/v1/pay-periods', body: PERIOD }),
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
  'GET /v1/timesheets': async () => ({ path: '/v1/timesheets?from=2026-03-01&to=2026-03-31' }),
  'GET /v1/webhook-deliveries': async () => ({ path: '/v1/webhook-deliveries' }),
  'GET /v1/webhook-deliveries/:id': async (api) => ({
    path: `/v1/webhook-deliveries/${await delivery(api)}`,
  }),
  'POST /v1/webhook-deliveries/:id/resend': async (api) => ({
    path: `/v1/webhook-deliveries/${await delivery(api)}/resend`,
  }),
}

/**
 * Routes any valid key may call, whatever its scopes, a device's key too: each answers about the
 * caller's own account and nothing else.
 */
const ANY_KEY = ['GET /v1/account']

describe('security of every /v1 route', () => {
  let t: TestApp
  // Endpoints point at the loopback discard port; no worker runs, so nothing is ever sent there.
  beforeAll(async () => {
    t = await buildTestApp({ webhookAllowPrivateUrls: true })
  })
  afterAll(() => t?.close())

  const guarded = () =>
    registeredRoutes(t.app).filter((r) => r.url.startsWith('/v1/') && r.method !== 'HEAD' && !r.public)

  it('has the security cases of every route that needs a key, and of no other', () => {
    const routes = guarded().map((r) => `${r.method} ${r.url}`)
    expect(routes.length).toBeGreaterThan(20)
    expect([...Object.keys(REQUESTS), ...ANY_KEY].sort()).toEqual(routes.sort())
  })

  it("GET /v1/account: 401 without a key; any key, with no scope or a device's, reads its own account only", async () => {
    expectError(await t.client(undefined).get('/v1/account'), 401, 'authentication_error')
    const account = uniq('sec')
    const owner = await t.key({ account, mode: 'live' })
    const unscoped = await t.key({ account, mode: 'live', scopes: [] })
    const other = await t.key({ account: uniq('other'), mode: 'test' })
    const paired = await pairedDevice(t, t.client(owner.secret))
    const ownAccount = { object: 'account', id: owner.account_id, name: account, livemode: true }
    for (const api of [t.client(owner.secret), t.client(unscoped.secret), paired.api]) {
      const res = await api.get('/v1/account')
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body).toEqual(ownAccount)
    }
    const res = await t.client(other.secret).get('/v1/account')
    expect(res.body).toMatchObject({ id: other.account_id, livemode: false })
    expect(res.body).not.toMatchObject({ id: owner.account_id })
  })

  it.each(Object.entries(REQUESTS))(
    '%s: 401 without a key, 403 without its scope or with a device key, 404 in the wrong mode or account',
    async (name, prepare) => {
      const route = guarded().find((r) => `${r.method} ${r.url}` === name)
      expect(route, `${name} is a route of the app`).toBeDefined()
      if (route) await expectRouteSecured(t, route, prepare)
    },
  )
})
