import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_RETENTION_MS,
  purgeExpiredIdempotencyKeys,
  requestFingerprint,
} from '../../src/http/idempotency.js'
import { buildTestApp, errorOf, type TestApp } from '../helpers/app.js'
import { expectError, type Operator, uniq, waitUntil } from '../helpers/assertions.js'
import { useTestClock } from '../helpers/clock.js'
import { eventTypes, freshAccount } from '../helpers/fixtures.js'

const HOUR = 60 * 60 * 1000

describe('idempotency of POST creates', () => {
  const clock = useTestClock()
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  const keyed = (key: string) => ({ 'idempotency-key': key })

  async function operatorRows(accountId: string) {
    return t.db
      .selectFrom('operators')
      .select(['id', 'ident', 'livemode'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute()
  }

  /** The stored rows of a client's key sent with `owner`'s API key (stored as `<principal id>:<key>`). */
  async function storedKey(owner: { account_id: string; id: string }, key: string) {
    return t.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('account_id', '=', owner.account_id)
      .where('key', '=', `${owner.id}:${key}`)
      .execute()
  }

  it('replays the same key and body: same status and body, Idempotent-Replayed, no second object or event', async () => {
    const { key, api } = await freshAccount(t)
    const k = uniq('key')
    const body = { ident: uniq('W'), name: 'Ada', employee_id: 'E-1' }
    const first = await api.post<Operator>('/v1/operators', body, keyed(k))
    expect(first.status).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()

    for (let i = 0; i < 2; i++) {
      const again = await api.post<Operator>('/v1/operators', body, keyed(k))
      expect(again.status).toBe(201)
      expect(again.body).toEqual(first.body)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id'])
    }
    expect(await operatorRows(key.account_id)).toEqual([
      { id: first.body.id, ident: body.ident, livemode: 0 },
    ])
    expect(await eventTypes(t, key.account_id)).toEqual(['operator.created'])
    const stored = await storedKey(key, k)
    expect(stored).toHaveLength(1)
    expect(stored[0]).toMatchObject({ status: 'done', response_status: 201 })
  })

  it('ignores key order in the JSON body', async () => {
    const { key, api } = await freshAccount(t)
    const k = uniq('key')
    const ident = uniq('W')
    const first = await api.post<Operator>('/v1/operators', { ident, name: 'N', employee_id: 'E' }, keyed(k))
    expect(first.status).toBe(201)
    const again = await api.request<Operator>({
      method: 'POST',
      url: '/v1/operators',
      headers: { ...keyed(k), 'content-type': 'application/json' },
      payload: `{"employee_id":"E",  "name":"N","ident":${JSON.stringify(ident)}}`,
    })
    expect(again.status).toBe(201)
    expect(again.body).toEqual(first.body)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(await operatorRows(key.account_id)).toHaveLength(1)
  })

  it('refuses the same key with a different body: 409 conflict idempotency_key_reuse, nothing created', async () => {
    const { key, api } = await freshAccount(t)
    const k = uniq('key')
    const ident = uniq('W')
    const first = await api.post<Operator>('/v1/operators', { ident, name: 'A' }, keyed(k))
    expect(first.status).toBe(201)
    const variants = [{ ident, name: 'B' }, { ident: uniq('W') }, { ident, name: 'A', employee_id: null }]
    for (const body of variants) {
      const res = await api.post('/v1/operators', body, keyed(k))
      expectError(res, 409, 'conflict', 'idempotency_key_reuse')
    }
    expect(await operatorRows(key.account_id)).toEqual([{ id: first.body.id, ident, livemode: 0 }])
    expect(await eventTypes(t, key.account_id)).toEqual(['operator.created'])
    // The original response is still the one replayed.
    const again = await api.post('/v1/operators', { ident, name: 'A' }, keyed(k))
    expect(again.status).toBe(201)
    expect(again.body).toEqual(first.body)
  })

  it('binds the key to the method and path: a key stored for another path is reuse', async () => {
    const { key, api } = await freshAccount(t)
    const body = { ident: uniq('W') }
    for (const [method, path] of [
      ['POST', '/v1/sessions'],
      ['POST', '/v1/devices'],
      ['PUT', '/v1/operators'],
    ] as const) {
      const k = uniq('key')
      const now = clock.now()
      await t.db
        .insertInto('idempotency_keys')
        .values({
          account_id: key.account_id,
          livemode: 0,
          key: `${key.id}:${k}`,
          fingerprint: requestFingerprint(method, path, body),
          status: 'done',
          response_status: 201,
          response_body: JSON.stringify({ object: 'session', id: 'ses_staged' }),
          created_at: now,
          locked_at: now,
        })
        .execute()
      expectError(await api.post('/v1/operators', body, keyed(k)), 409, 'conflict', 'idempotency_key_reuse')
    }
    expect(await operatorRows(key.account_id)).toEqual([])
  })

  it('refuses a key used on another create route: 409 idempotency_key_reuse, nothing created', async () => {
    const { api } = await freshAccount(t)
    const k1 = uniq('key')
    expect((await api.post('/v1/operators', { ident: uniq('W'), name: 'Depot' }, keyed(k1))).status).toBe(201)
    expectError(
      await api.post('/v1/locations', { name: 'Depot' }, keyed(k1)),
      409,
      'conflict',
      'idempotency_key_reuse',
    )
    const k2 = uniq('key')
    expect((await api.post('/v1/locations', { name: 'Depot' }, keyed(k2))).status).toBe(201)
    expectError(
      await api.post('/v1/operators', { ident: uniq('W') }, keyed(k2)),
      409,
      'conflict',
      'idempotency_key_reuse',
    )
    const locations = await api.get<{ data: unknown[] }>('/v1/locations')
    expect(locations.body.data).toHaveLength(1)
    expect((await api.get<{ data: unknown[] }>('/v1/operators')).body.data).toHaveLength(1)
  })

  it('scopes keys per account and per mode', async () => {
    const a = await freshAccount(t)
    const b = await freshAccount(t)
    const aLiveKey = await t.key({ account: a.name, mode: 'live' })
    const aLive = t.client(aLiveKey.secret)
    const k = uniq('shared-key')
    const body = { ident: uniq('W') }

    const one = await a.api.post<Operator>('/v1/operators', body, keyed(k))
    const two = await b.api.post<Operator>('/v1/operators', body, keyed(k))
    const three = await aLive.post<Operator>('/v1/operators', body, keyed(k))
    for (const res of [one, two, three]) {
      expect(res.status).toBe(201)
      expect(res.headers['idempotent-replayed']).toBeUndefined()
    }
    expect(new Set([one.body.id, two.body.id, three.body.id]).size).toBe(3)
    expect(one.body.livemode).toBe(false)
    expect(three.body.livemode).toBe(true)
    expect(await operatorRows(a.key.account_id)).toHaveLength(2)
    expect(await operatorRows(b.key.account_id)).toHaveLength(1)

    // And each replays its own response.
    expect((await aLive.post('/v1/operators', body, keyed(k))).body).toEqual(three.body)
    expect((await b.api.post('/v1/operators', body, keyed(k))).body).toEqual(two.body)
    expect((await a.api.post('/v1/operators', body, keyed(k))).body).toEqual(one.body)
  })

  it('replays the original 201 of a create even though its ident now exists (not 409 duplicate_ident)', async () => {
    const { key, api } = await freshAccount(t)
    const k = uniq('key')
    const body = { ident: uniq('W') }
    const first = await api.post<Operator>('/v1/operators', body, keyed(k))
    expect(first.status).toBe(201)
    // Without the key the same body is a duplicate...
    expectError(await api.post('/v1/operators', body), 409, 'conflict', 'duplicate_ident', 'ident')
    // ...with it, it is a replay of the original.
    const again = await api.post<Operator>('/v1/operators', body, keyed(k))
    expect(again.status).toBe(201)
    expect(again.body).toEqual(first.body)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(await operatorRows(key.account_id)).toHaveLength(1)
    expect(await eventTypes(t, key.account_id)).toEqual(['operator.created'])
  })

  it('stores a keyed 409 duplicate_ident and replays it with the current request id', async () => {
    const { key, api } = await freshAccount(t)
    const ident = uniq('W')
    expect((await api.post('/v1/operators', { ident })).status).toBe(201)
    const k = uniq('key')
    const first = await api.post('/v1/operators', { ident, name: 'second' }, keyed(k))
    expectError(first, 409, 'conflict', 'duplicate_ident', 'ident')
    const stored = await storedKey(key, k)
    expect(stored).toHaveLength(1)
    expect(stored[0]).toMatchObject({ status: 'done', response_status: 409 })

    const again = await api.post('/v1/operators', { ident, name: 'second' }, keyed(k))
    expectError(again, 409, 'conflict', 'duplicate_ident', 'ident')
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(errorOf(again).request_id).not.toBe(errorOf(first).request_id)
    const { request_id: _a, ...firstRest } = errorOf(first)
    const { request_id: _b, ...againRest } = errorOf(again)
    expect(againRest).toEqual(firstRest)
    expect(await operatorRows(key.account_id)).toHaveLength(1)
    expect(await eventTypes(t, key.account_id)).toEqual(['operator.created'])
  })

  it('does not store a keyed create that failed schema validation: a corrected retry succeeds', async () => {
    const { key, api } = await freshAccount(t)
    const k = uniq('key')
    const bad = await api.post('/v1/operators', { name: 'no ident' }, keyed(k))
    expectError(bad, 422, 'validation_error', 'missing_param', 'ident')
    expect(await storedKey(key, k)).toEqual([])
    const wrongType = await api.post('/v1/operators', { ident: 42 }, keyed(k))
    expectError(wrongType, 422, 'validation_error', 'invalid_type', 'ident')
    expect(await storedKey(key, k)).toEqual([])

    const good = await api.post<Operator>('/v1/operators', { ident: uniq('W'), name: 'no ident' }, keyed(k))
    expect(good.status).toBe(201)
    expect(good.headers['idempotent-replayed']).toBeUndefined()
    expect(await operatorRows(key.account_id)).toHaveLength(1)
  })

  it('does not store requests refused for authentication or scope', async () => {
    const { key, name } = await freshAccount(t)
    const readOnly = await t.key({ account: name, scopes: ['operators:read'] })
    const k = uniq('key')
    const body = { ident: uniq('W') }
    expectError(
      await t.client(readOnly.secret).post('/v1/operators', body, keyed(k)),
      403,
      'insufficient_scope',
    )
    expectError(
      await t.client('sk_test_notarealkeynotarealkey').post('/v1/operators', body, keyed(k)),
      401,
      'authentication_error',
    )
    expect(await storedKey(key, k)).toEqual([])
    const res = await t.client(key.secret).post('/v1/operators', body, keyed(k))
    expect(res.status).toBe(201)
  })

  it('gives 10 concurrent requests with one key and body exactly one object, never a 500', async () => {
    const { key, api } = await freshAccount(t)
    const k = uniq('key')
    const body = { ident: uniq('RACE'), name: 'racer' }
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => api.post<Operator>('/v1/operators', body, keyed(k))),
    )
    const rows = await operatorRows(key.account_id)
    expect(rows).toHaveLength(1)
    const id = rows[0]?.id
    let created = 0
    for (const res of responses) {
      expect(res.status).toBeLessThan(500)
      if (res.status === 201) {
        expect(res.body.id).toBe(id)
        if (res.headers['idempotent-replayed'] === undefined) created++
        else expect(res.headers['idempotent-replayed']).toBe('true')
      } else {
        expectError(res, 409, 'conflict', 'idempotency_key_in_use')
      }
    }
    expect(created).toBe(1)
    expect(await eventTypes(t, key.account_id)).toEqual(['operator.created'])
    // Once settled, the key replays.
    const after = await api.post<Operator>('/v1/operators', body, keyed(k))
    expect(after.status).toBe(201)
    expect(after.body.id).toBe(id)
  })

  it('refuses an Idempotency-Key longer than 255 characters (422, param Idempotency-Key); 255 is fine', async () => {
    const { key, api } = await freshAccount(t)
    const long = 'k'.repeat(256)
    const res = await api.post('/v1/operators', { ident: uniq('W') }, keyed(long))
    expectError(res, 422, 'validation_error', undefined, 'Idempotency-Key')
    expect(await operatorRows(key.account_id)).toEqual([])
    expect(await storedKey(key, long)).toEqual([])

    const max = `${uniq('k')}${'x'.repeat(255)}`.slice(0, 255)
    const ok = await api.post<Operator>('/v1/operators', { ident: uniq('W') }, keyed(max))
    expect(ok.status).toBe(201)
    expect(await storedKey(key, max)).toHaveLength(1)
  })

  describe('claims staged in the idempotency_keys table', () => {
    async function stage(
      owner: { account_id: string; id: string },
      k: string,
      body: unknown,
      fields: {
        status: 'in_flight' | 'done'
        created_at: number
        locked_at: number
        response?: [number, unknown]
      },
    ) {
      await t.db
        .insertInto('idempotency_keys')
        .values({
          account_id: owner.account_id,
          livemode: 0,
          key: `${owner.id}:${k}`,
          fingerprint: requestFingerprint('POST', '/v1/operators', body),
          status: fields.status,
          response_status: fields.response?.[0] ?? null,
          response_body: fields.response ? JSON.stringify(fields.response[1]) : null,
          created_at: fields.created_at,
          locked_at: fields.locked_at,
        })
        .execute()
    }

    it('answers 409 idempotency_key_in_use while the same request is in flight, and creates nothing', async () => {
      const { key, api } = await freshAccount(t)
      const k = uniq('key')
      const body = { ident: uniq('W') }
      const now = clock.now()
      await stage(key, k, body, { status: 'in_flight', created_at: now, locked_at: now })

      const res = await api.post('/v1/operators', body, keyed(k))
      expectError(res, 409, 'conflict', 'idempotency_key_in_use')
      // A different body with the key is still reuse, in flight or not.
      expectError(
        await api.post('/v1/operators', { ident: uniq('W') }, keyed(k)),
        409,
        'conflict',
        'idempotency_key_reuse',
      )
      expect(await operatorRows(key.account_id)).toEqual([])
      expect(await eventTypes(t, key.account_id)).toEqual([])
      // The claim of the other request is left alone.
      expect(await storedKey(key, k)).toMatchObject([{ status: 'in_flight', locked_at: now }])
    })

    it('takes over an abandoned claim once the lease has passed, not a millisecond before', async () => {
      const { key, api } = await freshAccount(t)
      const k = uniq('key')
      const body = { ident: uniq('W') }
      // A claim left in flight by a request whose process died at this instant.
      const claimedAt = clock.now()
      await stage(key, k, body, {
        status: 'in_flight',
        created_at: claimedAt,
        locked_at: claimedAt,
      })

      clock.set(claimedAt + IDEMPOTENCY_LEASE_MS - 1)
      expectError(await api.post('/v1/operators', body, keyed(k)), 409, 'conflict', 'idempotency_key_in_use')
      expect(await operatorRows(key.account_id)).toEqual([])

      clock.set(claimedAt + IDEMPOTENCY_LEASE_MS)
      const res = await api.post<Operator>('/v1/operators', body, keyed(k))
      expect(res.status).toBe(201)
      expect(res.headers['idempotent-replayed']).toBeUndefined()
      expect(await operatorRows(key.account_id)).toHaveLength(1)
      const [row] = await storedKey(key, k)
      expect(row).toMatchObject({ status: 'done', response_status: 201 })
      expect(Number(row?.locked_at)).toBe(claimedAt + IDEMPOTENCY_LEASE_MS)

      const again = await api.post('/v1/operators', body, keyed(k))
      expect(again.status).toBe(201)
      expect(again.body).toEqual(res.body)
      expect(again.headers['idempotent-replayed']).toBe('true')
    })

    it('still replays a stored response within 24 hours', async () => {
      const { key, api } = await freshAccount(t)
      const k = uniq('key')
      const body = { ident: uniq('W') }
      // A full operator, as the service stores it (the shape of a real answer, whatever fields
      // operators have today), with an id that exists nowhere else.
      const elsewhere = await freshAccount(t)
      const real = await elsewhere.api.post<Record<string, unknown>>('/v1/operators', { ident: body.ident })
      expect(real.status).toBe(201)
      const staged = {
        ...real.body,
        id: 'op_01STAGEDSTAGEDSTAGEDSTAGED',
        name: 'staged',
        created: '2020-01-01T00:00:00.000Z',
        updated: '2020-01-01T00:00:00.000Z',
      }
      const at = clock.now() - 23 * HOUR
      await stage(key, k, body, {
        status: 'done',
        created_at: at,
        locked_at: at,
        response: [201, staged],
      })
      const res = await api.post('/v1/operators', body, keyed(k))
      expect(res.status).toBe(201)
      expect(res.body).toEqual(staged)
      expect(res.headers['idempotent-replayed']).toBe('true')
      expect(await operatorRows(key.account_id)).toEqual([])
    })

    it('replays a response stored before an upgrade added a field, byte for byte, not a 500', async () => {
      const { key } = await freshAccount(t)
      const k = uniq('key')
      const body = { ident: uniq('W') }
      // An operator as an older version stored it: no `pay_rule_id` (nor any field added since).
      const stored = JSON.stringify({
        object: 'operator',
        id: 'op_01STAGEDSTAGEDSTAGEDSTAGED',
        ident: body.ident,
        name: null,
        employee_id: null,
        is_active: true,
        livemode: false,
        created: '2020-01-01T00:00:00.000Z',
        updated: '2020-01-01T00:00:00.000Z',
      })
      const at = clock.now() - HOUR
      await stage(key, k, body, {
        status: 'done',
        created_at: at,
        locked_at: at,
        response: [201, JSON.parse(stored)],
      })
      // Straight through the app: the test client would hold the old shape against today's document.
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/operators',
        headers: { authorization: `Bearer ${key.secret}`, ...keyed(k) },
        payload: body,
      })
      expect(res.statusCode).toBe(201)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(res.headers['idempotent-replayed']).toBe('true')
      expect(res.body).toBe(stored)
    })

    it('treats a key older than 24 hours as new, for the same or another body', async () => {
      const { key, api } = await freshAccount(t)
      const stale = clock.now() - IDEMPOTENCY_RETENTION_MS - HOUR
      const staged = { object: 'operator', id: 'op_staged' }

      const k1 = uniq('key')
      const body1 = { ident: uniq('W') }
      await stage(key, k1, body1, {
        status: 'done',
        created_at: stale,
        locked_at: stale,
        response: [201, staged],
      })
      const res1 = await api.post<Operator>('/v1/operators', body1, keyed(k1))
      expect(res1.status).toBe(201)
      expect(res1.headers['idempotent-replayed']).toBeUndefined()
      expect(res1.body.id).toMatch(/^op_/)
      expect(res1.body.id).not.toBe('op_staged')

      const k2 = uniq('key')
      await stage(
        key,
        k2,
        { ident: 'something else' },
        {
          status: 'done',
          created_at: stale,
          locked_at: stale,
          response: [201, staged],
        },
      )
      const res2 = await api.post<Operator>('/v1/operators', { ident: uniq('W') }, keyed(k2))
      expect(res2.status).toBe(201)
      expect(res2.headers['idempotent-replayed']).toBeUndefined()

      expect(await operatorRows(key.account_id)).toHaveLength(2)
      for (const k of [k1, k2]) {
        const [row] = await storedKey(key, k)
        expect(Number(row?.created_at)).toBeGreaterThan(stale + IDEMPOTENCY_RETENTION_MS)
      }
    })

    it('purgeExpiredIdempotencyKeys deletes keys past 24 hours and keeps the others', async () => {
      const { key } = await freshAccount(t)
      const now = clock.now()
      const staleKeys = [uniq('stale'), uniq('stale')]
      const freshKey = uniq('fresh')
      const stale = now - IDEMPOTENCY_RETENTION_MS - 1
      await stage(
        key,
        staleKeys[0] ?? '',
        { a: 1 },
        { status: 'done', created_at: stale, locked_at: stale, response: [201, {}] },
      )
      await stage(
        key,
        staleKeys[1] ?? '',
        { a: 2 },
        { status: 'in_flight', created_at: stale, locked_at: stale },
      )
      await stage(
        key,
        freshKey,
        { a: 3 },
        { status: 'done', created_at: now - 23 * HOUR, locked_at: now, response: [201, {}] },
      )

      const deleted = await purgeExpiredIdempotencyKeys(t.db, now)
      expect(deleted).toBe(2)
      for (const k of staleKeys) expect(await storedKey(key, k)).toEqual([])
      expect(await storedKey(key, freshKey)).toHaveLength(1)
      expect(await purgeExpiredIdempotencyKeys(t.db, now)).toBe(0)
    })

    it('the service purges a key by itself once it is past 24 hours, at its next purge', async () => {
      const { key } = await freshAccount(t)
      const k = uniq('key')
      const storedAt = clock.now()
      await stage(
        key,
        k,
        { a: 1 },
        { status: 'done', created_at: storedAt, locked_at: storedAt, response: [201, {}] },
      )
      // The purge waits its interval on the clock, runs, and schedules its next wait when it ends:
      // parked again means the purge that a step set off has finished.
      const parked = () =>
        waitUntil(
          () => clock.pending,
          (n) => n > 0,
        )
      await parked()
      clock.set(storedAt + IDEMPOTENCY_RETENTION_MS - 1)
      await parked()
      expect(await storedKey(key, k)).toHaveLength(1)
      // Its next purge, an interval on (minutes: well within another day), is past the 24 hours.
      clock.advance(IDEMPOTENCY_RETENTION_MS)
      await parked()
      expect(await storedKey(key, k)).toEqual([])
    })
  })
})
