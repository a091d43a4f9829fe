import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_CACHE_TTL_MS } from '../../../src/http/auth.js'
import { KEY_SCOPES } from '../../../src/modules/keys/scopes.js'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type List, uniq } from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import { pairedDevice } from '../../helpers/fixtures.js'
import { type createPerson, SecretWatch } from '../../helpers/people.js'
import { created, ok } from '../../helpers/world.js'

interface ApiKey {
  object: 'api_key'
  id: string
  account_id: string
  mode: 'test' | 'live'
  livemode: boolean
  prefix: string
  scopes: string[]
  location_ids: string[] | null
  label: string | null
  expires_at: string | null
  revoked_at: string | null
  created: string
}
type CreatedApiKey = ApiKey & { secret: string }

const API_KEY_FIELDS = [
  'account_id',
  'created',
  'expires_at',
  'id',
  'label',
  'livemode',
  'location_ids',
  'mode',
  'object',
  'prefix',
  'revoked_at',
  'scopes',
]

describe('API keys from the console (/v1/api-keys)', () => {
  const clock = useTestClock()
  const watch = new SecretWatch()
  let t: TestApp

  beforeAll(async () => {
    // Every log line, at the most talkative level, is kept: no secret may be in any of them.
    t = await buildTestApp({ logLevel: 'trace' }, { logStream: watch.logStream })
  })
  afterAll(() => t.close())

  /** An owner (by default) of a fresh account, signed in; their console in `mode`. */
  async function signedIn(options: Parameters<typeof createPerson>[1] = {}) {
    const { person, browser } = await watch.signedIn(t, options)
    return { person, browser, console: (mode: 'test' | 'live' = 'test') => browser.client(null, mode) }
  }

  async function auditEntries(accountId: string) {
    return t.db
      .selectFrom('audit_log')
      .select(['type', 'actor_type', 'actor_id', 'actor_name', 'target_type', 'target_id', 'ip'])
      .where('account_id', '=', accountId)
      .where('type', 'in', ['key_created', 'key_revoked'])
      .orderBy('id')
      .execute()
  }

  const newKey = async (api: ApiClient, body: Record<string, unknown>) => {
    const key = await created(api.post<CreatedApiKey>('/v1/api-keys', body))
    watch.remember(key.secret)
    return key
  }

  it('an owner makes a key: its secret once (201), then list and retrieve never show it; the key works in its mode with its scopes', async () => {
    const { person, console: web } = await signedIn({ name: 'Olive Owner' })
    const key = await newKey(web(), { label: ' Payroll export ', mode: 'live', scopes: ['timesheets:read'] })
    expect(Object.keys(key).sort()).toEqual([...API_KEY_FIELDS, 'secret'].sort())
    expect(key).toMatchObject({
      object: 'api_key',
      account_id: person.accountId,
      mode: 'live',
      livemode: true,
      scopes: ['timesheets:read'],
      location_ids: null,
      label: 'Payroll export',
      expires_at: null,
      revoked_at: null,
    })
    expect(key.id).toMatch(/^key_/)
    expect(key.secret).toMatch(/^sk_live_/)
    expect(key.prefix).toBe(key.secret.slice(0, 12))

    const { secret, ...shown } = key
    // The person's console in test mode lists the live key too: a person manages both modes.
    const list = await ok(web().get<List<ApiKey>>('/v1/api-keys'))
    expect(list.data).toEqual([shown])
    expect(await ok(web('live').get<ApiKey>(`/v1/api-keys/${key.id}`))).toEqual(shown)
    expect(JSON.stringify(list)).not.toContain(secret)

    // The key itself: live mode, its one scope.
    const api = t.client(secret)
    expect((await ok(api.get<{ livemode: boolean }>('/v1/account'))).livemode).toBe(true)
    expect((await api.get('/v1/timesheets?from=2026-03-01&to=2026-03-02')).status).toBe(200)
    expectError(await api.get('/v1/operators'), 403, 'insufficient_scope', 'missing_scope')

    expect(await auditEntries(person.accountId)).toEqual([
      {
        type: 'key_created',
        actor_type: 'user',
        actor_id: person.userId,
        actor_name: 'Olive Owner',
        target_type: 'api_key',
        target_id: key.id,
        ip: expect.any(String),
      },
    ])
    const stored = await t.db
      .selectFrom('audit_log')
      .selectAll()
      .where('target_id', '=', key.id)
      .executeTakeFirstOrThrow()
    expect(JSON.stringify(stored)).not.toContain(secret)
  })

  it('without scopes a key holds every scope a key may hold (never users:* or keys:*)', async () => {
    const { console: web } = await signedIn()
    const key = await newKey(web(), { label: 'Everything', mode: 'test' })
    expect(key.scopes.sort()).toEqual([...KEY_SCOPES].sort())
    expect(key.scopes.some((scope) => scope.startsWith('users:') || scope.startsWith('keys:'))).toBe(false)
    // And it cannot make a key itself.
    expectError(
      await t.client(key.secret).post('/v1/api-keys', { label: 'Mine', mode: 'live' }),
      403,
      'insufficient_scope',
      'missing_scope',
    )
  })

  it('refuses a people-only scope, an empty or unknown site list, a past expiry and a blank label (422); nothing is made', async () => {
    const { person, console: web } = await signedIn()
    const api = web()
    const live = await created(
      t
        .client((await t.key({ account: person.account, mode: 'live' })).secret)
        .post<{ id: string }>('/v1/locations', { name: 'Live site', timezone: 'UTC' }),
    )
    for (const scopes of [['users:read'], ['operators:read', 'keys:write'], ['users:write']]) {
      expectError(
        await api.post('/v1/api-keys', { label: 'K', mode: 'test', scopes }),
        422,
        'validation_error',
        'invalid_value',
        'scopes',
      )
    }
    expectError(
      await api.post('/v1/api-keys', { label: 'K', mode: 'test', location_ids: [] }),
      422,
      'validation_error',
      'invalid_value',
      'location_ids',
    )
    expectError(
      await api.post('/v1/api-keys', { label: 'K', mode: 'test', location_ids: ['loc_nothing'] }),
      422,
      'validation_error',
      'unknown_location',
      'location_ids',
    )
    // A live location does not hold a test key: the key's mode has no such location.
    expectError(
      await api.post('/v1/api-keys', { label: 'K', mode: 'test', location_ids: [live.id] }),
      422,
      'validation_error',
      'unknown_location',
      'location_ids',
    )
    expectError(
      await api.post('/v1/api-keys', {
        label: 'K',
        mode: 'test',
        expires_at: new Date(clock.now() - 1000).toISOString(),
      }),
      422,
      'validation_error',
      'invalid_value',
      'expires_at',
    )
    expectError(
      await api.post('/v1/api-keys', { label: 'K', mode: 'test', expires_at: 'tomorrow' }),
      422,
      'validation_error',
      'invalid_timestamp',
      'expires_at',
    )
    expectError(
      await api.post('/v1/api-keys', { label: '   ', mode: 'test' }),
      422,
      'validation_error',
      'invalid_value',
      'label',
    )
    // Only the key the test made for its location (through the CLI's service: no label) is there.
    expect((await ok(api.get<List<ApiKey>>('/v1/api-keys'))).data.map((k) => k.label)).toEqual([null])
    expect(await auditEntries(person.accountId)).toEqual([])
  })

  it('a key held to locations is held to them: an account-wide route answers 403 location_restricted', async () => {
    const { person, console: web } = await signedIn()
    const root = t.client((await t.key({ account: person.account, mode: 'test' })).secret)
    const site = await created(root.post<{ id: string }>('/v1/locations', { name: 'North', timezone: 'UTC' }))
    const key = await newKey(web(), { label: 'North kiosk', mode: 'test', location_ids: [site.id, site.id] })
    expect(key.location_ids).toEqual([site.id])
    expect((await ok(web().get<ApiKey>(`/v1/api-keys/${key.id}`))).location_ids).toEqual([site.id])
    const api = t.client(key.secret)
    expectError(await api.get('/v1/webhook-endpoints'), 403, 'insufficient_scope', 'location_restricted')
    expectError(
      await api.post('/v1/pay-periods', { start_date: '2026-03-01', end_date: '2026-03-31' }),
      403,
      'insufficient_scope',
      'location_restricted',
    )
    // The same account's unrestricted key is not.
    expect((await root.get('/v1/webhook-endpoints')).status).toBe(200)
  })

  it('expires_at in the future: the key works until then and is refused after', async () => {
    const { console: web } = await signedIn()
    const at = new Date(clock.now() + 60 * 60_000)
    const key = await newKey(web(), { label: 'An hour', mode: 'test', expires_at: at.toISOString() })
    expect(key.expires_at).toBe(at.toISOString())
    expect((await t.client(key.secret).get('/v1/account')).status).toBe(200)
    clock.advance(60 * 60_000)
    expectError(await t.client(key.secret).get('/v1/account'), 401, 'authentication_error')
  })

  it('revoke: refused by the service within 5 s (the key cache), once audited; revoking again changes nothing', async () => {
    const { person, console: web } = await signedIn({ name: 'Rex Revoker' })
    const key = await newKey(web(), { label: 'Short-lived', mode: 'test' })
    const api = t.client(key.secret)
    expect((await api.get('/v1/account')).status).toBe(200)

    const revoked = await ok(web().post<ApiKey>(`/v1/api-keys/${key.id}/revoke`))
    expect(revoked).toMatchObject({ id: key.id, revoked_at: new Date(clock.now()).toISOString() })
    // The cache may still hold the key for up to its TTL (from the lookup, at this same instant);
    // past it, every request is refused.
    clock.advance(KEY_CACHE_TTL_MS + 1)
    expectError(await api.get('/v1/account'), 401, 'authentication_error')

    clock.advance(1000)
    expect(await ok(web().post<ApiKey>(`/v1/api-keys/${key.id}/revoke`))).toEqual(revoked)
    expect(await ok(web().get<ApiKey>(`/v1/api-keys/${key.id}`))).toEqual(revoked)
    expect(
      (await auditEntries(person.accountId)).map((e) => [e.type, e.actor_id, e.actor_name, e.target_id]),
    ).toEqual([
      ['key_created', person.userId, 'Rex Revoker', key.id],
      ['key_revoked', person.userId, 'Rex Revoker', key.id],
    ])
  })

  it("another account's key, a device's key and an unknown id answer 404", async () => {
    const { console: web } = await signedIn()
    const other = await signedIn()
    const theirs = await newKey(other.console(), { label: 'Theirs', mode: 'test' })
    const mine = await signedIn()
    const device = await pairedDevice(t, t.client((await t.key({ account: mine.person.account })).secret))
    const deviceKeyId = (
      await t.db
        .selectFrom('api_keys')
        .select('id')
        .where('device_id', '=', device.device.id)
        .executeTakeFirstOrThrow()
    ).id
    for (const id of [theirs.id, 'key_nothing']) {
      expectError(await web().get(`/v1/api-keys/${id}`), 404, 'not_found')
      expectError(await web().post(`/v1/api-keys/${id}/revoke`), 404, 'not_found')
    }
    // A paired device's key is its device's: not listed, not retrieved, not revoked here.
    expectError(await mine.console().get(`/v1/api-keys/${deviceKeyId}`), 404, 'not_found')
    expectError(await mine.console().post(`/v1/api-keys/${deviceKeyId}/revoke`), 404, 'not_found')
    expect((await ok(mine.console().get<List<ApiKey>>('/v1/api-keys'))).data.map((k) => k.id)).not.toContain(
      deviceKeyId,
    )
    // The other account's key was never touched.
    expect((await ok(other.console().get<ApiKey>(`/v1/api-keys/${theirs.id}`))).revoked_at).toBeNull()
  })

  it('lists newest first in pages, both modes, revoked ones too', async () => {
    const { console: web } = await signedIn()
    const made: ApiKey[] = []
    for (const mode of ['test', 'live', 'test'] as const)
      made.push(await newKey(web(), { label: uniq('k'), mode }))
    await ok(web().post(`/v1/api-keys/${made[0]?.id}/revoke`))
    const first = await ok(web().get<List<ApiKey>>('/v1/api-keys?limit=2'))
    expect(first.data.map((k) => k.id)).toEqual([made[2]?.id, made[1]?.id])
    expect(first.has_more).toBe(true)
    const second = await ok(
      web().get<List<ApiKey>>(`/v1/api-keys?limit=2&cursor=${encodeURIComponent(first.next_cursor ?? '')}`),
    )
    expect(second.data.map((k) => [k.id, k.revoked_at !== null])).toEqual([[made[0]?.id, true]])
    expect(second.has_more).toBe(false)
  })

  it('an Idempotency-Key replays the create (the same key, its secret null: never stored) and makes one key', async () => {
    const { person, console: web } = await signedIn()
    const headers = { 'idempotency-key': uniq('idem') }
    const body = { label: 'Once', mode: 'test' }
    const first = await web().post<CreatedApiKey>('/v1/api-keys', body, headers)
    const again = await web().post<CreatedApiKey>('/v1/api-keys', body, headers)
    expect(first.status).toBe(201)
    expect(first.body.secret).toMatch(/^sk_test_/)
    expect(again.status).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body).toEqual({ ...first.body, secret: null })
    const stored = await t.db.selectFrom('idempotency_keys').select('response_body').execute()
    expect(stored.some((row) => row.response_body?.includes(first.body.secret ?? 'none'))).toBe(false)
    watch.remember(first.body.secret ?? '')
    expect((await ok(web().get<List<ApiKey>>('/v1/api-keys'))).data).toHaveLength(1)
    expect(await auditEntries(person.accountId)).toHaveLength(1)
  })

  it('only owners: an admin, a person held to sites and every API key are refused (403)', async () => {
    const owner = await signedIn()
    const key = await newKey(owner.console(), { label: 'Target', mode: 'test' })
    const admin = await signedIn({ account: owner.person.account, role: 'admin' })
    const root = t.client((await t.key({ account: owner.person.account, mode: 'test' })).secret)
    const site = await created(root.post<{ id: string }>('/v1/locations', { name: 'South', timezone: 'UTC' }))
    const heldOwner = await signedIn({ account: owner.person.account, role: 'owner', locationIds: [site.id] })
    const requests = (api: ApiClient) => [
      api.post('/v1/api-keys', { label: 'K', mode: 'test' }),
      api.get('/v1/api-keys'),
      api.get(`/v1/api-keys/${key.id}`),
      api.post(`/v1/api-keys/${key.id}/revoke`),
    ]
    for (const res of await Promise.all(requests(admin.console())))
      expectError(res, 403, 'insufficient_scope', 'missing_scope')
    for (const res of await Promise.all(requests(heldOwner.console())))
      expectError(res, 403, 'insufficient_scope', 'location_restricted')
    // No key holds keys:* (the fullest one a key may have, and the one made here).
    for (const api of [root, t.client(key.secret)])
      for (const res of await Promise.all(requests(api)))
        expectError(res, 403, 'insufficient_scope', 'missing_scope')
    // A signed-in change without the CSRF token changes nothing.
    const noCsrf = { 'x-csrf-token': '' }
    expectError(
      await owner.console().post('/v1/api-keys', { label: 'K', mode: 'test' }, noCsrf),
      403,
      'insufficient_scope',
      'csrf_token_invalid',
    )
    expect((await ok(owner.console().get<ApiKey>(`/v1/api-keys/${key.id}`))).revoked_at).toBeNull()
    expect((await ok(owner.console().get<List<ApiKey>>('/v1/api-keys'))).data.map((k) => k.label)).toEqual([
      null,
      'Target',
    ])
  })

  it('no secret, password or session token was ever written to the log', () => {
    expect(watch.size).toBeGreaterThan(10)
    expect(watch.leaked()).toEqual([])
  })
})
