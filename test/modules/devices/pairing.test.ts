import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_CACHE_TTL_MS } from '../../../src/http/auth.js'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import { type Device, expectError, ISO_MS, type Location, uniq } from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import { eventsOf, freshAccount, pairedDevice, pairFrom } from '../../helpers/fixtures.js'

const CODE_SHAPE = /^[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}$/
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

interface PairingCode {
  object: string
  code: string
  device_id: string
  expires_at: string
  livemode: boolean
}
interface Pairing {
  object: string
  device: Device
  key: { id: string; secret: string; livemode: boolean }
}

describe('pairing devices and their keys', () => {
  const clock = useTestClock()
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  async function device(api: ApiClient, body: Record<string, unknown> = {}): Promise<Device> {
    const res = await api.post<Device>('/v1/devices', { code: uniq('gate'), ...body })
    expect(res.status).toBe(201)
    return res.body
  }

  async function pairingCode(api: ApiClient, deviceId: string): Promise<PairingCode> {
    const res = await api.post<PairingCode>(`/v1/devices/${deviceId}/pairing-codes`)
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body
  }

  /**
   * A revoked key is refused once the key cache's TTL has passed since its last lookup, which was
   * at this instant (the clock stands still); until then the cached key may still be served.
   */
  async function refusedOnceCacheTtlPassed(api: ApiClient) {
    expect([200, 401]).toContain((await api.get('/v1/devices/current')).status)
    clock.advance(KEY_CACHE_TTL_MS + 1)
    expectError(await api.get('/v1/devices/current'), 401, 'authentication_error')
  }

  it('makes a single-use code, valid 10 minutes, stored only as its hash', async () => {
    const { api, key } = await freshAccount(t)
    const gate = await device(api)
    const code = await pairingCode(api, gate.id)
    expect(Object.keys(code).sort()).toEqual(['code', 'device_id', 'expires_at', 'livemode', 'object'])
    expect(code).toMatchObject({ object: 'device_pairing_code', device_id: gate.code, livemode: false })
    expect(code.code).toMatch(CODE_SHAPE)
    expect(code.expires_at).toMatch(ISO_MS)
    expect(Date.parse(code.expires_at)).toBe(clock.now() + 10 * 60_000)
    const rows = await t.db
      .selectFrom('device_pairing_codes')
      .selectAll()
      .where('device_id', '=', gate.id)
      .execute()
    expect(rows).toHaveLength(1)
    expect(rows[0]?.code_hash).toBe(sha256(code.code.replace('-', '')))
    expect(JSON.stringify(rows)).not.toContain(code.code.replace('-', ''))
    expect(rows[0]?.account_id).toBe(key.account_id)
  })

  it('pairs with the code (no key), answers the key once, stores its hash, emits device.updated', async () => {
    const { api, key } = await freshAccount(t)
    const gate = await device(api)
    const code = await pairingCode(api, gate.id)
    // Typed back in lower case without the dash: the same code.
    const res = await pairFrom<Pairing>(t, code.code.replace('-', '').toLowerCase())
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(Object.keys(res.body).sort()).toEqual(['device', 'key', 'object'])
    expect(res.body.object).toBe('device_pairing')
    expect(res.body.device).toMatchObject({
      id: gate.id,
      paired: true,
      last_seen_at: null,
      require_pin: false,
    })
    expect(res.body.key.secret).toMatch(/^dk_test_[A-Za-z0-9_-]{32}$/)
    expect(res.body.key).toMatchObject({ livemode: false })
    const stored = await t.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', res.body.key.id)
      .executeTakeFirst()
    expect(stored).toMatchObject({ device_id: gate.id, secret_hash: sha256(res.body.key.secret), scopes: '' })
    expect(JSON.stringify(stored)).not.toContain(res.body.key.secret)

    const events = (await eventsOf(t, key.account_id)).filter((e) => e.type === 'device.updated')
    expect(events).toHaveLength(1)
    expect(events[0]?.data.object).toEqual(res.body.device)
    expect(events[0]?.data.previous_attributes).toMatchObject({ paired: false })

    // Single use: the same code again is refused, as an unknown one is.
    const again = await pairFrom(t, code.code)
    expectError(again, 422, 'validation_error', 'invalid_pairing_code', 'code')
    const unknown = await pairFrom(t, 'ABCD-EFGH')
    expect(unknown.body).toMatchObject({
      error: { ...(again.body as { error: object }).error, request_id: expect.any(String) },
    })
    expect((unknown.body as { error: { message: string } }).error.message).toBe(
      (again.body as { error: { message: string } }).error.message,
    )
    expectError(await pairFrom(t, '0O1I-0O1I'), 422, 'validation_error', 'invalid_pairing_code')
  })

  it('refuses an expired code with the same answer, and a new code voids the earlier unused one', async () => {
    const { api } = await freshAccount(t)
    const gate = await device(api)
    const expired = await pairingCode(api, gate.id)
    clock.advance(10 * 60_000)
    expectError(await pairFrom(t, expired.code), 422, 'validation_error', 'invalid_pairing_code')
    const first = await pairingCode(api, gate.id)
    const second = await pairingCode(api, gate.id)
    expectError(await pairFrom(t, first.code), 422, 'validation_error', 'invalid_pairing_code')
    expect((await pairFrom(t, second.code)).status).toBe(201)
  })

  it('pairing again revokes the previous key (refused within the key cache TTL)', async () => {
    const { api } = await freshAccount(t)
    const first = await pairedDevice(t, api)
    expect((await first.api.get('/v1/devices/current')).status).toBe(200)
    const code = await pairingCode(api, first.device.id)
    const second = await pairFrom<Pairing>(t, code.code)
    expect(second.status).toBe(201)
    expect(second.body.key.secret).not.toBe(first.secret)
    await refusedOnceCacheTtlPassed(first.api)
    expect((await t.client(second.body.key.secret).get('/v1/devices/current')).status).toBe(200)
  })

  it('a device key reads its device, location, the clock and the PIN key, and nothing else', async () => {
    const { api } = await freshAccount(t)
    const site = await api.post<Location>('/v1/locations', { name: 'Plant A', timezone: 'Europe/Berlin' })
    const gate = await pairedDevice(t, api, { location_id: site.body.id })
    const res = await gate.api.get<Record<string, unknown>>('/v1/devices/current')
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual([
      'device',
      'location',
      'object',
      'pin_key',
      'require_pin',
      'server_time',
    ])
    expect(res.body).toMatchObject({
      object: 'current_device',
      device: { id: gate.device.id, paired: true },
      location: site.body,
      require_pin: false,
      pin_key: { kty: 'RSA', alg: 'RSA-OAEP-256', use: 'enc', e: 'AQAB' },
    })
    expect(res.body.server_time).toBe(new Date(clock.now()).toISOString())
    expect(JSON.stringify(res.body.pin_key)).not.toMatch(/"(d|p|q|dp|dq|qi)"/)

    expectError(await gate.api.get('/v1/operators'), 403, 'insufficient_scope', 'missing_scope')
    expectError(await gate.api.get(`/v1/devices/${gate.device.id}`), 403, 'insufficient_scope')
    expectError(await gate.api.post('/v1/operators', { ident: 'x' }), 403, 'insufficient_scope')
    // An API key has no current device.
    expectError(await api.get('/v1/devices/current'), 403, 'insufficient_scope', 'missing_scope')
    // A device without a location says so.
    const bare = await pairedDevice(t, api)
    expect((await bare.api.get('/v1/devices/current')).body).toMatchObject({ location: null })
  })

  it('scans only at its own device: another code is 403 device_mismatch, known or not', async () => {
    const { api } = await freshAccount(t)
    const gate = await pairedDevice(t, api)
    const other = await device(api)
    const op = await api.post<{ id: string }>('/v1/operators', { ident: uniq('op') })
    for (const code of [other.code, 'no-such-device']) {
      expectError(
        await gate.api.post('/v1/scans', { device_id: code, operator_id: op.body.id }),
        403,
        'insufficient_scope',
        'device_mismatch',
        'device_id',
      )
    }
    const own = await gate.api.post('/v1/scans', { device_id: gate.device.code, operator_id: op.body.id })
    expect(own.status).toBe(201)
    expect(own.body).toMatchObject({ result: 'checked_in', device_id: gate.device.code })
    // The session's history names the device key that scanned.
    const revisions = await t.db.selectFrom('session_revisions').select('key_id').execute()
    expect(revisions.map((r) => r.key_id)).toContain(gate.keyId)
  })

  it('records last_seen_at at the first request, then at most once a minute', async () => {
    const { api } = await freshAccount(t)
    const gate = await pairedDevice(t, api)
    const seen = async () =>
      (
        await t.db
          .selectFrom('devices')
          .select('last_seen_at')
          .where('id', '=', gate.device.id)
          .executeTakeFirst()
      )?.last_seen_at
    expect(await seen()).toBeNull()
    await gate.api.get('/v1/devices/current')
    const first = Number(await seen())
    expect(first).toBe(clock.now())
    await gate.api.get('/v1/devices/current')
    expect(Number(await seen())).toBe(first)
    // Another process (or a minute later): the stored time decides.
    await t.db
      .updateTable('devices')
      .set({ last_seen_at: first - 61_000 })
      .where('id', '=', gate.device.id)
      .execute()
    await gate.api.get('/v1/devices/current')
    expect(Number(await seen())).toBe(first - 61_000)
    const device = await api.get<Device>(`/v1/devices/${gate.device.id}`)
    expect(device.body.last_seen_at).toBe(new Date(first - 61_000).toISOString())
  })

  it('unpairs: the key is refused within the cache TTL, paired false, device.updated', async () => {
    const { api, key } = await freshAccount(t)
    const gate = await pairedDevice(t, api)
    expect((await gate.api.get('/v1/devices/current')).status).toBe(200)
    const res = await api.post<Device>(`/v1/devices/${gate.device.id}/unpair`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: gate.device.id, paired: false })
    await refusedOnceCacheTtlPassed(gate.api)
    const updates = (await eventsOf(t, key.account_id)).filter((e) => e.type === 'device.updated')
    expect(updates.map((e) => e.data.previous_attributes)).toEqual([
      expect.objectContaining({ paired: false }),
      expect.objectContaining({ paired: true }),
    ])
    // Unpairing an unpaired device changes nothing and emits nothing.
    expect((await api.post(`/v1/devices/${gate.device.id}/unpair`)).status).toBe(200)
    expect((await eventsOf(t, key.account_id)).filter((e) => e.type === 'device.updated')).toHaveLength(2)
  })

  it('sets require_pin by PATCH, with device.updated', async () => {
    const { api, key } = await freshAccount(t)
    const gate = await device(api)
    const res = await api.patch<Device>(`/v1/devices/${gate.id}`, { require_pin: true })
    expect(res.status).toBe(200)
    expect(res.body.require_pin).toBe(true)
    const events = (await eventsOf(t, key.account_id)).filter((e) => e.type === 'device.updated')
    expect(events.map((e) => e.data.previous_attributes)).toEqual([
      expect.objectContaining({ require_pin: false }),
    ])
  })

  it('deleting a device revokes its key', async () => {
    const { api } = await freshAccount(t)
    const gate = await pairedDevice(t, api)
    expect((await api.delete(`/v1/devices/${gate.device.id}`)).status).toBe(200)
    const keys = await t.db.selectFrom('api_keys').select('revoked_at').where('id', '=', gate.keyId).execute()
    expect(keys[0]?.revoked_at).not.toBeNull()
  })
})

describe('the pairing rate limit', () => {
  const clock = useTestClock()
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it('refuses an eleventh pairing from one address within a minute, with Retry-After', async () => {
    const tablet = '192.0.2.7'
    for (let i = 0; i < 10; i++) {
      expectError(await pairFrom(t, 'ABCD-EFGH', tablet), 422, 'validation_error', 'invalid_pairing_code')
    }
    const limited = await pairFrom(t, 'ABCD-EFGH', tablet)
    expectError(limited, 429, 'rate_limited', 'rate_limited')
    // The count is a minute's: all of it is left while the clock stands still.
    expect(limited.headers['retry-after']).toBe('60')
    // Another address is not limited by this one's attempts.
    expectError(await pairFrom(t, 'ABCD-EFGH', '192.0.2.8'), 422, 'validation_error', 'invalid_pairing_code')
    // The minute over, and not before, the address may try again.
    clock.advance(60_000 - 1)
    expectError(await pairFrom(t, 'ABCD-EFGH', tablet), 429, 'rate_limited', 'rate_limited')
    clock.advance(1)
    expectError(await pairFrom(t, 'ABCD-EFGH', tablet), 422, 'validation_error', 'invalid_pairing_code')
  })
})
