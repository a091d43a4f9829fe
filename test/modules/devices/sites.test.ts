import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { type Device, expectError, type List } from '../../helpers/assertions.js'
import { expectAnsweredAsMissing, sitesWorld, walkList } from '../../helpers/sites.js'

/**
 * Devices for a principal held to sites (decisions.md, "Sites"): one elsewhere, or standing
 * nowhere, does not exist.
 */
describe('devices at other sites', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it('reads and lists its devices only, in full pages; others answer as missing ids', async () => {
    const w = await sitesWorld(t)
    const mine = [w.devices.here.id]
    for (let i = 0; i < 3; i++) {
      for (const location_id of [w.here.id, w.there.id, undefined]) {
        const res = await w.owner.post<Device>('/v1/devices', {
          code: `D-${i}-${location_id ?? 'none'}`,
          location_id,
        })
        expect(res.status).toBe(201)
        if (location_id === w.here.id) mine.push(res.body.id)
      }
    }
    const list = await walkList(w.restricted, '/v1/devices', 3)
    expect(list.ids).toEqual([...mine].reverse())
    expect(list.pages).toEqual([3, 1])
    const read = await w.restricted.get<Device>(`/v1/devices/${w.devices.here.id}`)
    expect(read.body).toEqual(w.devices.here)
    const filtered = await w.restricted.get<List<Device>>(`/v1/devices?location_id=${w.there.id}`)
    expect(filtered.body.data).toEqual([])
    for (const device of [w.devices.there, w.devices.nowhere]) {
      await expectAnsweredAsMissing(
        w.restricted,
        { method: 'GET', path: (d) => `/v1/devices/${d}` },
        device.id,
        w.owner,
      )
      const byCode = await w.restricted.get<List<Device>>(`/v1/devices?code=${device.code}`)
      expect(byCode.body.data).toEqual([])
    }
    expect((await walkList(w.owner, '/v1/devices', 50)).ids).toHaveLength(12)
  })

  it('changes, pairs, unpairs and deletes one elsewhere as a missing id, and nothing changes', async () => {
    const w = await sitesWorld(t)
    const requests = [
      { method: 'PATCH' as const, path: (d: string) => `/v1/devices/${d}`, body: { name: 'Mine now' } },
      { method: 'POST' as const, path: (d: string) => `/v1/devices/${d}/pairing-codes` },
      { method: 'POST' as const, path: (d: string) => `/v1/devices/${d}/unpair` },
      { method: 'DELETE' as const, path: (d: string) => `/v1/devices/${d}` },
    ]
    for (const device of [w.devices.there, w.devices.nowhere]) {
      for (const request of requests) await expectAnsweredAsMissing(w.restricted, request, device.id)
      expect((await w.owner.get<Device>(`/v1/devices/${device.id}`)).body).toEqual(device)
    }
    const renamed = await w.restricted.patch<Device>(`/v1/devices/${w.devices.here.id}`, {
      name: 'Front door',
    })
    expect(renamed.status).toBe(200)
    expect(renamed.body.name).toBe('Front door')
  })

  it('places a device at one of its locations only, never nowhere', async () => {
    const w = await sitesWorld(t)
    expectError(
      await w.restricted.post('/v1/devices', { code: 'NEW-1' }),
      422,
      'validation_error',
      'invalid_value',
      'location_id',
    )
    expectError(
      await w.restricted.post('/v1/devices', { code: 'NEW-1', location_id: null }),
      422,
      'validation_error',
      'invalid_value',
      'location_id',
    )
    expectError(
      await w.restricted.post('/v1/devices', { code: 'NEW-1', location_id: w.there.id }),
      422,
      'validation_error',
      'unknown_location',
      'location_id',
    )
    const made = await w.restricted.post<Device>('/v1/devices', { code: 'NEW-1', location_id: w.here.id })
    expect(made.status, JSON.stringify(made.body)).toBe(201)
    for (const [body, code] of [
      [{ location_id: null }, 'invalid_value'],
      [{ location_id: w.there.id }, 'unknown_location'],
    ] as const) {
      expectError(
        await w.restricted.patch(`/v1/devices/${made.body.id}`, body),
        422,
        'validation_error',
        code,
        'location_id',
      )
    }
    expect((await w.owner.get<Device>(`/v1/devices/${made.body.id}`)).body).toEqual(made.body)
    // The owner's key places devices anywhere, or nowhere.
    const nowhere = await w.owner.patch<Device>(`/v1/devices/${made.body.id}`, { location_id: null })
    expect(nowhere.body.location_id).toBeNull()
  })
})
