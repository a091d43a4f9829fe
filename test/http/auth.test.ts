import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_CACHE_TTL_MS } from '../../src/http/auth.js'
import { revokeKey } from '../../src/modules/keys/service.js'
import { type ApiClient, type ApiResponse, buildTestApp, type TestApp } from '../helpers/app.js'
import { expectError, type List, type Operator } from '../helpers/assertions.js'
import { useTestClock } from '../helpers/clock.js'

const expectUnauthenticated = (res: ApiResponse) => expectError(res, 401, 'authentication_error')

describe('authentication', () => {
  const clock = useTestClock()
  let t: TestApp
  let valid: string

  beforeAll(async () => {
    t = await buildTestApp()
    valid = (await t.key()).secret
    // The control: the key used below with broken headers works when sent properly.
    expect((await t.client(valid).get('/v1/operators')).status).toBe(200)
  })
  afterAll(() => t?.close())

  const withHeader = (authorization: string) => t.client(undefined).get('/v1/operators', { authorization })

  it('refuses a request without an Authorization header with 401', async () => {
    expectUnauthenticated(await t.client(undefined).get('/v1/operators'))
    expectUnauthenticated(await t.client(undefined).post('/v1/operators', { ident: 'no-key' }))
  })

  it('refuses malformed Authorization headers with 401', async () => {
    expectUnauthenticated(await withHeader(`Basic ${Buffer.from(`${valid}:`).toString('base64')}`))
    expectUnauthenticated(await withHeader('Bearer'))
    expectUnauthenticated(await withHeader('Bearer '))
    expectUnauthenticated(await withHeader(`bearer ${valid}`))
    expectUnauthenticated(await withHeader(`BEARER ${valid}`))
    expectUnauthenticated(await withHeader(valid))
    expectUnauthenticated(await withHeader(`Bearer ${valid} extra`))
  })

  it('refuses an unknown key with 401, without echoing the key', async () => {
    const unknown = `sk_test_${'A'.repeat(32)}`
    const res = await t.client(unknown).get('/v1/operators')
    expectUnauthenticated(res)
    expect(res.raw.body).not.toContain(unknown)
    expectUnauthenticated(await t.client('sk_test_short').get('/v1/operators'))
    expectUnauthenticated(await t.client('not-a-key-at-all').get('/v1/operators'))
    // A real secret with one character changed is just as unknown.
    const altered = `${valid.slice(0, -1)}${valid.endsWith('A') ? 'B' : 'A'}`
    expectUnauthenticated(await t.client(altered).get('/v1/operators'))
  })

  it('refuses a revoked key with 401', async () => {
    const key = await t.key()
    expect(await revokeKey(t.db, key.id)).toBe(true)
    expectUnauthenticated(await t.client(key.secret).get('/v1/operators'))
    expectUnauthenticated(await t.client(key.secret).post('/v1/operators', { ident: 'revoked' }))
  })

  it('refuses an expired key with 401 and accepts one that has not expired yet', async () => {
    const expired = await t.key({ expiresAt: new Date(clock.now() - 1000) })
    expectUnauthenticated(await t.client(expired.secret).get('/v1/operators'))
    const current = await t.key({ expiresAt: new Date(clock.now() + 60 * 60 * 1000) })
    expect((await t.client(current.secret).get('/v1/operators')).status).toBe(200)
  })

  it('refuses a key from the moment it expires, even one it has just served', async () => {
    const expiresAt = new Date(clock.now() + 1500)
    const key = await t.key({ expiresAt })
    expect((await t.client(key.secret).get('/v1/operators')).status).toBe(200)
    clock.set(expiresAt.getTime() - 1)
    expect((await t.client(key.secret).get('/v1/operators')).status).toBe(200)
    clock.set(expiresAt.getTime())
    expectUnauthenticated(await t.client(key.secret).get('/v1/operators'))
  })

  it('stops accepting a revoked key that was in use once the key-cache TTL has passed', async () => {
    const key = await t.key()
    const api = t.client(key.secret)
    expect((await api.get('/v1/operators')).status).toBe(200)
    expect(await revokeKey(t.db, key.id)).toBe(true)
    // The lookup above was at this instant (the clock stands still): its entry lives KEY_CACHE_TTL_MS.
    clock.advance(KEY_CACHE_TTL_MS + 1)
    expectUnauthenticated(await api.get('/v1/operators'))
  })

  it('answers 401 before validating anything', async () => {
    expectUnauthenticated(await t.client(undefined).post('/v1/operators', { not: 'valid' }))
    expectUnauthenticated(await t.client(undefined).get('/v1/operators?limit=0'))
  })

  it('serves /healthz and /v1/openapi.json without a key', async () => {
    const health = await t.client(undefined).get('/healthz')
    expect(health.status).toBe(200)
    expect(health.headers['x-request-id']).toMatch(/^req_/)
    const openapi = await t.client(undefined).get<{ openapi: string }>('/v1/openapi.json')
    expect(openapi.status).toBe(200)
    expect(openapi.body.openapi).toMatch(/^3\./)
    expect(openapi.headers['x-request-id']).toMatch(/^req_/)
  })
})

describe('scopes', () => {
  let t: TestApp
  let operatorId: string

  beforeAll(async () => {
    t = await buildTestApp()
    const created = await t.client((await t.key()).secret).post<Operator>('/v1/operators', { ident: 'S-1' })
    expect(created.status).toBe(201)
    operatorId = created.body.id
  })
  afterAll(() => t?.close())

  it('refuses writes to a read-only key with 403 insufficient_scope, changing nothing', async () => {
    const reader = t.client((await t.key({ scopes: ['operators:read'] })).secret)
    expect((await reader.get('/v1/operators')).status).toBe(200)
    expect((await reader.get(`/v1/operators/${operatorId}`)).status).toBe(200)

    expectError(await reader.post('/v1/operators', { ident: 'S-2' }), 403, 'insufficient_scope')
    expectError(
      await reader.patch(`/v1/operators/${operatorId}`, { name: 'Renamed' }),
      403,
      'insufficient_scope',
    )
    expectError(await reader.delete(`/v1/operators/${operatorId}`), 403, 'insufficient_scope')

    const list = await reader.get<List<Operator>>('/v1/operators')
    expect(list.body.data.map((o) => o.ident)).toEqual(['S-1'])
    expect((await reader.get(`/v1/operators/${operatorId}`)).body).toMatchObject({
      name: null,
      is_active: true,
    })
  })

  it('lets operators:write also read operators', async () => {
    const writer = t.client((await t.key({ scopes: ['operators:write'] })).secret)
    expect((await writer.get('/v1/operators')).status).toBe(200)
    expect((await writer.get(`/v1/operators/${operatorId}`)).status).toBe(200)
    expect((await writer.post('/v1/operators', { ident: 'S-3' })).status).toBe(201)
  })

  it('refuses a key scoped to other resources, even for reads, with 403', async () => {
    const other = t.client((await t.key({ scopes: ['sessions:write', 'webhooks:read'] })).secret)
    expectError(await other.get('/v1/operators'), 403, 'insufficient_scope')
    expectError(await other.get(`/v1/operators/${operatorId}`), 403, 'insufficient_scope')
    expectError(await other.post('/v1/operators', { ident: 'S-4' }), 403, 'insufficient_scope')
  })

  it('answers 401, not 403, for a key that is both expired and out of scope', async () => {
    const key = await t.key({ scopes: ['sessions:read'], expiresAt: new Date(Date.now() - 1000) })
    expectUnauthenticated(await t.client(key.secret).get('/v1/operators'))
  })
})

describe('modes and accounts', () => {
  let t: TestApp
  let testApi: ApiClient
  let liveApi: ApiClient
  let otherApi: ApiClient
  let testOperator: Operator

  beforeAll(async () => {
    t = await buildTestApp()
    testApi = t.client((await t.key({ account: 'acme', mode: 'test' })).secret)
    liveApi = t.client((await t.key({ account: 'acme', mode: 'live' })).secret)
    otherApi = t.client((await t.key({ account: 'globex', mode: 'test' })).secret)
    const created = await testApi.post<Operator>('/v1/operators', { ident: 'W-1' })
    expect(created.status).toBe(201)
    expect(created.body.livemode).toBe(false)
    testOperator = created.body
  })
  afterAll(() => t?.close())

  it("hides a test object from the same account's live key (404)", async () => {
    expect((await testApi.get(`/v1/operators/${testOperator.id}`)).status).toBe(200)
    expectError(await liveApi.get(`/v1/operators/${testOperator.id}`), 404, 'not_found')
    expectError(await liveApi.patch(`/v1/operators/${testOperator.id}`, { name: 'X' }), 404, 'not_found')
    expectError(await liveApi.delete(`/v1/operators/${testOperator.id}`), 404, 'not_found')
    const after = await testApi.get<Operator>(`/v1/operators/${testOperator.id}`)
    expect(after.body).toMatchObject({ name: null, is_active: true })
  })

  it('allows the same ident once per mode, and gives each mode a disjoint list', async () => {
    const live = await liveApi.post<Operator>('/v1/operators', { ident: 'W-1' })
    expect(live.status).toBe(201)
    expect(live.body.livemode).toBe(true)
    expect(live.body.id).not.toBe(testOperator.id)

    expectError(await liveApi.post('/v1/operators', { ident: 'W-1' }), 409, 'conflict', 'duplicate_ident')
    expectError(await testApi.post('/v1/operators', { ident: 'W-1' }), 409, 'conflict', 'duplicate_ident')

    const testList = await testApi.get<List<Operator>>('/v1/operators')
    const liveList = await liveApi.get<List<Operator>>('/v1/operators')
    const testIds = testList.body.data.map((o) => o.id)
    const liveIds = liveList.body.data.map((o) => o.id)
    expect(testIds).toContain(testOperator.id)
    expect(liveIds).toEqual([live.body.id])
    expect(testIds.filter((id) => liveIds.includes(id))).toEqual([])
    expect(testList.body.data.every((o) => !o.livemode)).toBe(true)
    expect(liveList.body.data.every((o) => o.livemode)).toBe(true)
    expectError(await testApi.get(`/v1/operators/${live.body.id}`), 404, 'not_found')
  })

  it("shows another account nothing of the first account's objects", async () => {
    expectError(await otherApi.get(`/v1/operators/${testOperator.id}`), 404, 'not_found')
    expectError(
      await otherApi.patch(`/v1/operators/${testOperator.id}`, { name: 'Stolen' }),
      404,
      'not_found',
    )
    expectError(await otherApi.delete(`/v1/operators/${testOperator.id}`), 404, 'not_found')
    const list = await otherApi.get<List<Operator>>('/v1/operators')
    expect(list.status).toBe(200)
    expect(list.body.data).toEqual([])
    const filtered = await otherApi.get<List<Operator>>('/v1/operators?ident=W-1')
    expect(filtered.body.data).toEqual([])

    const after = await testApi.get<{ name: string | null; is_active: boolean }>(
      `/v1/operators/${testOperator.id}`,
    )
    expect(after.body).toMatchObject({ name: null, is_active: true })
  })

  it('lets another account create the same ident, still invisible to the first', async () => {
    const theirs = await otherApi.post<Operator>('/v1/operators', { ident: 'W-1' })
    expect(theirs.status).toBe(201)
    expectError(await testApi.get(`/v1/operators/${theirs.body.id}`), 404, 'not_found')
    const ours = await testApi.get<List<Operator>>('/v1/operators?ident=W-1')
    expect(ours.body.data.map((o) => o.id)).toEqual([testOperator.id])
  })
})

describe('request ids', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t?.close())

  it('puts a distinct X-Request-Id on every response, success or error', async () => {
    const api = t.client((await t.key()).secret)
    const reader = t.client((await t.key({ scopes: ['operators:read'] })).secret)
    const responses = [
      await api.post('/v1/operators', { ident: 'R-1' }),
      await api.get('/v1/operators'),
      await t.client(undefined).get('/healthz'),
      await t.client(undefined).get('/v1/operators'),
      await reader.post('/v1/operators', { ident: 'R-2' }),
      await api.get('/v1/operators/op_00000000000000000000000000'),
      await api.post('/v1/operators', {}),
      await api.request({ method: 'PUT', url: '/v1/operators' }),
    ]
    expect(responses.map((r) => r.status)).toEqual([201, 200, 200, 401, 403, 404, 422, 405])
    const ids = responses.map((r) => r.headers['x-request-id'])
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{16,}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })
})
