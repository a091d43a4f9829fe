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
import { CREATED, EDITED, expectSessionShape, type Scan, sessionHelpers } from './helpers.js'

describe('sessions over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { created, world, createSession, newEvents, newEventTypes, revisionsOf, expectEditRefused } =
    sessionHelpers(() => t)

  describe('PATCH /v1/sessions/{id}', () => {
    it('recomputes total_hours from the merged state when only break_minutes changes, and re-flags', async () => {
      const w = await world()
      const session = await createSession(w, { notes: 'n' })
      const res = await w.api.patch<Session>(`/v1/sessions/${session.id}`, { break_minutes: 45 })
      expect(res.status).toBe(200)
      const edited = res.body
      expectSessionShape(edited)
      expect(edited).toEqual({
        ...session,
        break_minutes: 45,
        total_hours: 7.25,
        is_flagged: true,
        flag_reason: 'manual_api_edit',
        updated: edited.updated,
      })
      expect(Date.parse(edited.updated)).toBeGreaterThanOrEqual(Date.parse(session.updated))
      expect((await w.api.get(`/v1/sessions/${session.id}`)).body).toEqual(edited)

      const events = await newEvents(w)
      expect(events.map((e) => e.type)).toEqual([...CREATED, ...EDITED])
      const [, , updated, flagged] = events
      expect(updated?.data.object).toEqual(edited)
      expect(updated?.data.previous_attributes).toEqual({
        break_minutes: 0,
        total_hours: 8,
        flag_reason: 'manual_api_entry',
      })
      expect(flagged?.data.object).toEqual(edited)
    })

    it('recomputes total_hours when only check_out changes, keeping check_in and the break', async () => {
      const w = await world()
      const session = await createSession(w, { break_minutes: 30 })
      const res = await w.api.patch<Session>(`/v1/sessions/${session.id}`, {
        check_out: { time: '2026-03-02T19:00:00+01:00' },
      })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({
        check_in: { time: '2026-03-02T08:00:00.000Z' },
        check_out: { time: '2026-03-02T18:00:00.000Z' },
        break_minutes: 30,
        total_hours: 9.5,
        flag_reason: 'manual_api_edit',
        status: 'completed',
      })
      const events = await newEvents(w)
      expect(events.map((e) => e.type)).toEqual([...CREATED, ...EDITED])
      expect(events[2]?.data.previous_attributes).toEqual({
        check_out: { time: '2026-03-02T16:00:00.000Z' },
        total_hours: 7.5,
        flag_reason: 'manual_api_entry',
      })
    })

    it('recomputes total_hours when only check_in changes', async () => {
      const w = await world()
      const session = await createSession(w)
      const res = await w.api.patch<Session>(`/v1/sessions/${session.id}`, {
        check_in: { time: '2026-03-02T15:39:18Z' },
      })
      expect(res.status).toBe(200)
      // 20 min 42 s
      expect(res.body.total_hours).toBe(0.35)
      expect(await newEventTypes(w)).toEqual([...CREATED, ...EDITED])
    })

    it.each([
      [
        'check_out before the stored check_in',
        { check_out: { time: '2026-03-02T07:00:00Z' } },
        'invalid_time_range',
        'check_out.time',
      ],
      [
        'check_out equal to the stored check_in',
        { check_out: { time: '2026-03-02T08:00:00Z' } },
        'invalid_time_range',
        'check_out.time',
      ],
      [
        'check_in after the stored check_out',
        { check_in: { time: '2026-03-02T17:00:00Z' } },
        'invalid_time_range',
        'check_out.time',
      ],
      [
        'a break longer than the stored times',
        { break_minutes: 481 },
        'break_exceeds_duration',
        'break_minutes',
      ],
      [
        'a check_out shorter than the stored break',
        { check_out: { time: '2026-03-02T08:59:00Z' } },
        'break_exceeds_duration',
        'break_minutes',
      ],
      [
        'a check_in leaving less than the stored break',
        { check_in: { time: '2026-03-02T15:30:00Z' } },
        'break_exceeds_duration',
        'break_minutes',
      ],
      [
        'a check_out without a zone',
        { check_out: { time: '2026-03-02T18:00:00' } },
        'invalid_timestamp',
        'check_out.time',
      ],
      [
        'a check_in that does not exist',
        { check_in: { time: '2026-02-30T08:00:00Z' } },
        'invalid_timestamp',
        'check_in.time',
      ],
    ])('refuses %s, changing nothing', async (_label, patch, code, param) => {
      const w = await world()
      const session = await createSession(w, { break_minutes: 60 })
      await expectEditRefused(w, session, { notes: 'would change', ...patch }, code, param)
      expect(await newEventTypes(w)).toEqual(CREATED)
    })

    it('accepts a merged state exactly at the edge (break equal to the new length)', async () => {
      const w = await world()
      const session = await createSession(w, { break_minutes: 60 })
      const res = await w.api.patch<Session>(`/v1/sessions/${session.id}`, {
        check_out: { time: '2026-03-02T09:00:00Z' },
      })
      expect(res.status).toBe(200)
      expect(res.body.total_hours).toBe(0)
    })

    it('flags manual_api_edit even for an edit of nothing after create (the spec: any PATCH re-flags)', async () => {
      const w = await world()
      const session = await createSession(w)
      const res = await w.api.patch<Session>(`/v1/sessions/${session.id}`, {})
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ ...session, flag_reason: 'manual_api_edit', updated: res.body.updated })
      const events = await newEvents(w)
      expect(events.map((e) => e.type)).toEqual([...CREATED, ...EDITED])
      expect(events[2]?.data.previous_attributes).toEqual({ flag_reason: 'manual_api_entry' })
    })

    it('writes nothing and emits nothing for a PATCH changing nothing when already flagged manual_api_edit', async () => {
      const w = await world()
      const session = await createSession(w)
      const edited = (
        await w.api.patch<Session>(`/v1/sessions/${session.id}`, { notes: 'late', break_minutes: 15 })
      ).body
      expect(edited.flag_reason).toBe('manual_api_edit')
      const revisions = await revisionsOf(w.api, session.id)
      expect(revisions.data).toHaveLength(2)

      for (const body of [
        {},
        { notes: 'late' },
        { break_minutes: 15, check_out: { time: '2026-03-02T17:00:00+01:00' }, operator_ident: 'W-1' },
        { device_id: 'GATE', location_id: w.location.id },
      ]) {
        const res = await w.api.patch<Session>(`/v1/sessions/${session.id}`, body)
        expect(res.status).toBe(200)
        expect(res.body).toEqual(edited)
      }
      expect((await w.api.get(`/v1/sessions/${session.id}`)).body).toEqual(edited)
      expect(await revisionsOf(w.api, session.id)).toEqual(revisions)
      expect(await newEventTypes(w)).toEqual([...CREATED, ...EDITED])
    })

    it('changes operator, device, location and notes, and null removes location and notes', async () => {
      const w = await world()
      const op2 = await created(w.api.post<Operator>('/v1/operators', { ident: 'W-2' }))
      const annex = await created(w.api.post<Location>('/v1/locations', { name: 'Annex' }))
      await created(w.api.post<Device>('/v1/devices', { code: 'GATE-2' }))
      const session = await createSession(w, { notes: 'x' })

      const moved = await w.api.patch<Session>(`/v1/sessions/${session.id}`, {
        operator_id: op2.id,
        device_id: 'GATE-2',
        location_name: 'Annex',
      })
      expect(moved.status).toBe(200)
      expect(moved.body).toMatchObject({
        operator_id: op2.id,
        operator_ident: 'W-2',
        device_id: 'GATE-2',
        location_id: annex.id,
        notes: 'x',
        total_hours: 8,
      })
      const cleared = await w.api.patch<Session>(`/v1/sessions/${session.id}`, {
        location_id: null,
        notes: null,
      })
      expect(cleared.body).toMatchObject({ location_id: null, notes: null, operator_id: op2.id })

      const events = await newEvents(w)
      expect(events.map((e) => e.type)).toEqual([
        'operator.created',
        'location.created',
        'device.created',
        ...CREATED,
        ...EDITED,
        ...EDITED,
      ])
      expect(events[5]?.data.previous_attributes).toEqual({
        operator_id: w.operator.id,
        operator_ident: 'W-1',
        device_id: 'GATE',
        location_id: w.location.id,
        flag_reason: 'manual_api_entry',
      })
      expect(events[7]?.data.previous_attributes).toEqual({ location_id: annex.id, notes: 'x' })
    })

    it('completes an open scanned session when check_out is set: session.updated, session.completed, session.flagged', async () => {
      const w = await world()
      const scan = await created(
        w.api.post<Scan>('/v1/scans', {
          device_id: 'GATE',
          operator_ident: 'W-1',
          time: '2026-03-02T08:00:00Z',
          direction: 'in',
        }),
      )
      expect(scan.result).toBe('checked_in')
      const id = scan.session_id ?? ''
      const open = (await w.api.get<Session>(`/v1/sessions/${id}`)).body
      expect(open).toMatchObject({
        status: 'open',
        source: 'scan',
        is_flagged: false,
        flag_reason: null,
        check_out: null,
        total_hours: null,
      })

      // An edit that leaves it open: flagged, still open, total_hours still null, not completed.
      const noted = await w.api.patch<Session>(`/v1/sessions/${id}`, { notes: 'forgot badge' })
      expect(noted.body).toMatchObject({
        status: 'open',
        total_hours: null,
        is_flagged: true,
        flag_reason: 'manual_api_edit',
      })
      // Setting check_out (with a break) completes it, recomputed from the merged state.
      const closed = await w.api.patch<Session>(`/v1/sessions/${id}`, {
        check_out: { time: '2026-03-02T12:00:00Z' },
        break_minutes: 15,
      })
      expect(closed.status).toBe(200)
      expect(closed.body).toMatchObject({
        status: 'completed',
        source: 'scan',
        check_out: { time: '2026-03-02T12:00:00.000Z' },
        total_hours: 3.75,
        is_flagged: true,
        flag_reason: 'manual_api_edit',
      })

      const events = await newEvents(w)
      expect(events.map((e) => e.type)).toEqual([
        'scan.checked_in',
        ...EDITED,
        'session.updated',
        'session.completed',
        'session.flagged',
      ])
      expect(events[3]?.data.previous_attributes).toEqual({
        check_out: null,
        break_minutes: 0,
        total_hours: null,
        status: 'open',
      })
      expect(events[4]?.data.object).toEqual(closed.body)
      expect(events[5]?.data.object).toEqual(closed.body)
    })

    it('refuses fields that are not settable with 422 unknown_param', async () => {
      const w = await world()
      const session = await createSession(w)
      await expectEditRefused(w, session, { total_hours: 1 }, 'unknown_param', 'total_hours')
      await expectEditRefused(w, session, { status: 'open' }, 'unknown_param', 'status')
      await expectEditRefused(w, session, { flag_reason: null }, 'unknown_param', 'flag_reason')
    })

    it("answers 404 for an unknown id, another account's session and the other mode's", async () => {
      const w = await world()
      const session = await createSession(w)
      const stranger = t.client((await t.key({ account: uniq('acct') })).secret)
      const live = t.client((await t.key({ account: w.name, mode: 'live' })).secret)
      expectError(await w.api.patch('/v1/sessions/ses_nope', { notes: 'x' }), 404, 'not_found')
      expectError(await stranger.patch(`/v1/sessions/${session.id}`, { notes: 'x' }), 404, 'not_found')
      expectError(await live.patch(`/v1/sessions/${session.id}`, { notes: 'x' }), 404, 'not_found')
      expectError(await stranger.get(`/v1/sessions/${session.id}`), 404, 'not_found')
      expectError(await live.get(`/v1/sessions/${session.id}`), 404, 'not_found')
      expect((await w.api.get(`/v1/sessions/${session.id}`)).body).toEqual(session)
      expect(await newEventTypes(w)).toEqual(CREATED)
    })
  })
})
