import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import { type Device, expectError, ISO_MS, type List, type Location } from '../../helpers/assertions.js'
import { eventsOf, eventTypes, freshAccount } from '../../helpers/fixtures.js'

const LOCATION_KEYS = [
  'address',
  'created',
  'id',
  'livemode',
  'locale',
  'name',
  'object',
  'timezone',
  'updated',
]

function expectLocationShape(location: Location, livemode = false) {
  expect(Object.keys(location).sort()).toEqual(LOCATION_KEYS)
  expect(location.object).toBe('location')
  expect(location.id).toMatch(/^loc_[0-9A-Z]{26}$/)
  expect(location.livemode).toBe(livemode)
  expect(location.created).toMatch(ISO_MS)
  expect(location.updated).toMatch(ISO_MS)
  expect(Date.parse(location.updated)).toBeGreaterThanOrEqual(Date.parse(location.created))
}

describe('locations over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  async function locationRows(accountId: string) {
    return t.db.selectFrom('locations').selectAll().where('account_id', '=', accountId).execute()
  }

  async function create(api: ApiClient, body: Record<string, unknown>): Promise<Location> {
    const res = await api.post<Location>('/v1/locations', body)
    expect(res.status).toBe(201)
    return res.body
  }

  describe('POST /v1/locations', () => {
    it('creates a location with every field and emits location.created with it', async () => {
      const { key, api } = await freshAccount(t)
      const before = Date.now()
      const res = await api.post<Location>('/v1/locations', {
        name: 'Paris depot',
        timezone: 'Europe/Paris',
        locale: 'fr-FR',
        address: '1 rue de Rivoli',
      })
      const after = Date.now()
      expect(res.status).toBe(201)
      const location = res.body
      expectLocationShape(location)
      expect(location).toMatchObject({
        name: 'Paris depot',
        timezone: 'Europe/Paris',
        locale: 'fr-FR',
        address: '1 rue de Rivoli',
      })
      expect(location.created).toBe(location.updated)
      expect(Date.parse(location.created)).toBeGreaterThanOrEqual(before)
      expect(Date.parse(location.created)).toBeLessThanOrEqual(after)

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['location.created'])
      const [event] = events
      expect(event?.id).toMatch(/^evt_[0-9A-Z]{26}$/)
      expect(event?.livemode).toBe(false)
      expect(event?.data.object).toEqual(location)
      expect(event?.data.previous_attributes).toBeUndefined()
    })

    it('defaults timezone to UTC, locale to en-GB and address to null', async () => {
      const { api } = await freshAccount(t)
      const location = await create(api, { name: 'Somewhere' })
      expectLocationShape(location)
      expect(location.timezone).toBe('UTC')
      expect(location.locale).toBe('en-GB')
      expect(location.address).toBeNull()
      expect((await api.get<Location>(`/v1/locations/${location.id}`)).body.locale).toBe('en-GB')
    })

    it('sets livemode true for a live key, on the location and on its event', async () => {
      const { key, api } = await freshAccount(t, 'live')
      const location = await create(api, { name: 'Live site' })
      expectLocationShape(location, true)
      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['location.created'])
      expect(events[0]?.livemode).toBe(true)
    })

    it.each([
      ['europe/paris', 'Europe/Paris'],
      ['EUROPE/PARIS', 'Europe/Paris'],
      ['america/new_york', 'America/New_York'],
      ['utc', 'UTC'],
      ['Asia/Tokyo', 'Asia/Tokyo'],
    ])('canonicalises the IANA time zone %s to %s', async (given, canonical) => {
      const { api } = await freshAccount(t)
      const location = await create(api, { name: 'Zone', timezone: given })
      expect(location.timezone).toBe(canonical)
      const fetched = await api.get<Location>(`/v1/locations/${location.id}`)
      expect(fetched.body.timezone).toBe(canonical)
    })

    it.each(['Mars/Olympus', 'Europe/Atlantis', '+01:00', 'UTC+1', 'Paris', 'not a zone'])(
      'refuses the unknown time zone %j with 422 invalid_timezone, creating nothing',
      async (zone) => {
        const { key, api } = await freshAccount(t)
        const res = await api.post('/v1/locations', { name: 'Nowhere', timezone: zone })
        expectError(res, 422, 'validation_error', 'invalid_timezone', 'timezone')
        expect(await locationRows(key.account_id)).toEqual([])
        expect(await eventTypes(t, key.account_id)).toEqual([])
      },
    )

    it.each([
      ['fr-fr', 'fr-FR'],
      ['EN-us', 'en-US'],
      ['de', 'de'],
      ['zh-hant-tw', 'zh-Hant-TW'],
      ['en-US-u-hc-h23', 'en-US-u-hc-h23'],
    ])('canonicalises the BCP 47 locale %s to %s', async (given, canonical) => {
      const { api } = await freshAccount(t)
      const location = await create(api, { name: 'Tagged', locale: given })
      expect(location.locale).toBe(canonical)
      const fetched = await api.get<Location>(`/v1/locations/${location.id}`)
      expect(fetched.body.locale).toBe(canonical)
    })

    it.each([
      'en_US',
      'fr--FR',
      'not a locale',
      'xx-YY',
      'qaa',
      'i-klingon',
      '',
      `en-US-u-${'ca-gregory-'.repeat(6)}hc-h23`,
    ])('refuses the locale %j with 422 invalid_value, param locale, creating nothing', async (locale) => {
      const { key, api } = await freshAccount(t)
      const res = await api.post('/v1/locations', { name: 'Babel', locale })
      expectError(res, 422, 'validation_error', 'invalid_value', 'locale')
      expect(await locationRows(key.account_id)).toEqual([])
      expect(await eventTypes(t, key.account_id)).toEqual([])
    })

    it('refuses a missing name with 422 missing_param, and unknown or wrongly typed fields', async () => {
      const { key, api } = await freshAccount(t)
      expectError(
        await api.post('/v1/locations', { timezone: 'UTC' }),
        422,
        'validation_error',
        'missing_param',
        'name',
      )
      expectError(
        await api.post('/v1/locations', { name: 'X', colour: 'red' }),
        422,
        'validation_error',
        'unknown_param',
        'colour',
      )
      expectError(
        await api.post('/v1/locations', { name: 'X', timezone: 1 }),
        422,
        'validation_error',
        'invalid_type',
        'timezone',
      )
      expectError(
        await api.post('/v1/locations', { name: 'X', locale: null }),
        422,
        'validation_error',
        'invalid_type',
        'locale',
      )
      expect(await locationRows(key.account_id)).toEqual([])
      expect(await eventTypes(t, key.account_id)).toEqual([])
    })

    it('allows two locations with the same name', async () => {
      const { key, api } = await freshAccount(t)
      const a = await create(api, { name: 'Warehouse' })
      const b = await create(api, { name: 'Warehouse' })
      expect(a.id).not.toBe(b.id)
      expect(await locationRows(key.account_id)).toHaveLength(2)
      expect(await eventTypes(t, key.account_id)).toEqual(['location.created', 'location.created'])
    })
  })

  describe('GET /v1/locations/{id}', () => {
    it('returns the location exactly as created', async () => {
      const { api } = await freshAccount(t)
      const location = await create(api, { name: 'Lyon', timezone: 'Europe/Paris', address: 'Quai' })
      const res = await api.get<Location>(`/v1/locations/${location.id}`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual(location)
    })

    it('answers 404 for an unknown id, another account and the other mode', async () => {
      const owner = await freshAccount(t)
      const location = await create(owner.api, { name: 'Mine' })
      const stranger = await freshAccount(t)
      const ownerLive = t.client((await t.key({ account: owner.name, mode: 'live' })).secret)

      expectError(await owner.api.get('/v1/locations/loc_nope'), 404, 'not_found')
      expectError(await stranger.api.get(`/v1/locations/${location.id}`), 404, 'not_found')
      expectError(await ownerLive.get(`/v1/locations/${location.id}`), 404, 'not_found')
    })
  })

  describe('PATCH /v1/locations/{id}', () => {
    it('updates name, timezone and address and emits location.updated with previous_attributes', async () => {
      const { key, api } = await freshAccount(t)
      const location = await create(api, { name: 'Old', timezone: 'UTC', address: 'Old street' })
      const res = await api.patch<Location>(`/v1/locations/${location.id}`, {
        name: 'New',
        timezone: 'europe/berlin',
        address: null,
      })
      expect(res.status).toBe(200)
      const updated = res.body
      expectLocationShape(updated)
      expect(updated).toMatchObject({
        id: location.id,
        name: 'New',
        timezone: 'Europe/Berlin',
        address: null,
        created: location.created,
      })
      expect(Date.parse(updated.updated)).toBeGreaterThanOrEqual(Date.parse(location.updated))
      expect((await api.get(`/v1/locations/${location.id}`)).body).toEqual(updated)

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['location.created', 'location.updated'])
      expect(events[1]?.data.object).toEqual(updated)
      expect(events[1]?.data.previous_attributes).toEqual({
        name: 'Old',
        timezone: 'UTC',
        address: 'Old street',
      })
    })

    it('reports only the fields that changed in previous_attributes', async () => {
      const { key, api } = await freshAccount(t)
      const location = await create(api, { name: 'Keep', timezone: 'Europe/Paris', address: 'A' })
      const res = await api.patch<Location>(`/v1/locations/${location.id}`, {
        name: 'Keep',
        timezone: 'Europe/Paris',
        address: 'B',
      })
      expect(res.status).toBe(200)
      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['location.created', 'location.updated'])
      expect(events[1]?.data.previous_attributes).toEqual({ address: 'A' })
    })

    it('changes nothing and emits nothing for a PATCH of the current values (a zone spelled differently included)', async () => {
      const { key, api } = await freshAccount(t)
      const location = await create(api, { name: 'Same', timezone: 'Europe/Paris' })
      const res = await api.patch<Location>(`/v1/locations/${location.id}`, {
        name: 'Same',
        timezone: 'europe/paris',
      })
      expect(res.status).toBe(200)
      expect(res.body).toEqual(location)
      const empty = await api.patch<Location>(`/v1/locations/${location.id}`, {})
      expect(empty.status).toBe(200)
      expect(empty.body).toEqual(location)
      expect(await eventTypes(t, key.account_id)).toEqual(['location.created'])
    })

    it('refuses an unknown time zone with 422 invalid_timezone and changes nothing', async () => {
      const { key, api } = await freshAccount(t)
      const location = await create(api, { name: 'Here', timezone: 'Europe/Paris' })
      const res = await api.patch(`/v1/locations/${location.id}`, {
        name: 'Renamed',
        timezone: 'Nowhere/Land',
      })
      expectError(res, 422, 'validation_error', 'invalid_timezone', 'timezone')
      expect((await api.get(`/v1/locations/${location.id}`)).body).toEqual(location)
      expect(await eventTypes(t, key.account_id)).toEqual(['location.created'])
    })

    it('changes the locale (canonicalised) and emits location.updated with the previous one', async () => {
      const { key, api } = await freshAccount(t)
      const location = await create(api, { name: 'Gate', timezone: 'America/New_York' })
      const res = await api.patch<Location>(`/v1/locations/${location.id}`, { locale: 'en-us' })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ id: location.id, locale: 'en-US', timezone: 'America/New_York' })
      expect((await api.get(`/v1/locations/${location.id}`)).body).toEqual(res.body)

      // The same tag spelled otherwise is no change: no event.
      const same = await api.patch<Location>(`/v1/locations/${location.id}`, { locale: 'EN-US' })
      expect(same.status).toBe(200)
      expect(same.body).toEqual(res.body)

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['location.created', 'location.updated'])
      expect(events[1]?.data.object).toEqual(res.body)
      expect(events[1]?.data.previous_attributes).toEqual({ locale: 'en-GB' })
    })

    it('refuses an unknown locale with 422 invalid_value, param locale, and changes nothing', async () => {
      const { key, api } = await freshAccount(t)
      const location = await create(api, { name: 'Here', locale: 'fr-FR' })
      const res = await api.patch(`/v1/locations/${location.id}`, { name: 'Renamed', locale: 'fr_FR' })
      expectError(res, 422, 'validation_error', 'invalid_value', 'locale')
      expect((await api.get(`/v1/locations/${location.id}`)).body).toEqual(location)
      expect(await eventTypes(t, key.account_id)).toEqual(['location.created'])
    })

    it('refuses unknown params and a null name with 422, changing nothing', async () => {
      const { key, api } = await freshAccount(t)
      const location = await create(api, { name: 'Here' })
      expectError(
        await api.patch(`/v1/locations/${location.id}`, { id: 'loc_other' }),
        422,
        'validation_error',
        'unknown_param',
        'id',
      )
      expectError(
        await api.patch(`/v1/locations/${location.id}`, { name: null }),
        422,
        'validation_error',
        'invalid_type',
        'name',
      )
      expect((await api.get(`/v1/locations/${location.id}`)).body).toEqual(location)
      expect(await eventTypes(t, key.account_id)).toEqual(['location.created'])
    })

    it("answers 404 for an unknown id, another account's location and the other mode's, changing nothing", async () => {
      const owner = await freshAccount(t)
      const location = await create(owner.api, { name: 'Mine' })
      const stranger = await freshAccount(t)
      const ownerLiveKey = await t.key({ account: owner.name, mode: 'live' })
      const ownerLive = t.client(ownerLiveKey.secret)

      expectError(await owner.api.patch('/v1/locations/loc_nope', { name: 'x' }), 404, 'not_found')
      expectError(await stranger.api.patch(`/v1/locations/${location.id}`, { name: 'x' }), 404, 'not_found')
      expectError(await ownerLive.patch(`/v1/locations/${location.id}`, { name: 'x' }), 404, 'not_found')
      expect((await owner.api.get(`/v1/locations/${location.id}`)).body).toEqual(location)
      expect(await eventTypes(t, owner.key.account_id)).toEqual(['location.created'])
      expect(await eventTypes(t, stranger.key.account_id)).toEqual([])
    })
  })

  describe('DELETE /v1/locations/{id}', () => {
    it('removes the location, answers the deleted object and emits location.deleted', async () => {
      const { key, api } = await freshAccount(t)
      const location = await create(api, { name: 'Gone', timezone: 'Europe/Paris', address: 'X' })
      const res = await api.delete(`/v1/locations/${location.id}`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ object: 'location', id: location.id, deleted: true })

      expectError(await api.get(`/v1/locations/${location.id}`), 404, 'not_found')
      expect(await locationRows(key.account_id)).toEqual([])
      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['location.created', 'location.deleted'])
      expect(events[1]?.data.object).toEqual(location)

      // A second delete finds nothing and emits nothing.
      expectError(await api.delete(`/v1/locations/${location.id}`), 404, 'not_found')
      expect(await eventTypes(t, key.account_id)).toEqual(['location.created', 'location.deleted'])
    })

    it('detaches its devices (device.updated each) and leaves sessions with their location_id', async () => {
      const { key, api } = await freshAccount(t)
      const location = await create(api, { name: 'Closing' })
      const other = await create(api, { name: 'Staying' })
      const here = await api.post<Device>('/v1/devices', { code: 'D-HERE', location_id: location.id })
      const there = await api.post<Device>('/v1/devices', { code: 'D-THERE', location_id: other.id })
      expect(here.status).toBe(201)
      expect(there.status).toBe(201)
      const op = await api.post<{ id: string }>('/v1/operators', { ident: 'W-1' })
      expect(op.status).toBe(201)
      const session = await api.post<{ id: string; location_id: string | null }>('/v1/sessions', {
        operator_id: op.body.id,
        device_id: 'D-HERE',
        check_in: { time: '2026-03-02T08:00:00Z' },
        check_out: { time: '2026-03-02T16:00:00Z' },
      })
      expect(session.status).toBe(201)
      expect(session.body.location_id).toBe(location.id)
      const before = await eventTypes(t, key.account_id)

      const res = await api.delete(`/v1/locations/${location.id}`)
      expect(res.status).toBe(200)

      const detached = await api.get<Device>(`/v1/devices/${here.body.id}`)
      expect(detached.body.location_id).toBeNull()
      expect((await api.get<Device>(`/v1/devices/${there.body.id}`)).body).toEqual(there.body)
      const kept = await api.get<{ location_id: string | null }>(`/v1/sessions/${session.body.id}`)
      expect(kept.status).toBe(200)
      expect(kept.body.location_id).toBe(location.id)

      const events = (await eventsOf(t, key.account_id)).slice(before.length)
      expect(events.map((e) => e.type)).toEqual(['device.updated', 'location.deleted'])
      expect(events[0]?.data.object).toEqual(detached.body)
      expect(events[0]?.data.previous_attributes).toEqual({ location_id: location.id })
      expect(events[1]?.data.object).toEqual(location)
    })

    it("answers 404 for an unknown id, another account's location and the other mode's, deleting nothing", async () => {
      const owner = await freshAccount(t)
      const location = await create(owner.api, { name: 'Mine' })
      const stranger = await freshAccount(t)
      const ownerLive = t.client((await t.key({ account: owner.name, mode: 'live' })).secret)

      expectError(await owner.api.delete('/v1/locations/loc_nope'), 404, 'not_found')
      expectError(await stranger.api.delete(`/v1/locations/${location.id}`), 404, 'not_found')
      expectError(await ownerLive.delete(`/v1/locations/${location.id}`), 404, 'not_found')
      expect((await owner.api.get(`/v1/locations/${location.id}`)).body).toEqual(location)
      expect(await eventTypes(t, owner.key.account_id)).toEqual(['location.created'])
    })
  })

  describe('GET /v1/locations', () => {
    it('lists newest first, filters by exact name and pages with a cursor', async () => {
      const { api } = await freshAccount(t)
      const a = await create(api, { name: 'Depot' })
      const b = await create(api, { name: 'Office' })
      const c = await create(api, { name: 'Depot' })

      const all = await api.get<List<Location>>('/v1/locations')
      expect(all.status).toBe(200)
      expect(all.body).toEqual({ object: 'list', data: [c, b, a], has_more: false, next_cursor: null })

      const depots = await api.get<List<Location>>('/v1/locations?name=Depot')
      expect(depots.body.data).toEqual([c, a])
      const none = await api.get<List<Location>>('/v1/locations?name=depot')
      expect(none.body.data).toEqual([])

      const first = await api.get<List<Location>>('/v1/locations?limit=2')
      expect(first.body.data).toEqual([c, b])
      expect(first.body.has_more).toBe(true)
      const cursor = first.body.next_cursor ?? ''
      const second = await api.get<List<Location>>(
        `/v1/locations?limit=2&cursor=${encodeURIComponent(cursor)}`,
      )
      expect(second.body).toEqual({ object: 'list', data: [a], has_more: false, next_cursor: null })
    })

    it('lists only the caller account and mode', async () => {
      const owner = await freshAccount(t)
      const ownerLive = t.client((await t.key({ account: owner.name, mode: 'live' })).secret)
      const stranger = await freshAccount(t)
      const testLoc = await create(owner.api, { name: 'Shared name' })
      const liveLoc = await create(ownerLive, { name: 'Shared name' })
      const strangerLoc = await create(stranger.api, { name: 'Shared name' })
      expect(liveLoc.livemode).toBe(true)

      expect((await owner.api.get<List<Location>>('/v1/locations')).body.data).toEqual([testLoc])
      expect((await ownerLive.get<List<Location>>('/v1/locations')).body.data).toEqual([liveLoc])
      expect((await stranger.api.get<List<Location>>('/v1/locations?name=Shared%20name')).body.data).toEqual([
        strangerLoc,
      ])
      expect(await eventTypes(t, owner.key.account_id, false)).toEqual(['location.created'])
      expect(await eventTypes(t, owner.key.account_id, true)).toEqual(['location.created'])
    })

    it('refuses an unknown query parameter with 422', async () => {
      const { api } = await freshAccount(t)
      expectError(
        await api.get('/v1/locations?timezone=UTC'),
        422,
        'validation_error',
        'unknown_param',
        'timezone',
      )
    })
  })
})
