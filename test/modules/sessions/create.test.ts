import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import {
  type Device,
  expectError,
  type Location,
  type Operator,
  type Session,
  uniq,
} from '../../helpers/assertions.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { CREATED, expectSessionShape, onDay, sessionHelpers } from './helpers.js'

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
    newEvents,
    newEventTypes,
    sessionRows,
    revisionsOf,
    expectCreateRefused,
  } = sessionHelpers(() => t)

  describe('POST /v1/sessions', () => {
    it('creates a flagged, completed api session with total_hours and emits session.completed then session.flagged', async () => {
      const w = await world()
      const before = Date.now()
      const res = await w.api.post<Session>('/v1/sessions', {
        operator_ident: 'W-1',
        device_id: 'GATE',
        location_name: 'HQ',
        check_in: { time: '2026-03-02T08:00:00Z' },
        check_out: { time: '2026-03-02T16:00:00Z' },
        break_minutes: 30,
        notes: 'backfill',
      })
      const after = Date.now()
      expect(res.status).toBe(201)
      const session = res.body
      expectSessionShape(session)
      expect(session).toMatchObject({
        operator_id: w.operator.id,
        operator_ident: 'W-1',
        device_id: 'GATE',
        location_id: w.location.id,
        check_in: { time: '2026-03-02T08:00:00.000Z' },
        check_out: { time: '2026-03-02T16:00:00.000Z' },
        break_minutes: 30,
        notes: 'backfill',
        total_hours: 7.5,
        is_flagged: true,
        flag_reason: 'manual_api_entry',
        source: 'api',
        status: 'completed',
        livemode: false,
      })
      expect(session.created).toBe(session.updated)
      expect(Date.parse(session.created)).toBeGreaterThanOrEqual(before)
      expect(Date.parse(session.created)).toBeLessThanOrEqual(after)
      expect((await w.api.get(`/v1/sessions/${session.id}`)).body).toEqual(session)

      const events = await newEvents(w)
      expect(events.map((e) => e.type)).toEqual(CREATED)
      for (const event of events) {
        expect(event.data.object).toEqual(session)
        expect(event.livemode).toBe(false)
        expect(event.data.previous_attributes).toBeUndefined()
      }
      // Written together (one INSERT): two events, each its own id, at the same instant.
      expect(new Set(events.map((e) => e.id)).size).toBe(2)
      expect(events[0]?.created).toBe(events[1]?.created)
    })

    it('defaults break_minutes to 0 and notes to null; accepts operator_id, or both naming one operator', async () => {
      const w = await world()
      const byId = await createSession(w, { operator_id: w.operator.id, operator_ident: undefined })
      expect(byId).toMatchObject({
        operator_id: w.operator.id,
        operator_ident: 'W-1',
        break_minutes: 0,
        notes: null,
        total_hours: 8,
      })
      const both = await createSession(w, { operator_id: w.operator.id, operator_ident: 'W-1', ...onDay(3) })
      expect(both.operator_id).toBe(w.operator.id)
      expect(await newEventTypes(w)).toEqual([...CREATED, ...CREATED])
    })

    it("takes the device's location when neither location_id nor location_name is given", async () => {
      const w = await world()
      const other = await created(w.api.post<Location>('/v1/locations', { name: 'Annex' }))
      const bare = await created(w.api.post<Device>('/v1/devices', { code: 'BARE' }))

      expect((await createSession(w)).location_id).toBe(w.location.id)
      expect((await createSession(w, { location_name: 'Annex', ...onDay(3) })).location_id).toBe(other.id)
      expect((await createSession(w, { location_id: other.id, ...onDay(4) })).location_id).toBe(other.id)
      expect((await createSession(w, { device_id: 'BARE', ...onDay(5) })).location_id).toBeNull()
      expect(
        (await createSession(w, { device_id: 'BARE', location_name: 'HQ', ...onDay(6) })).location_id,
      ).toBe(w.location.id)
      expect(bare.location_id).toBeNull()
      expect(await newEventTypes(w)).toEqual([
        'location.created',
        'device.created',
        ...CREATED,
        ...CREATED,
        ...CREATED,
        ...CREATED,
        ...CREATED,
      ])
    })

    it('makes live sessions with a live key, with live events', async () => {
      const w = await world('live')
      const session = await createSession(w)
      expect(session.livemode).toBe(true)
      const events = await newEvents(w)
      expect(events.map((e) => e.type)).toEqual(CREATED)
      expect(events.every((e) => e.livemode)).toBe(true)
      expect(await eventsOf(t, w.key.account_id, false)).toEqual([])
    })

    it('refuses fields the service sets (total_hours, is_flagged, source) with 422 unknown_param', async () => {
      const w = await world()
      await expectCreateRefused(w, bodyFor(w, { total_hours: 3 }), 'unknown_param', 'total_hours')
      await expectCreateRefused(w, bodyFor(w, { is_flagged: false }), 'unknown_param', 'is_flagged')
      await expectCreateRefused(w, bodyFor(w, { source: 'scan' }), 'unknown_param', 'source')
    })

    it('refuses missing required fields with 422 missing_param naming them', async () => {
      const w = await world()
      await expectCreateRefused(w, without(bodyFor(w), 'device_id'), 'missing_param', 'device_id')
      await expectCreateRefused(w, without(bodyFor(w), 'check_in'), 'missing_param', 'check_in')
      await expectCreateRefused(w, without(bodyFor(w), 'check_out'), 'missing_param', 'check_out')
      await expectCreateRefused(w, bodyFor(w, { check_out: {} }), 'missing_param', 'check_out.time')
      await expectCreateRefused(w, bodyFor(w, { break_minutes: 1.5 }), 'invalid_type', 'break_minutes')
    })
  })

  describe('idempotent create', () => {
    it('replays the same session for the same Idempotency-Key and body, creating one event set only', async () => {
      const w = await world()
      const headers = { 'idempotency-key': uniq('idem') }
      const body = bodyFor(w, { break_minutes: 30, notes: 'once' })
      const first = await w.api.post<Session>('/v1/sessions', body, headers)
      expect(first.status).toBe(201)
      expect(first.headers['idempotent-replayed']).toBeUndefined()
      const second = await w.api.post<Session>('/v1/sessions', body, headers)
      expect(second.status).toBe(201)
      expect(second.headers['idempotent-replayed']).toBe('true')
      expect(second.body).toEqual(first.body)

      expect((await sessionRows(w.key.account_id)).map((r) => r.id)).toEqual([first.body.id])
      expect((await revisionsOf(w.api, first.body.id)).data.map((r) => r.action)).toEqual(['created'])
      expect(await newEventTypes(w)).toEqual(CREATED)
    })

    it('refuses the same key with another body with 409 idempotency_key_reuse, creating nothing more', async () => {
      const w = await world()
      const headers = { 'idempotency-key': uniq('idem') }
      const first = await w.api.post<Session>('/v1/sessions', bodyFor(w), headers)
      expect(first.status).toBe(201)
      const res = await w.api.post('/v1/sessions', bodyFor(w, { break_minutes: 5 }), headers)
      expectError(res, 409, 'conflict', 'idempotency_key_reuse')
      expect(await sessionRows(w.key.account_id)).toHaveLength(1)
      expect(await newEventTypes(w)).toEqual(CREATED)
    })

    it('does not store a refused reference, so the same request succeeds once the reference exists', async () => {
      const w = await world()
      const headers = { 'idempotency-key': uniq('idem') }
      const body = bodyFor(w, { operator_ident: 'LATE' })
      expectError(
        await w.api.post('/v1/sessions', body, headers),
        422,
        'validation_error',
        'unknown_operator',
      )
      const late = await created(w.api.post<Operator>('/v1/operators', { ident: 'LATE' }))
      const res = await w.api.post<Session>('/v1/sessions', body, headers)
      expect(res.status).toBe(201)
      expect(res.headers['idempotent-replayed']).toBeUndefined()
      expect(res.body.operator_id).toBe(late.id)
      expect(await newEventTypes(w)).toEqual(['operator.created', ...CREATED])
    })
  })
})
