import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import {
  type Device,
  expectError,
  type List,
  type Location,
  type Operator,
  type Session,
} from '../../helpers/assertions.js'
import { CREATED, type Scan, sessionHelpers } from './helpers.js'

describe('sessions over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { created, world, createSession, newEventTypes } = sessionHelpers(() => t)

  describe('GET /v1/sessions', () => {
    it('filters by operator_id, device_id, location_id, is_flagged, status and check-in range', async () => {
      const w = await world()
      const op2 = await created(w.api.post<Operator>('/v1/operators', { ident: 'W-2' }))
      const annex = await created(w.api.post<Location>('/v1/locations', { name: 'Annex' }))
      await created(w.api.post<Device>('/v1/devices', { code: 'GATE-2' }))

      const s1 = await createSession(w, {
        check_in: { time: '2026-03-01T08:00:00Z' },
        check_out: { time: '2026-03-01T16:00:00Z' },
      })
      const s2 = await createSession(w, {
        operator_ident: 'W-2',
        device_id: 'GATE-2',
        location_name: 'Annex',
        check_in: { time: '2026-03-02T08:00:00Z' },
        check_out: { time: '2026-03-02T16:00:00Z' },
      })
      const s3 = await createSession(w, {
        device_id: 'GATE-2',
        check_in: { time: '2026-03-03T08:00:00Z' },
        check_out: { time: '2026-03-03T16:00:00Z' },
      })
      const scan = await created(
        w.api.post<Scan>('/v1/scans', {
          device_id: 'GATE',
          operator_id: op2.id,
          time: '2026-03-04T08:00:00Z',
          direction: 'in',
        }),
      )
      const s4 = (await w.api.get<Session>(`/v1/sessions/${scan.session_id ?? ''}`)).body
      const gone = await createSession(w, {
        check_in: { time: '2026-03-02T10:00:00Z' },
        check_out: { time: '2026-03-02T11:00:00Z' },
      })
      expect((await w.api.delete(`/v1/sessions/${gone.id}`)).status).toBe(200)

      const list = async (query: string) => {
        const res = await w.api.get<List<Session>>(`/v1/sessions${query}`)
        expect(res.status).toBe(200)
        return res.body.data.map((s) => s.id)
      }
      expect((await w.api.get<List<Session>>('/v1/sessions')).body).toEqual({
        object: 'list',
        data: [s4, s3, s2, s1],
        has_more: false,
        next_cursor: null,
      })
      expect(await list(`?operator_id=${w.operator.id}`)).toEqual([s3.id, s1.id])
      expect(await list(`?operator_id=${op2.id}`)).toEqual([s4.id, s2.id])
      expect(await list('?device_id=GATE-2')).toEqual([s3.id, s2.id])
      expect(await list(`?device_id=${encodeURIComponent(w.device.id)}`)).toEqual([])
      expect(await list(`?location_id=${w.location.id}`)).toEqual([s4.id, s1.id])
      expect(await list(`?location_id=${annex.id}`)).toEqual([s2.id])
      expect(await list('?is_flagged=true')).toEqual([s3.id, s2.id, s1.id])
      expect(await list('?is_flagged=false')).toEqual([s4.id])
      expect(await list('?status=open')).toEqual([s4.id])
      expect(await list('?status=completed')).toEqual([s3.id, s2.id, s1.id])
      expect(await list(`?check_in_from=${encodeURIComponent('2026-03-02T08:00:00Z')}`)).toEqual([
        s4.id,
        s3.id,
        s2.id,
      ])
      expect(await list(`?check_in_from=${encodeURIComponent('2026-03-02T09:00:00+01:00')}`)).toEqual([
        s4.id,
        s3.id,
        s2.id,
      ])
      expect(await list(`?check_in_from=${encodeURIComponent('2026-03-02T08:00:00.001Z')}`)).toEqual([
        s4.id,
        s3.id,
      ])
      expect(await list(`?check_in_to=${encodeURIComponent('2026-03-03T08:00:00Z')}`)).toEqual([s2.id, s1.id])
      expect(await list(`?check_in_to=${encodeURIComponent('2026-03-03T08:00:00.001Z')}`)).toEqual([
        s3.id,
        s2.id,
        s1.id,
      ])
      expect(
        await list(
          `?check_in_from=${encodeURIComponent('2026-03-02T00:00:00Z')}&check_in_to=${encodeURIComponent('2026-03-04T00:00:00Z')}&operator_id=${w.operator.id}`,
        ),
      ).toEqual([s3.id])
      expect(await list('?status=open&is_flagged=true')).toEqual([])
      expect(await newEventTypes(w)).toEqual([
        'operator.created',
        'location.created',
        'device.created',
        ...CREATED,
        ...CREATED,
        ...CREATED,
        'scan.checked_in',
        ...CREATED,
        'session.deleted',
      ])
    })

    it.each([
      ['check_in_from', '2026-03-02'],
      ['check_in_from', 'garbage'],
      ['check_in_to', '2026-03-02T08:00:00'],
      ['check_in_to', '2026-02-30T00:00:00Z'],
    ])('refuses %s=%s with 422 invalid_timestamp naming it', async (param, value) => {
      const w = await world()
      const res = await w.api.get(`/v1/sessions?${param}=${encodeURIComponent(value)}`)
      expectError(res, 422, 'validation_error', 'invalid_timestamp', param)
    })

    it('lists only the caller account and mode', async () => {
      const w = await world()
      const live = await world('live', w.name)
      const stranger = await world()
      const mine = await createSession(w)
      const liveSession = await createSession(live)
      const theirs = await createSession(stranger)
      expect((await w.api.get<List<Session>>('/v1/sessions')).body.data).toEqual([mine])
      expect((await live.api.get<List<Session>>('/v1/sessions')).body.data).toEqual([liveSession])
      expect((await stranger.api.get<List<Session>>('/v1/sessions')).body.data).toEqual([theirs])
      expect(
        (await w.api.get<List<Session>>(`/v1/sessions?operator_id=${stranger.operator.id}`)).body.data,
      ).toEqual([])
    })
  })
})
