import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import { type Device, expectError, ISO_MS, type List, type Location } from '../../helpers/assertions.js'
import { eventsOf, eventTypes, freshAccount } from '../../helpers/fixtures.js'

const DEVICE_KEYS = [
  'code',
  'created',
  'id',
  'last_seen_at',
  'livemode',
  'location_id',
  'name',
  'object',
  'paired',
  'require_pin',
  'updated',
]

function expectDeviceShape(device: Device, livemode = false) {
  expect(Object.keys(device).sort()).toEqual(DEVICE_KEYS)
  expect(device.object).toBe('device')
  expect(device.id).toMatch(/^dev_[0-9A-Z]{26}$/)
  expect(device.livemode).toBe(livemode)
  expect(device.created).toMatch(ISO_MS)
  expect(device.updated).toMatch(ISO_MS)
  expect(Date.parse(device.updated)).toBeGreaterThanOrEqual(Date.parse(device.created))
}

describe('devices over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  async function deviceRows(accountId: string) {
    return t.db.selectFrom('devices').selectAll().where('account_id', '=', accountId).execute()
  }

  async function create(api: ApiClient, body: Record<string, unknown>): Promise<Device> {
    const res = await api.post<Device>('/v1/devices', body)
    expect(res.status).toBe(201)
    return res.body
  }

  async function createLocation(api: ApiClient, name = 'Site'): Promise<Location> {
    const res = await api.post<Location>('/v1/locations', { name })
    expect(res.status).toBe(201)
    return res.body
  }

  describe('POST /v1/devices', () => {
    it('creates a device with every field and emits device.created with it', async () => {
      const { key, api } = await freshAccount(t)
      const location = await createLocation(api)
      const before = Date.now()
      const res = await api.post<Device>('/v1/devices', {
        code: 'GATE-1',
        name: 'Front gate',
        location_id: location.id,
      })
      const after = Date.now()
      expect(res.status).toBe(201)
      const device = res.body
      expectDeviceShape(device)
      expect(device).toMatchObject({ code: 'GATE-1', name: 'Front gate', location_id: location.id })
      expect(device.created).toBe(device.updated)
      expect(Date.parse(device.created)).toBeGreaterThanOrEqual(before)
      expect(Date.parse(device.created)).toBeLessThanOrEqual(after)

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['location.created', 'device.created'])
      expect(events[1]?.data.object).toEqual(device)
      expect(events[1]?.livemode).toBe(false)
      expect(events[1]?.data.previous_attributes).toBeUndefined()
    })

    it('defaults name and location_id to null; a live key makes a live device', async () => {
      const { key, api } = await freshAccount(t, 'live')
      const device = await create(api, { code: 'G' })
      expectDeviceShape(device, true)
      expect(device.name).toBeNull()
      expect(device.location_id).toBeNull()
      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['device.created'])
      expect(events[0]?.livemode).toBe(true)
    })

    it('refuses a missing code, unknown params and wrong types with 422, creating nothing', async () => {
      const { key, api } = await freshAccount(t)
      expectError(
        await api.post('/v1/devices', { name: 'x' }),
        422,
        'validation_error',
        'missing_param',
        'code',
      )
      expectError(
        await api.post('/v1/devices', { code: 'A', serial: '1' }),
        422,
        'validation_error',
        'unknown_param',
        'serial',
      )
      expectError(await api.post('/v1/devices', { code: 7 }), 422, 'validation_error', 'invalid_type', 'code')
      expect(await deviceRows(key.account_id)).toEqual([])
      expect(await eventTypes(t, key.account_id)).toEqual([])
    })

    it('refuses a duplicate code with 409 duplicate_device_code, param code, and no event', async () => {
      const { key, api } = await freshAccount(t)
      const first = await create(api, { code: 'DUP', name: 'first' })
      const res = await api.post('/v1/devices', { code: 'DUP', name: 'second' })
      expectError(res, 409, 'conflict', 'duplicate_device_code', 'code')
      const rows = await deviceRows(key.account_id)
      expect(rows.map((r) => r.id)).toEqual([first.id])
      expect(await eventTypes(t, key.account_id)).toEqual(['device.created'])
    })

    it('treats codes as unique per account and per mode, not globally', async () => {
      const a = await freshAccount(t)
      const aLive = t.client((await t.key({ account: a.name, mode: 'live' })).secret)
      const b = await freshAccount(t)
      const one = await create(a.api, { code: 'SAME' })
      const two = await create(aLive, { code: 'SAME' })
      const three = await create(b.api, { code: 'SAME' })
      expect(new Set([one.id, two.id, three.id]).size).toBe(3)
      expect(two.livemode).toBe(true)
    })

    it('gives exactly one 201 and nine 409 duplicate_device_code to 10 concurrent creates of one code', async () => {
      const { key, api } = await freshAccount(t)
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          api.post<Device>('/v1/devices', { code: 'RACE', name: `n${i}` }),
        ),
      )
      const statuses = responses.map((r) => r.status)
      expect(statuses.filter((s) => s === 201)).toHaveLength(1)
      expect(statuses.filter((s) => s === 409)).toHaveLength(9)
      for (const res of responses.filter((r) => r.status === 409)) {
        expectError(res, 409, 'conflict', 'duplicate_device_code', 'code')
      }
      const winner = responses.find((r) => r.status === 201)
      const rows = await deviceRows(key.account_id)
      expect(rows.map((r) => r.id)).toEqual([winner?.body.id])
      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['device.created'])
      expect(events[0]?.data.object).toEqual(winner?.body)
    })

    it('refuses an unknown location_id with 422 unknown_location', async () => {
      const { key, api } = await freshAccount(t)
      const res = await api.post('/v1/devices', { code: 'X', location_id: 'loc_01HZZZZZZZZZZZZZZZZZZZZZZZ' })
      expectError(res, 422, 'validation_error', 'unknown_location', 'location_id')
      expect(await deviceRows(key.account_id)).toEqual([])
      expect(await eventTypes(t, key.account_id)).toEqual([])
    })

    it("refuses the other mode's location with cross_mode_reference, and another account's as unknown", async () => {
      const owner = await freshAccount(t)
      const ownerLive = t.client((await t.key({ account: owner.name, mode: 'live' })).secret)
      const liveLocation = await createLocation(ownerLive)
      const stranger = await freshAccount(t)
      const strangerLocation = await createLocation(stranger.api)

      expectError(
        await owner.api.post('/v1/devices', { code: 'X', location_id: liveLocation.id }),
        422,
        'validation_error',
        'cross_mode_reference',
        'location_id',
      )
      expectError(
        await owner.api.post('/v1/devices', { code: 'X', location_id: strangerLocation.id }),
        422,
        'validation_error',
        'unknown_location',
        'location_id',
      )
      expect(await eventTypes(t, owner.key.account_id, false)).toEqual([])
      expect(await deviceRows(owner.key.account_id)).toEqual([])
      // The refused code was not taken.
      await create(owner.api, { code: 'X' })
    })
  })

  describe('GET /v1/devices/{id}', () => {
    it('returns the device as created and 404 for unknown, other-account and other-mode ids', async () => {
      const owner = await freshAccount(t)
      const device = await create(owner.api, { code: 'G', name: 'Gate' })
      const stranger = await freshAccount(t)
      const ownerLive = t.client((await t.key({ account: owner.name, mode: 'live' })).secret)

      const res = await owner.api.get<Device>(`/v1/devices/${device.id}`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual(device)
      expectError(await owner.api.get('/v1/devices/dev_nope'), 404, 'not_found')
      expectError(await stranger.api.get(`/v1/devices/${device.id}`), 404, 'not_found')
      expectError(await ownerLive.get(`/v1/devices/${device.id}`), 404, 'not_found')
    })
  })

  describe('PATCH /v1/devices/{id}', () => {
    it('renames, moves and detaches, each with device.updated and its previous_attributes', async () => {
      const { key, api } = await freshAccount(t)
      const a = await createLocation(api, 'A')
      const b = await createLocation(api, 'B')
      const device = await create(api, { code: 'G', name: 'Old', location_id: a.id })

      const renamed = await api.patch<Device>(`/v1/devices/${device.id}`, { name: 'New' })
      expect(renamed.status).toBe(200)
      expect(renamed.body).toMatchObject({ id: device.id, code: 'G', name: 'New', location_id: a.id })
      const moved = await api.patch<Device>(`/v1/devices/${device.id}`, { location_id: b.id })
      expect(moved.body.location_id).toBe(b.id)
      const detached = await api.patch<Device>(`/v1/devices/${device.id}`, { location_id: null, name: null })
      expect(detached.body).toMatchObject({ name: null, location_id: null, created: device.created })
      expectDeviceShape(detached.body)
      expect((await api.get(`/v1/devices/${device.id}`)).body).toEqual(detached.body)

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual([
        'location.created',
        'location.created',
        'device.created',
        'device.updated',
        'device.updated',
        'device.updated',
      ])
      expect(events[3]?.data.object).toEqual(renamed.body)
      expect(events[3]?.data.previous_attributes).toEqual({ name: 'Old' })
      expect(events[4]?.data.object).toEqual(moved.body)
      expect(events[4]?.data.previous_attributes).toEqual({ location_id: a.id })
      expect(events[5]?.data.object).toEqual(detached.body)
      expect(events[5]?.data.previous_attributes).toEqual({ name: 'New', location_id: b.id })
    })

    it('changes nothing and emits nothing for a PATCH of the current values', async () => {
      const { key, api } = await freshAccount(t)
      const location = await createLocation(api)
      const device = await create(api, { code: 'G', name: 'Gate', location_id: location.id })
      const res = await api.patch<Device>(`/v1/devices/${device.id}`, {
        name: 'Gate',
        location_id: location.id,
      })
      expect(res.status).toBe(200)
      expect(res.body).toEqual(device)
      const empty = await api.patch<Device>(`/v1/devices/${device.id}`, {})
      expect(empty.body).toEqual(device)
      expect(await eventTypes(t, key.account_id)).toEqual(['location.created', 'device.created'])
    })

    it('refuses code (not patchable) with 422 unknown_param and changes nothing', async () => {
      const { key, api } = await freshAccount(t)
      const device = await create(api, { code: 'G' })
      const res = await api.patch(`/v1/devices/${device.id}`, { code: 'H', name: 'x' })
      expectError(res, 422, 'validation_error', 'unknown_param', 'code')
      expect((await api.get(`/v1/devices/${device.id}`)).body).toEqual(device)
      expect(await eventTypes(t, key.account_id)).toEqual(['device.created'])
    })

    it('resolves location_id like sessions do: unknown_location, cross_mode_reference, other account unknown', async () => {
      const owner = await freshAccount(t)
      const ownerLive = t.client((await t.key({ account: owner.name, mode: 'live' })).secret)
      const liveLocation = await createLocation(ownerLive)
      const stranger = await freshAccount(t)
      const strangerLocation = await createLocation(stranger.api)
      const device = await create(owner.api, { code: 'G' })

      expectError(
        await owner.api.patch(`/v1/devices/${device.id}`, { location_id: 'loc_missing' }),
        422,
        'validation_error',
        'unknown_location',
        'location_id',
      )
      expectError(
        await owner.api.patch(`/v1/devices/${device.id}`, { location_id: liveLocation.id }),
        422,
        'validation_error',
        'cross_mode_reference',
        'location_id',
      )
      expectError(
        await owner.api.patch(`/v1/devices/${device.id}`, { location_id: strangerLocation.id, name: 'x' }),
        422,
        'validation_error',
        'unknown_location',
        'location_id',
      )
      expect((await owner.api.get(`/v1/devices/${device.id}`)).body).toEqual(device)
      expect(await eventTypes(t, owner.key.account_id, false)).toEqual(['device.created'])
    })

    it("answers 404 for an unknown id, another account's device and the other mode's", async () => {
      const owner = await freshAccount(t)
      const device = await create(owner.api, { code: 'G' })
      const stranger = await freshAccount(t)
      const ownerLive = t.client((await t.key({ account: owner.name, mode: 'live' })).secret)
      expectError(await owner.api.patch('/v1/devices/dev_nope', { name: 'x' }), 404, 'not_found')
      expectError(await stranger.api.patch(`/v1/devices/${device.id}`, { name: 'x' }), 404, 'not_found')
      expectError(await ownerLive.patch(`/v1/devices/${device.id}`, { name: 'x' }), 404, 'not_found')
      expect((await owner.api.get(`/v1/devices/${device.id}`)).body).toEqual(device)
      expect(await eventTypes(t, owner.key.account_id)).toEqual(['device.created'])
    })
  })

  describe('DELETE /v1/devices/{id}', () => {
    it('removes the device, emits device.deleted, frees the code and leaves sessions with the code', async () => {
      const { key, api } = await freshAccount(t)
      const device = await create(api, { code: 'GONE', name: 'Old gate' })
      const op = await api.post<{ id: string }>('/v1/operators', { ident: 'W-1' })
      expect(op.status).toBe(201)
      const session = await api.post<{ id: string; device_id: string }>('/v1/sessions', {
        operator_id: op.body.id,
        device_id: 'GONE',
        check_in: { time: '2026-03-02T08:00:00Z' },
        check_out: { time: '2026-03-02T12:00:00Z' },
      })
      expect(session.status).toBe(201)
      const before = await eventTypes(t, key.account_id)

      const res = await api.delete(`/v1/devices/${device.id}`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ object: 'device', id: device.id, deleted: true })
      expectError(await api.get(`/v1/devices/${device.id}`), 404, 'not_found')
      expect(await deviceRows(key.account_id)).toEqual([])

      const events = (await eventsOf(t, key.account_id)).slice(before.length)
      expect(events.map((e) => e.type)).toEqual(['device.deleted'])
      expect(events[0]?.data.object).toEqual(device)

      const kept = await api.get<{ device_id: string }>(`/v1/sessions/${session.body.id}`)
      expect(kept.status).toBe(200)
      expect(kept.body.device_id).toBe('GONE')

      // The code is free again, and a session naming it now resolves to the new device.
      const again = await create(api, { code: 'GONE' })
      expect(again.id).not.toBe(device.id)

      expectError(await api.delete(`/v1/devices/${device.id}`), 404, 'not_found')
    })

    it("answers 404 for an unknown id, another account's device and the other mode's, deleting nothing", async () => {
      const owner = await freshAccount(t)
      const device = await create(owner.api, { code: 'G' })
      const stranger = await freshAccount(t)
      const ownerLive = t.client((await t.key({ account: owner.name, mode: 'live' })).secret)
      expectError(await owner.api.delete('/v1/devices/dev_nope'), 404, 'not_found')
      expectError(await stranger.api.delete(`/v1/devices/${device.id}`), 404, 'not_found')
      expectError(await ownerLive.delete(`/v1/devices/${device.id}`), 404, 'not_found')
      expect((await owner.api.get(`/v1/devices/${device.id}`)).body).toEqual(device)
      expect(await eventTypes(t, owner.key.account_id)).toEqual(['device.created'])
    })
  })

  describe('deleting a location', () => {
    it('detaches every device standing there, each with device.updated, before location.deleted', async () => {
      const { key, api } = await freshAccount(t)
      const closing = await createLocation(api, 'Closing')
      const staying = await createLocation(api, 'Staying')
      const d1 = await create(api, { code: 'D1', location_id: closing.id })
      const d2 = await create(api, { code: 'D2', location_id: closing.id })
      const d3 = await create(api, { code: 'D3', location_id: staying.id })
      const d4 = await create(api, { code: 'D4' })
      const before = await eventTypes(t, key.account_id)

      const res = await api.delete(`/v1/locations/${closing.id}`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ object: 'location', id: closing.id, deleted: true })

      const after1 = (await api.get<Device>(`/v1/devices/${d1.id}`)).body
      const after2 = (await api.get<Device>(`/v1/devices/${d2.id}`)).body
      expect(after1).toMatchObject({ id: d1.id, code: 'D1', location_id: null, created: d1.created })
      expect(after2).toMatchObject({ id: d2.id, code: 'D2', location_id: null, created: d2.created })
      expect((await api.get(`/v1/devices/${d3.id}`)).body).toEqual(d3)
      expect((await api.get(`/v1/devices/${d4.id}`)).body).toEqual(d4)

      const events = (await eventsOf(t, key.account_id)).slice(before.length)
      expect(events.map((e) => e.type)).toEqual(['device.updated', 'device.updated', 'location.deleted'])
      const updates = events.slice(0, 2)
      expect(
        updates.map((e) => e.data.object).sort((x, y) => String(x.id).localeCompare(String(y.id))),
      ).toEqual([after1, after2])
      for (const event of updates) expect(event.data.previous_attributes).toEqual({ location_id: closing.id })
      expect(events[2]?.data.object).toEqual(closing)

      const list = await api.get<List<Device>>(`/v1/devices?location_id=${closing.id}`)
      expect(list.body.data).toEqual([])
    })

    it("leaves the other mode's and other accounts' devices alone", async () => {
      const owner = await freshAccount(t)
      const ownerLive = t.client((await t.key({ account: owner.name, mode: 'live' })).secret)
      const location = await createLocation(owner.api)
      const liveLocation = await createLocation(ownerLive)
      const liveDevice = await create(ownerLive, { code: 'L', location_id: liveLocation.id })
      const device = await create(owner.api, { code: 'T', location_id: location.id })

      expect((await owner.api.delete(`/v1/locations/${location.id}`)).status).toBe(200)
      expect((await owner.api.get<Device>(`/v1/devices/${device.id}`)).body.location_id).toBeNull()
      expect((await ownerLive.get(`/v1/devices/${liveDevice.id}`)).body).toEqual(liveDevice)
      expect(await eventTypes(t, owner.key.account_id, true)).toEqual(['location.created', 'device.created'])
    })
  })

  describe('GET /v1/devices', () => {
    it('lists newest first and filters by code and location_id', async () => {
      const { api } = await freshAccount(t)
      const a = await createLocation(api, 'A')
      const b = await createLocation(api, 'B')
      const d1 = await create(api, { code: 'D1', location_id: a.id })
      const d2 = await create(api, { code: 'D2', location_id: b.id })
      const d3 = await create(api, { code: 'D3', location_id: a.id })
      const d4 = await create(api, { code: 'D4' })

      const all = await api.get<List<Device>>('/v1/devices')
      expect(all.status).toBe(200)
      expect(all.body).toEqual({ object: 'list', data: [d4, d3, d2, d1], has_more: false, next_cursor: null })
      expect((await api.get<List<Device>>('/v1/devices?code=D2')).body.data).toEqual([d2])
      expect((await api.get<List<Device>>('/v1/devices?code=d2')).body.data).toEqual([])
      expect((await api.get<List<Device>>(`/v1/devices?location_id=${a.id}`)).body.data).toEqual([d3, d1])
      expect((await api.get<List<Device>>(`/v1/devices?location_id=${b.id}&code=D1`)).body.data).toEqual([])
      expect((await api.get<List<Device>>(`/v1/devices?location_id=${a.id}&code=D1`)).body.data).toEqual([d1])

      const page = await api.get<List<Device>>('/v1/devices?limit=3')
      expect(page.body.data).toEqual([d4, d3, d2])
      expect(page.body.has_more).toBe(true)
      const rest = await api.get<List<Device>>(
        `/v1/devices?limit=3&cursor=${encodeURIComponent(page.body.next_cursor ?? '')}`,
      )
      expect(rest.body).toEqual({ object: 'list', data: [d1], has_more: false, next_cursor: null })
    })

    it('lists only the caller account and mode', async () => {
      const owner = await freshAccount(t)
      const ownerLive = t.client((await t.key({ account: owner.name, mode: 'live' })).secret)
      const stranger = await freshAccount(t)
      const mine = await create(owner.api, { code: 'SAME' })
      const live = await create(ownerLive, { code: 'SAME' })
      const theirs = await create(stranger.api, { code: 'SAME' })
      expect((await owner.api.get<List<Device>>('/v1/devices?code=SAME')).body.data).toEqual([mine])
      expect((await ownerLive.get<List<Device>>('/v1/devices')).body.data).toEqual([live])
      expect((await stranger.api.get<List<Device>>('/v1/devices')).body.data).toEqual([theirs])
    })
  })
})
