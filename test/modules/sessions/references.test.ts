import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { type Device, expectError, type Location, type Operator } from '../../helpers/assertions.js'
import { CREATED, onDay, sessionHelpers, type World } from './helpers.js'

describe('sessions over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const {
    created,
    world,
    bodyFor,
    without,
    createSession,
    newEventTypes,
    sessionRows,
    expectCreateRefused,
    expectEditRefused,
  } = sessionHelpers(() => t)

  describe('reference resolution', () => {
    it('unknown_operator via operator_ident', async () => {
      const w = await world()
      await expectCreateRefused(
        w,
        bodyFor(w, { operator_ident: 'NOBODY' }),
        'unknown_operator',
        'operator_ident',
      )
    })

    it('unknown_operator via operator_id', async () => {
      const w = await world()
      await expectCreateRefused(
        w,
        bodyFor(w, { operator_ident: undefined, operator_id: 'op_01HZZZZZZZZZZZZZZZZZZZZZZZ' }),
        'unknown_operator',
        'operator_id',
      )
    })

    it('unknown_device for a device code that does not exist (an internal device id is not a code)', async () => {
      const w = await world()
      await expectCreateRefused(w, bodyFor(w, { device_id: 'NO-SUCH-GATE' }), 'unknown_device', 'device_id')
      await expectCreateRefused(w, bodyFor(w, { device_id: w.device.id }), 'unknown_device', 'device_id')
    })

    it('unknown_location via location_name and via location_id', async () => {
      const w = await world()
      await expectCreateRefused(
        w,
        bodyFor(w, { location_name: 'Atlantis' }),
        'unknown_location',
        'location_name',
      )
      await expectCreateRefused(
        w,
        bodyFor(w, { location_id: 'loc_01HZZZZZZZZZZZZZZZZZZZZZZZ' }),
        'unknown_location',
        'location_id',
      )
    })

    it('ambiguous_location when two locations share the name; location_id still picks one', async () => {
      const w = await world()
      const twin = await created(w.api.post<Location>('/v1/locations', { name: 'HQ' }))
      const res = await w.api.post('/v1/sessions', bodyFor(w, { location_name: 'HQ' }))
      expectError(res, 422, 'validation_error', 'ambiguous_location', 'location_name')
      expect(await sessionRows(w.key.account_id)).toEqual([])
      expect(await newEventTypes(w)).toEqual(['location.created'])

      const picked = await createSession(w, { location_id: twin.id })
      expect(picked.location_id).toBe(twin.id)
      const both = await createSession(w, { location_id: w.location.id, location_name: 'HQ', ...onDay(3) })
      expect(both.location_id).toBe(w.location.id)
      expect(await newEventTypes(w)).toEqual(['location.created', ...CREATED, ...CREATED])
    })

    it("is not ambiguous when the same name exists only once in this mode (the other mode's does not count)", async () => {
      const w = await world()
      const live = t.client((await t.key({ account: w.name, mode: 'live' })).secret)
      await created(live.post<Location>('/v1/locations', { name: 'HQ' }))
      const session = await createSession(w, { location_name: 'HQ' })
      expect(session.location_id).toBe(w.location.id)
    })

    describe('cross_mode_reference: objects that exist only in the live mode of the same account', () => {
      async function liveObjects(w: World) {
        const live = t.client((await t.key({ account: w.name, mode: 'live' })).secret)
        const location = await created(live.post<Location>('/v1/locations', { name: 'Live site' }))
        const device = await created(live.post<Device>('/v1/devices', { code: 'LIVE-GATE' }))
        const operator = await created(live.post<Operator>('/v1/operators', { ident: 'LIVE-W' }))
        return { live, location, device, operator }
      }

      it('for the operator, by ident and by id', async () => {
        const w = await world()
        const l = await liveObjects(w)
        await expectCreateRefused(
          w,
          bodyFor(w, { operator_ident: 'LIVE-W' }),
          'cross_mode_reference',
          'operator_ident',
        )
        await expectCreateRefused(
          w,
          bodyFor(w, { operator_ident: undefined, operator_id: l.operator.id }),
          'cross_mode_reference',
          'operator_id',
        )
      })

      it('for the device', async () => {
        const w = await world()
        await liveObjects(w)
        await expectCreateRefused(
          w,
          bodyFor(w, { device_id: 'LIVE-GATE' }),
          'cross_mode_reference',
          'device_id',
        )
      })

      it('for the location, by name and by id', async () => {
        const w = await world()
        const l = await liveObjects(w)
        await expectCreateRefused(
          w,
          bodyFor(w, { location_name: 'Live site' }),
          'cross_mode_reference',
          'location_name',
        )
        await expectCreateRefused(
          w,
          bodyFor(w, { location_id: l.location.id }),
          'cross_mode_reference',
          'location_id',
        )
      })

      it('the other way round: a live key naming test objects', async () => {
        const w = await world()
        const l = await liveObjects(w)
        const res = await l.live.post('/v1/sessions', {
          operator_ident: 'W-1',
          device_id: 'LIVE-GATE',
          check_in: { time: '2026-03-02T08:00:00Z' },
          check_out: { time: '2026-03-02T16:00:00Z' },
        })
        expectError(res, 422, 'validation_error', 'cross_mode_reference', 'operator_ident')
        const res2 = await l.live.post('/v1/sessions', {
          operator_ident: 'LIVE-W',
          device_id: 'GATE',
          check_in: { time: '2026-03-02T08:00:00Z' },
          check_out: { time: '2026-03-02T16:00:00Z' },
        })
        expectError(res2, 422, 'validation_error', 'cross_mode_reference', 'device_id')
        expect(await sessionRows(w.key.account_id)).toEqual([])
      })
    })

    it("treats another account's objects as unknown, never cross_mode_reference", async () => {
      const w = await world()
      const other = await world('test')
      const otherLive = await world('live', other.name)
      for (const o of [other, otherLive]) {
        await created(o.api.post<Location>('/v1/locations', { name: 'Elsewhere' }))
        await created(o.api.post<Device>('/v1/devices', { code: 'ELSE-GATE' }))
        await created(o.api.post<Operator>('/v1/operators', { ident: 'ELSE-W' }))
      }
      await expectCreateRefused(
        w,
        bodyFor(w, { operator_ident: 'ELSE-W' }),
        'unknown_operator',
        'operator_ident',
      )
      for (const o of [other, otherLive]) {
        await expectCreateRefused(
          w,
          bodyFor(w, { operator_ident: undefined, operator_id: o.operator.id }),
          'unknown_operator',
          'operator_id',
        )
        await expectCreateRefused(
          w,
          bodyFor(w, { location_id: o.location.id }),
          'unknown_location',
          'location_id',
        )
      }
      await expectCreateRefused(w, bodyFor(w, { device_id: 'ELSE-GATE' }), 'unknown_device', 'device_id')
      await expectCreateRefused(
        w,
        bodyFor(w, { location_name: 'Elsewhere' }),
        'unknown_location',
        'location_name',
      )
    })

    it('refuses operator_ident and operator_id naming different operators with conflicting_params', async () => {
      const w = await world()
      const other = await created(w.api.post<Operator>('/v1/operators', { ident: 'W-2' }))
      const res = await w.api.post(
        '/v1/sessions',
        bodyFor(w, { operator_ident: 'W-1', operator_id: other.id }),
      )
      expectError(res, 422, 'validation_error', 'conflicting_params', 'operator_ident')
      expect(await sessionRows(w.key.account_id)).toEqual([])
      expect(await newEventTypes(w)).toEqual(['operator.created'])
    })

    it('refuses a body with neither operator_ident nor operator_id with missing_param operator_ident', async () => {
      const w = await world()
      await expectCreateRefused(w, without(bodyFor(w), 'operator_ident'), 'missing_param', 'operator_ident')
    })

    it('refuses location_id and location_name that disagree with conflicting_params location_name', async () => {
      const w = await world()
      const annex = await created(w.api.post<Location>('/v1/locations', { name: 'Annex' }))
      const res = await w.api.post('/v1/sessions', bodyFor(w, { location_id: annex.id, location_name: 'HQ' }))
      expectError(res, 422, 'validation_error', 'conflicting_params', 'location_name')
      expect(await sessionRows(w.key.account_id)).toEqual([])
      expect(await newEventTypes(w)).toEqual(['location.created'])
    })

    it('resolves references on edit too, refusing unresolved ones and changing nothing', async () => {
      const w = await world()
      const live = t.client((await t.key({ account: w.name, mode: 'live' })).secret)
      const liveLocation = await created(live.post<Location>('/v1/locations', { name: 'Live site' }))
      await created(live.post<Device>('/v1/devices', { code: 'LIVE-GATE' }))
      const twin = await created(w.api.post<Location>('/v1/locations', { name: 'HQ' }))
      const other = await created(w.api.post<Operator>('/v1/operators', { ident: 'W-2' }))
      const session = await createSession(w, { location_id: twin.id })

      await expectEditRefused(w, session, { operator_ident: 'NOBODY' }, 'unknown_operator', 'operator_ident')
      await expectEditRefused(w, session, { operator_id: 'op_missing' }, 'unknown_operator', 'operator_id')
      await expectEditRefused(w, session, { device_id: 'NOPE' }, 'unknown_device', 'device_id')
      await expectEditRefused(w, session, { device_id: 'LIVE-GATE' }, 'cross_mode_reference', 'device_id')
      await expectEditRefused(w, session, { location_name: 'Atlantis' }, 'unknown_location', 'location_name')
      await expectEditRefused(w, session, { location_name: 'HQ' }, 'ambiguous_location', 'location_name')
      await expectEditRefused(
        w,
        session,
        { location_id: liveLocation.id },
        'cross_mode_reference',
        'location_id',
      )
      await expectEditRefused(
        w,
        session,
        { operator_id: other.id, operator_ident: 'W-1' },
        'conflicting_params',
        'operator_ident',
      )
      await expectEditRefused(
        w,
        session,
        { location_id: w.location.id, location_name: 'Annex' },
        'conflicting_params',
        'location_name',
      )
      expect(await newEventTypes(w)).toEqual(['location.created', 'operator.created', ...CREATED])
    })
  })
})
