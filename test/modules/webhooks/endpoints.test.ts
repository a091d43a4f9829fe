import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dispatchEvents } from '../../../src/modules/webhooks/outbox-relay.js'
import { type ApiClient, buildTestApp, errorOf, type TestApp } from '../../helpers/app.js'
import {
  type WebhookDelivery as Delivery,
  type WebhookEndpoint as Endpoint,
  type WebhookEndpointWithSecret as EndpointWithSecret,
  ISO_MS,
  type List,
  uniq,
} from '../../helpers/assertions.js'
import { freshAccount } from '../../helpers/fixtures.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'

const ENDPOINT_KEYS = [
  'created',
  'description',
  'disabled_reason',
  'enabled_events',
  'id',
  'livemode',
  'object',
  'status',
  'updated',
  'url',
]
const SECRET = /^whsec_[A-Za-z0-9_-]{32,}$/
// A public IPv4 literal: accepted without DNS, never contacted (these suites run no worker).
const PUBLIC_URL = 'https://93.184.216.34/hooks/attendance'

function expectEndpointShape(endpoint: Endpoint, livemode: boolean) {
  expect(Object.keys(endpoint).sort()).toEqual(ENDPOINT_KEYS)
  expect(endpoint.object).toBe('webhook_endpoint')
  expect(endpoint.id).toMatch(/^we_[0-9A-Z]{26}$/)
  expect(endpoint.livemode).toBe(livemode)
  expect(endpoint.created).toMatch(ISO_MS)
  expect(endpoint.updated).toMatch(ISO_MS)
}

describe('webhook endpoints over HTTP (private URLs refused)', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp({ webhookAllowPrivateUrls: false })
  })
  afterAll(() => t.close())

  async function createEndpoint(api: ApiClient, body: Record<string, unknown> = {}) {
    const res = await api.post<EndpointWithSecret>('/v1/webhook-endpoints', {
      url: PUBLIC_URL,
      enabled_events: ['*'],
      ...body,
    })
    expect(res.status).toBe(201)
    return res.body
  }

  it('creates an endpoint and shows its signing secret in the create answer only', async () => {
    const { api } = await freshAccount(t)
    const res = await api.post<EndpointWithSecret>('/v1/webhook-endpoints', {
      url: PUBLIC_URL,
      enabled_events: ['operator.created', 'session.*'],
      description: 'HR sync',
    })
    expect(res.status).toBe(201)
    const { secret, ...endpoint } = res.body
    expect(secret).toMatch(SECRET)
    expectEndpointShape(endpoint as Endpoint, false)
    expect(endpoint).toMatchObject({
      url: PUBLIC_URL,
      enabled_events: ['operator.created', 'session.*'],
      description: 'HR sync',
      status: 'enabled',
      disabled_reason: null,
    })

    const got = await api.get<Endpoint>(`/v1/webhook-endpoints/${endpoint.id}`)
    expect(got.status).toBe(200)
    expect(got.body).not.toHaveProperty('secret')
    expect(got.body).toEqual(endpoint)
    expect(got.raw.body).not.toContain(secret)

    const list = await api.get<List<Endpoint>>('/v1/webhook-endpoints')
    expect(list.status).toBe(200)
    expect(list.body.data).toEqual([endpoint])
    expect(list.raw.body).not.toContain('whsec_')

    const patched = await api.patch<Endpoint>(`/v1/webhook-endpoints/${endpoint.id}`, {
      description: 'renamed',
    })
    expect(patched.status).toBe(200)
    expect(patched.body).not.toHaveProperty('secret')
    expect(patched.raw.body).not.toContain('whsec_')
    expectEndpointShape(patched.body, false)
    expect(patched.body.description).toBe('renamed')
  })

  it('a live key creates live endpoints', async () => {
    const { api } = await freshAccount(t, 'live')
    const endpoint = await createEndpoint(api)
    expect(endpoint.livemode).toBe(true)
    expect(endpoint.secret).toMatch(SECRET)
  })

  it('PATCH changes url, enabled_events and description; an empty PATCH changes nothing', async () => {
    const { api } = await freshAccount(t)
    const endpoint = await createEndpoint(api, { enabled_events: ['operator.*'], description: 'a' })
    const res = await api.patch<Endpoint>(`/v1/webhook-endpoints/${endpoint.id}`, {
      url: 'https://93.184.216.35/other',
      enabled_events: ['location.created', '*'],
      description: null,
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      id: endpoint.id,
      url: 'https://93.184.216.35/other',
      enabled_events: ['location.created', '*'],
      description: null,
      status: 'enabled',
    })
    const got = await api.get<Endpoint>(`/v1/webhook-endpoints/${endpoint.id}`)
    expect(got.body).toEqual(res.body)

    const same = await api.patch<Endpoint>(`/v1/webhook-endpoints/${endpoint.id}`, {})
    expect(same.status).toBe(200)
    expect(same.body).toEqual(res.body)
  })

  it('lists newest first with a cursor', async () => {
    const { api } = await freshAccount(t)
    const created: string[] = []
    for (let i = 0; i < 5; i++) created.push((await createEndpoint(api)).id)
    const seen: string[] = []
    let cursor: string | null = null
    for (let page = 0; page < 5; page++) {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2'
      const res = await api.get<List<Endpoint>>(`/v1/webhook-endpoints${query}`)
      expect(res.status).toBe(200)
      seen.push(...res.body.data.map((e) => e.id))
      cursor = res.body.next_cursor
      expect(res.body.has_more).toBe(cursor !== null)
      if (!res.body.has_more) break
    }
    expect(seen).toEqual([...created].reverse())
  })

  it('DELETE answers the deleted marker; the endpoint is gone afterwards', async () => {
    const { api } = await freshAccount(t)
    const endpoint = await createEndpoint(api)
    const res = await api.delete(`/v1/webhook-endpoints/${endpoint.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ object: 'webhook_endpoint', id: endpoint.id, deleted: true })
    const got = await api.get(`/v1/webhook-endpoints/${endpoint.id}`)
    expect(got.status).toBe(404)
    expect(errorOf(got).type).toBe('not_found')
    expect((await api.delete(`/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(404)
    expect((await api.get<List<Endpoint>>('/v1/webhook-endpoints')).body.data).toEqual([])
  })

  it('unknown ids answer 404 on every endpoint route', async () => {
    const { api } = await freshAccount(t)
    const id = 'we_01JAAAAAAAAAAAAAAAAAAAAAAA'
    for (const res of [
      await api.get(`/v1/webhook-endpoints/${id}`),
      await api.patch(`/v1/webhook-endpoints/${id}`, { description: 'x' }),
      await api.delete(`/v1/webhook-endpoints/${id}`),
      await api.post(`/v1/webhook-endpoints/${id}/rotate-secret`, {}),
      await api.post(`/v1/webhook-endpoints/${id}/send-test`),
    ]) {
      expect(res.status).toBe(404)
      expect(errorOf(res).type).toBe('not_found')
    }
  })

  describe('enabled_events validation', () => {
    it('accepts exact types, <resource>.* of every resource and *', async () => {
      const { api } = await freshAccount(t)
      const patterns = [
        'session.completed',
        'scan.flagged',
        'device.deleted',
        'operator.*',
        'session.*',
        'device.*',
        'location.*',
        'scan.*',
        '*',
      ]
      const endpoint = await createEndpoint(api, { enabled_events: patterns })
      expect(endpoint.enabled_events).toEqual(patterns)
    })

    const bad: Array<[string, string[], number]> = [
      ['an unknown type of a known resource', ['operator.exploded'], 0],
      ['an unknown resource wildcard', ['operator.created', 'payment.*'], 1],
      ['a bare resource name', ['operator'], 0],
      ['a resource with a trailing dot', ['operator.'], 0],
      ['a wildcard of the action', ['*.created'], 0],
      ['a double star', ['**'], 0],
      ['a nested wildcard', ['session.*.*'], 0],
      ['a differently cased type', ['Operator.Created'], 0],
      ['a type with spaces', [' operator.created'], 0],
      ['a prototype property as a resource', ['toString.*'], 0],
      ['__proto__ as a resource', ['session.*', 'operator.*', '__proto__.*'], 2],
      ['constructor as a resource', ['constructor.*'], 0],
    ]
    for (const [label, enabledEvents, index] of bad) {
      it(`refuses ${label} with invalid_event_type naming the entry`, async () => {
        const { api } = await freshAccount(t)
        const res = await api.post('/v1/webhook-endpoints', {
          url: PUBLIC_URL,
          enabled_events: enabledEvents,
        })
        expect(res.status).toBe(422)
        expect(errorOf(res)).toMatchObject({
          type: 'validation_error',
          code: 'invalid_event_type',
          param: `enabled_events[${index}]`,
        })
        const endpoint = await createEndpoint(api)
        const patch = await api.patch(`/v1/webhook-endpoints/${endpoint.id}`, {
          enabled_events: enabledEvents,
        })
        expect(patch.status).toBe(422)
        expect(errorOf(patch)).toMatchObject({
          code: 'invalid_event_type',
          param: `enabled_events[${index}]`,
        })
        const list = await api.get<List<Endpoint>>('/v1/webhook-endpoints')
        expect(list.body.data.map((e) => e.id)).toEqual([endpoint.id])
        expect(list.body.data[0]?.enabled_events).toEqual(['*'])
      })
    }

    it('refuses an empty list, a missing list and a non-array', async () => {
      const { api } = await freshAccount(t)
      const empty = await api.post('/v1/webhook-endpoints', { url: PUBLIC_URL, enabled_events: [] })
      expect(empty.status).toBe(422)
      expect(errorOf(empty)).toMatchObject({ type: 'validation_error', param: 'enabled_events' })
      const missing = await api.post('/v1/webhook-endpoints', { url: PUBLIC_URL })
      expect(missing.status).toBe(422)
      expect(errorOf(missing)).toMatchObject({ code: 'missing_param', param: 'enabled_events' })
      const notArray = await api.post('/v1/webhook-endpoints', { url: PUBLIC_URL, enabled_events: '*' })
      expect(notArray.status).toBe(422)
      expect(errorOf(notArray)).toMatchObject({ code: 'invalid_type', param: 'enabled_events' })
      const endpoint = await createEndpoint(api)
      const patch = await api.patch(`/v1/webhook-endpoints/${endpoint.id}`, { enabled_events: [] })
      expect(patch.status).toBe(422)
      expect(errorOf(patch).param).toBe('enabled_events')
      expect((await api.get<List<Endpoint>>('/v1/webhook-endpoints')).body.data).toHaveLength(1)
    })
  })

  describe('URL policy with WEBHOOK_ALLOW_PRIVATE_URLS=false', () => {
    const refused: Array<[string, string]> = [
      ['plain http://', 'http://93.184.216.34/hook'],
      ['a loopback IPv4 address', 'https://127.0.0.1/hook'],
      ['another loopback IPv4 address', 'https://127.8.9.10:8443/hook'],
      ['a 10.x private address', 'https://10.1.2.3/hook'],
      ['a 192.168.x private address', 'https://192.168.1.20/hook'],
      ['the link-local metadata address', 'https://169.254.169.254/latest/meta-data'],
      ['IPv6 loopback', 'https://[::1]/hook'],
      ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hook'],
      ['localhost', 'https://localhost/hook'],
      ['a name under localhost', 'https://api.localhost/hook'],
      ['a decimal loopback address', 'https://2130706433/hook'],
      ['a URL with credentials', 'https://user:pass@93.184.216.34/hook'],
      ['a URL with a user name only', 'https://user@93.184.216.34/hook'],
      ['another scheme', 'ftp://93.184.216.34/hook'],
      ['a relative URL', '/hook'],
      ['text that is no URL', 'not a url'],
    ]
    for (const [label, url] of refused) {
      it(`refuses ${label} on create and on PATCH (${url})`, async () => {
        const { api } = await freshAccount(t)
        const res = await api.post('/v1/webhook-endpoints', { url, enabled_events: ['*'] })
        expect(res.status).toBe(422)
        expect(errorOf(res)).toMatchObject({ type: 'validation_error', code: 'invalid_url', param: 'url' })
        const endpoint = await createEndpoint(api)
        const patch = await api.patch(`/v1/webhook-endpoints/${endpoint.id}`, { url })
        expect(patch.status).toBe(422)
        expect(errorOf(patch)).toMatchObject({ code: 'invalid_url', param: 'url' })
        const got = await api.get<Endpoint>(`/v1/webhook-endpoints/${endpoint.id}`)
        expect(got.body.url).toBe(PUBLIC_URL)
        expect((await api.get<List<Endpoint>>('/v1/webhook-endpoints')).body.data).toHaveLength(1)
      })
    }

    it('accepts an https URL of a public address', async () => {
      const { api } = await freshAccount(t)
      const endpoint = await createEndpoint(api, { url: 'https://93.184.216.34:8443/a/b?c=d' })
      expect(endpoint.url).toBe('https://93.184.216.34:8443/a/b?c=d')
    })
  })

  describe('rotate-secret', () => {
    it('returns a new secret once; the previous one stays valid for 24 hours by default', async () => {
      const { api } = await freshAccount(t)
      const endpoint = await createEndpoint(api)
      const before = Date.now()
      const res = await api.post<EndpointWithSecret>(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {})
      const after = Date.now()
      expect(res.status).toBe(200)
      const { secret, ...rest } = res.body
      expect(secret).toMatch(SECRET)
      expect(secret).not.toBe(endpoint.secret)
      expectEndpointShape(rest as Endpoint, false)
      expect(rest.id).toBe(endpoint.id)

      const row = await t.db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', endpoint.id)
        .executeTakeFirstOrThrow()
      expect(row.secret).toBe(secret)
      expect(row.previous_secret).toBe(endpoint.secret)
      const expires = Number(row.previous_secret_expires_at)
      expect(expires).toBeGreaterThanOrEqual(before + 24 * 3_600_000)
      expect(expires).toBeLessThanOrEqual(after + 24 * 3_600_000)

      const got = await api.get(`/v1/webhook-endpoints/${endpoint.id}`)
      expect(got.body).not.toHaveProperty('secret')
      expect(got.raw.body).not.toContain('whsec_')
      const list = await api.get('/v1/webhook-endpoints')
      expect(list.raw.body).not.toContain('whsec_')
    })

    it('takes no body at all as the default too', async () => {
      const { api } = await freshAccount(t)
      const endpoint = await createEndpoint(api)
      const res = await api.post<EndpointWithSecret>(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`)
      expect(res.status).toBe(200)
      expect(res.body.secret).toMatch(SECRET)
    })

    it('accepts grace_hours 0 (previous secret dropped) and 168', async () => {
      const { api } = await freshAccount(t)
      const endpoint = await createEndpoint(api)
      const zero = await api.post<EndpointWithSecret>(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
        grace_hours: 0,
      })
      expect(zero.status).toBe(200)
      let row = await t.db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', endpoint.id)
        .executeTakeFirstOrThrow()
      expect(row.secret).toBe(zero.body.secret)
      expect(row.previous_secret).toBeNull()

      const before = Date.now()
      const max = await api.post<EndpointWithSecret>(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
        grace_hours: 168,
      })
      expect(max.status).toBe(200)
      row = await t.db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', endpoint.id)
        .executeTakeFirstOrThrow()
      expect(row.previous_secret).toBe(zero.body.secret)
      expect(Number(row.previous_secret_expires_at)).toBeGreaterThanOrEqual(before + 168 * 3_600_000)
    })

    for (const grace of [-1, 169, 'soon']) {
      it(`refuses grace_hours ${JSON.stringify(grace)} and keeps the secret`, async () => {
        const { api } = await freshAccount(t)
        const endpoint = await createEndpoint(api)
        const res = await api.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
          grace_hours: grace,
        })
        expect(res.status).toBe(422)
        expect(errorOf(res)).toMatchObject({ type: 'validation_error', param: 'grace_hours' })
        const row = await t.db
          .selectFrom('webhook_endpoints')
          .selectAll()
          .where('id', '=', endpoint.id)
          .executeTakeFirstOrThrow()
        expect(row.secret).toBe(endpoint.secret)
        expect(row.previous_secret).toBeNull()
      })
    }
  })

  describe('status', () => {
    async function pendingDeliveries(endpointId: string) {
      return t.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).execute()
    }

    it('PATCH status disabled marks it manual and fails its pending deliveries; enabled clears it', async () => {
      const { api } = await freshAccount(t)
      const endpoint = await createEndpoint(api, { enabled_events: ['operator.created'] })
      const other = await createEndpoint(api, { enabled_events: ['operator.created'] })
      expect((await api.post('/v1/operators', { ident: uniq('op') })).status).toBe(201)
      // No worker runs in this suite: the real dispatcher turns the event into pending deliveries.
      await dispatchEvents(t.db)
      expect((await pendingDeliveries(endpoint.id)).map((d) => d.status)).toEqual(['pending'])

      const disabled = await api.patch<Endpoint>(`/v1/webhook-endpoints/${endpoint.id}`, {
        status: 'disabled',
      })
      expect(disabled.status).toBe(200)
      expect(disabled.body).toMatchObject({ status: 'disabled', disabled_reason: 'manual' })
      expect((await pendingDeliveries(endpoint.id)).map((d) => d.status)).toEqual(['failed'])
      expect((await pendingDeliveries(endpoint.id))[0]?.next_attempt_at).toBeNull()
      // Only that endpoint's deliveries stop.
      expect((await pendingDeliveries(other.id)).map((d) => d.status)).toEqual(['pending'])

      const deliveries = await api.get<List<Delivery>>(`/v1/webhook-deliveries?endpoint_id=${endpoint.id}`)
      expect(deliveries.body.data.map((d) => d.status)).toEqual(['failed'])

      const test = await api.post(`/v1/webhook-endpoints/${endpoint.id}/send-test`)
      expect(test.status).toBe(409)
      expect(errorOf(test)).toMatchObject({ type: 'conflict', code: 'endpoint_disabled' })

      // A disabled endpoint gets no deliveries of new events.
      expect((await api.post('/v1/operators', { ident: uniq('op') })).status).toBe(201)
      await dispatchEvents(t.db)
      expect(await pendingDeliveries(endpoint.id)).toHaveLength(1)
      expect(await pendingDeliveries(other.id)).toHaveLength(2)

      await t.db
        .updateTable('webhook_endpoints')
        .set({ consecutive_failures: 3 })
        .where('id', '=', endpoint.id)
        .execute()
      const enabled = await api.patch<Endpoint>(`/v1/webhook-endpoints/${endpoint.id}`, { status: 'enabled' })
      expect(enabled.status).toBe(200)
      expect(enabled.body).toMatchObject({ status: 'enabled', disabled_reason: null })
      const row = await t.db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', endpoint.id)
        .executeTakeFirstOrThrow()
      expect(row.consecutive_failures).toBe(0)
      expect((await api.post(`/v1/webhook-endpoints/${endpoint.id}/send-test`)).status).toBe(201)
    })

    it('refuses an unknown status value', async () => {
      const { api } = await freshAccount(t)
      const endpoint = await createEndpoint(api)
      const res = await api.patch(`/v1/webhook-endpoints/${endpoint.id}`, { status: 'paused' })
      expect(res.status).toBe(422)
      expect(errorOf(res)).toMatchObject({ type: 'validation_error', param: 'status' })
    })

    it('send-test answers 201 with a pending delivery of webhook_endpoint.test to that endpoint', async () => {
      const { api } = await freshAccount(t)
      const endpoint = await createEndpoint(api)
      const other = await createEndpoint(api)
      const res = await api.post<Delivery>(`/v1/webhook-endpoints/${endpoint.id}/send-test`)
      expect(res.status).toBe(201)
      expect(res.body).toMatchObject({
        object: 'webhook_delivery',
        endpoint_id: endpoint.id,
        event_type: 'webhook_endpoint.test',
        status: 'pending',
        attempts: [],
        livemode: false,
      })
      expect(res.body.id).toMatch(/^whd_[0-9A-Z]{26}$/)
      expect(res.body.event_id).toMatch(/^evt_[0-9A-Z]{26}$/)
      await dispatchEvents(t.db)
      expect(await pendingDeliveries(other.id)).toEqual([])
      const got = await api.get<Delivery>(`/v1/webhook-deliveries/${res.body.id}`)
      expect(got.status).toBe(200)
      expect(got.body).toEqual(res.body)
    })

    it('DELETE stops the pending deliveries of the endpoint', async () => {
      const { api } = await freshAccount(t)
      const endpoint = await createEndpoint(api)
      const test = await api.post<Delivery>(`/v1/webhook-endpoints/${endpoint.id}/send-test`)
      expect(test.status).toBe(201)
      expect((await api.delete(`/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(200)
      expect((await pendingDeliveries(endpoint.id)).map((d) => d.status)).toEqual(['failed'])
    })
  })

  describe('scopes, modes and accounts', () => {
    it('webhooks:read can read but not create, change, rotate, test or delete', async () => {
      const name = uniq('acct')
      const writer = t.client((await t.key({ account: name })).secret)
      const reader = t.client((await t.key({ account: name, scopes: ['webhooks:read'] })).secret)
      const endpoint = await createEndpoint(writer)

      expect((await reader.get(`/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(200)
      expect((await reader.get('/v1/webhook-endpoints')).status).toBe(200)
      expect((await reader.get('/v1/webhook-deliveries')).status).toBe(200)
      for (const res of [
        await reader.post('/v1/webhook-endpoints', { url: PUBLIC_URL, enabled_events: ['*'] }),
        await reader.patch(`/v1/webhook-endpoints/${endpoint.id}`, { description: 'x' }),
        await reader.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {}),
        await reader.post(`/v1/webhook-endpoints/${endpoint.id}/send-test`),
        await reader.delete(`/v1/webhook-endpoints/${endpoint.id}`),
      ]) {
        expect(res.status).toBe(403)
        expect(errorOf(res).type).toBe('insufficient_scope')
      }
      const list = await writer.get<List<Endpoint>>('/v1/webhook-endpoints')
      expect(list.body.data).toHaveLength(1)
      expect(list.body.data[0]).toMatchObject({ description: null, status: 'enabled' })
    })

    it('a key without a webhooks scope cannot even read', async () => {
      const name = uniq('acct')
      const writer = t.client((await t.key({ account: name })).secret)
      const other = t.client(
        (await t.key({ account: name, scopes: ['operators:write', 'events:read'] })).secret,
      )
      const endpoint = await createEndpoint(writer)
      for (const res of [
        await other.get(`/v1/webhook-endpoints/${endpoint.id}`),
        await other.get('/v1/webhook-endpoints'),
        await other.get('/v1/webhook-deliveries'),
      ]) {
        expect(res.status).toBe(403)
        expect(errorOf(res).type).toBe('insufficient_scope')
      }
    })

    it('is invisible to the other mode and to other accounts', async () => {
      const name = uniq('acct')
      const testApi = t.client((await t.key({ account: name, mode: 'test' })).secret)
      const liveApi = t.client((await t.key({ account: name, mode: 'live' })).secret)
      const otherApi = (await freshAccount(t)).api
      const testEndpoint = await createEndpoint(testApi)
      const liveEndpoint = await createEndpoint(liveApi)
      expect(liveEndpoint.livemode).toBe(true)

      for (const [api, foreign] of [
        [liveApi, testEndpoint.id],
        [testApi, liveEndpoint.id],
        [otherApi, testEndpoint.id],
        [otherApi, liveEndpoint.id],
      ] as const) {
        for (const res of [
          await api.get(`/v1/webhook-endpoints/${foreign}`),
          await api.patch(`/v1/webhook-endpoints/${foreign}`, { status: 'disabled' }),
          await api.post(`/v1/webhook-endpoints/${foreign}/rotate-secret`, {}),
          await api.post(`/v1/webhook-endpoints/${foreign}/send-test`),
          await api.delete(`/v1/webhook-endpoints/${foreign}`),
        ]) {
          expect(res.status).toBe(404)
          expect(errorOf(res).type).toBe('not_found')
        }
      }
      expect((await testApi.get<List<Endpoint>>('/v1/webhook-endpoints')).body.data.map((e) => e.id)).toEqual(
        [testEndpoint.id],
      )
      expect((await liveApi.get<List<Endpoint>>('/v1/webhook-endpoints')).body.data.map((e) => e.id)).toEqual(
        [liveEndpoint.id],
      )
      expect((await otherApi.get<List<Endpoint>>('/v1/webhook-endpoints')).body.data).toEqual([])

      // Nothing changed behind the 404s.
      const test = await testApi.get<Endpoint>(`/v1/webhook-endpoints/${testEndpoint.id}`)
      expect(test.body.status).toBe('enabled')
      const live = await liveApi.get<Endpoint>(`/v1/webhook-endpoints/${liveEndpoint.id}`)
      expect(live.body.status).toBe('enabled')
      const rows = await t.db
        .selectFrom('webhook_endpoints')
        .select(['id', 'secret'])
        .where('id', 'in', [testEndpoint.id, liveEndpoint.id])
        .orderBy('id')
        .execute()
      expect(rows).toEqual([
        { id: testEndpoint.id, secret: testEndpoint.secret },
        { id: liveEndpoint.id, secret: liveEndpoint.secret },
      ])
    })

    it('a delivery of one mode is not found with a key of the other mode', async () => {
      const name = uniq('acct')
      const testApi = t.client((await t.key({ account: name, mode: 'test' })).secret)
      const liveApi = t.client((await t.key({ account: name, mode: 'live' })).secret)
      const endpoint = await createEndpoint(testApi)
      const delivery = await testApi.post<Delivery>(`/v1/webhook-endpoints/${endpoint.id}/send-test`)
      expect(delivery.status).toBe(201)
      expect((await liveApi.get(`/v1/webhook-deliveries/${delivery.body.id}`)).status).toBe(404)
      expect((await liveApi.post(`/v1/webhook-deliveries/${delivery.body.id}/resend`)).status).toBe(404)
      expect((await liveApi.get<List<Delivery>>('/v1/webhook-deliveries')).body.data).toEqual([])
    })
  })
})

describe('webhook endpoints with WEBHOOK_ALLOW_PRIVATE_URLS=true', () => {
  let t: TestApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    t = await buildTestApp({ webhookAllowPrivateUrls: true })
    receiver = await WebhookReceiver.start()
  })
  afterAll(async () => {
    await receiver.close()
    await t.close()
  })

  it('accepts the loopback receiver over http://', async () => {
    const api = t.client((await t.key({ account: uniq('acct') })).secret)
    const url = receiver.url(receiver.freshPath())
    const res = await api.post<EndpointWithSecret>('/v1/webhook-endpoints', { url, enabled_events: ['*'] })
    expect(res.status).toBe(201)
    expect(res.body.url).toBe(url)
    for (const other of ['http://localhost:9/hook', 'https://[::1]/hook', 'http://10.0.0.5/hook']) {
      const patched = await api.patch<Endpoint>(`/v1/webhook-endpoints/${res.body.id}`, { url: other })
      expect(patched.status).toBe(200)
      expect(patched.body.url).toBe(other)
    }
  })

  it('still refuses URLs that are not http(s)', async () => {
    const api = t.client((await t.key({ account: uniq('acct') })).secret)
    const res = await api.post('/v1/webhook-endpoints', { url: 'file:///etc/passwd', enabled_events: ['*'] })
    expect(res.status).toBe(422)
    expect(errorOf(res)).toMatchObject({ code: 'invalid_url', param: 'url' })
  })
})
