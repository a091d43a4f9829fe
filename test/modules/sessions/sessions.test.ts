import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiClient, type ApiResponse, buildTestApp, type TestApp } from '../../helpers/app.js'
import {
  type Device,
  expectError,
  ISO_MS,
  type List,
  type Location,
  type Operator,
  type Session,
  type SessionRevision,
  uniq,
} from '../../helpers/assertions.js'
import { eventsOf } from '../../helpers/fixtures.js'

interface Scan {
  result: string
  session_id: string | null
}

type Body = Record<string, unknown>

const SESSION_KEYS = [
  'break_minutes',
  'check_in',
  'check_out',
  'created',
  'device_id',
  'flag_reason',
  'id',
  'is_flagged',
  'livemode',
  'location_id',
  'notes',
  'object',
  'operator_id',
  'operator_ident',
  'review_note',
  'review_status',
  'reviewed_at',
  'reviewed_by',
  'source',
  'status',
  'total_hours',
  'updated',
  'work_date',
]
/** The events every `world()` starts with, in this order. */
const SETUP_EVENTS = ['location.created', 'device.created', 'operator.created']
const CREATED = ['session.completed', 'session.flagged']
const EDITED = ['session.updated', 'session.flagged']

function expectSessionShape(session: Session) {
  expect(Object.keys(session).sort()).toEqual(SESSION_KEYS)
  expect(session.object).toBe('session')
  expect(session.id).toMatch(/^ses_[0-9A-Z]{26}$/)
  expect(session.check_in.time).toMatch(ISO_MS)
  if (session.check_out !== null) expect(session.check_out.time).toMatch(ISO_MS)
  expect(session.created).toMatch(ISO_MS)
  expect(session.updated).toMatch(ISO_MS)
}

describe('sessions over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  async function created<T>(res: Promise<ApiResponse<T>>): Promise<T> {
    const answer = await res
    expect(answer.status).toBe(201)
    return answer.body
  }

  /**
   * An account of its own with, in one mode: a location `HQ` (Europe/Paris), a device `GATE` standing
   * there and an operator `W-1`. Its events are SETUP_EVENTS.
   */
  async function world(mode: 'test' | 'live' = 'test', name = uniq('acct')) {
    const key = await t.key({ account: name, mode })
    const api = t.client(key.secret)
    const location = await created(
      api.post<Location>('/v1/locations', { name: 'HQ', timezone: 'Europe/Paris' }),
    )
    const device = await created(api.post<Device>('/v1/devices', { code: 'GATE', location_id: location.id }))
    const operator = await created(api.post<Operator>('/v1/operators', { ident: 'W-1' }))
    return { key, name, api, location, device, operator }
  }
  type World = Awaited<ReturnType<typeof world>>

  /** A valid create body for the world: 08:00 to 16:00 UTC on 2 March 2026. */
  function bodyFor(w: World, overrides: Body = {}): Body {
    return {
      operator_ident: w.operator.ident,
      device_id: w.device.code,
      check_in: { time: '2026-03-02T08:00:00Z' },
      check_out: { time: '2026-03-02T16:00:00Z' },
      ...overrides,
    }
  }

  function without(body: Body, ...keys: string[]): Body {
    return Object.fromEntries(Object.entries(body).filter(([k]) => !keys.includes(k)))
  }

  async function createSession(w: World, overrides: Body = {}): Promise<Session> {
    const res = await w.api.post<Session>('/v1/sessions', bodyFor(w, overrides))
    expect(res.status).toBe(201)
    expectSessionShape(res.body)
    return res.body
  }

  /** The events of the world's account and mode after its set-up (which is checked too). */
  async function newEvents(w: World) {
    const events = await eventsOf(t, w.key.account_id, w.key.mode === 'live')
    expect(events.slice(0, SETUP_EVENTS.length).map((e) => e.type)).toEqual(SETUP_EVENTS)
    return events.slice(SETUP_EVENTS.length)
  }

  async function newEventTypes(w: World) {
    return (await newEvents(w)).map((e) => e.type)
  }

  async function sessionRows(accountId: string) {
    return t.db.selectFrom('sessions').selectAll().where('account_id', '=', accountId).execute()
  }

  async function revisionRows(accountId: string) {
    return t.db.selectFrom('session_revisions').selectAll().where('account_id', '=', accountId).execute()
  }

  async function revisionsOf(api: ApiClient, id: string, query = '') {
    const res = await api.get<List<SessionRevision>>(`/v1/sessions/${id}/revisions${query}`)
    expect(res.status).toBe(200)
    return res.body
  }

  /** A refused create: the error, and no session, revision or event left behind. */
  async function expectCreateRefused(w: World, body: Body, code: string, param: string) {
    const res = await w.api.post('/v1/sessions', body)
    expectError(res, 422, 'validation_error', code, param)
    expect(await sessionRows(w.key.account_id)).toEqual([])
    expect(await revisionRows(w.key.account_id)).toEqual([])
    expect(await newEventTypes(w)).toEqual([])
  }

  /** A refused edit: the error, and the session, its revisions and the events unchanged. */
  async function expectEditRefused(w: World, session: Session, body: Body, code: string, param: string) {
    const eventsBefore = await newEventTypes(w)
    const revisionsBefore = await revisionsOf(w.api, session.id)
    const res = await w.api.patch(`/v1/sessions/${session.id}`, body)
    expectError(res, 422, 'validation_error', code, param)
    expect((await w.api.get(`/v1/sessions/${session.id}`)).body).toEqual(session)
    expect(await revisionsOf(w.api, session.id)).toEqual(revisionsBefore)
    expect(await newEventTypes(w)).toEqual(eventsBefore)
  }

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
      const both = await createSession(w, { operator_id: w.operator.id, operator_ident: 'W-1' })
      expect(both.operator_id).toBe(w.operator.id)
      expect(await newEventTypes(w)).toEqual([...CREATED, ...CREATED])
    })

    it("takes the device's location when neither location_id nor location_name is given", async () => {
      const w = await world()
      const other = await created(w.api.post<Location>('/v1/locations', { name: 'Annex' }))
      const bare = await created(w.api.post<Device>('/v1/devices', { code: 'BARE' }))

      expect((await createSession(w)).location_id).toBe(w.location.id)
      expect((await createSession(w, { location_name: 'Annex' })).location_id).toBe(other.id)
      expect((await createSession(w, { location_id: other.id })).location_id).toBe(other.id)
      expect((await createSession(w, { device_id: 'BARE' })).location_id).toBeNull()
      expect((await createSession(w, { device_id: 'BARE', location_name: 'HQ' })).location_id).toBe(
        w.location.id,
      )
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
      const both = await createSession(w, { location_id: w.location.id, location_name: 'HQ' })
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

  describe('times', () => {
    it.each([
      ['equal to check_in', '2026-03-02T08:00:00Z'],
      ['equal to check_in in another offset', '2026-03-02T09:00:00+01:00'],
      ['earlier than check_in', '2026-03-02T07:59:59Z'],
    ])('refuses a check_out %s with invalid_time_range on check_out.time', async (_label, checkOut) => {
      const w = await world()
      await expectCreateRefused(
        w,
        bodyFor(w, { check_out: { time: checkOut } }),
        'invalid_time_range',
        'check_out.time',
      )
    })

    it.each([
      ['check_in', 'no zone designator', '2026-03-02T08:00:00'],
      ['check_in', 'garbage', 'yesterday morning'],
      ['check_in', 'a date that does not exist', '2026-02-30T08:00:00Z'],
      ['check_in', 'a date without a time', '2026-03-02'],
      ['check_out', 'no zone designator', '2026-03-02T16:00:00.000'],
      ['check_out', 'garbage', 'not-a-time'],
      ['check_out', 'a date that does not exist', '2026-02-30T16:00:00Z'],
      ['check_out', 'an hour that does not exist', '2026-03-02T25:00:00Z'],
    ])('refuses %s.time with %s as invalid_timestamp', async (field, _label, value) => {
      const w = await world()
      await expectCreateRefused(
        w,
        bodyFor(w, { [field]: { time: value } }),
        'invalid_timestamp',
        `${field}.time`,
      )
    })

    it('refuses break_minutes longer than the session with break_exceeds_duration; equal gives 0 hours', async () => {
      const w = await world()
      const oneHour = {
        check_in: { time: '2026-03-02T08:00:00Z' },
        check_out: { time: '2026-03-02T09:00:00Z' },
      }
      await expectCreateRefused(
        w,
        bodyFor(w, { ...oneHour, break_minutes: 61 }),
        'break_exceeds_duration',
        'break_minutes',
      )
      const full = await createSession(w, { ...oneHour, break_minutes: 60 })
      expect(full.total_hours).toBe(0)
      expect(await newEventTypes(w)).toEqual(CREATED)
    })

    it('returns times in UTC with milliseconds, whatever offset they were sent in', async () => {
      const w = await world()
      const session = await createSession(w, {
        check_in: { time: '2026-03-02T09:15:30.250+05:30' },
        check_out: { time: '2026-03-01T23:00:00-08:00' },
      })
      expect(session.check_in.time).toBe('2026-03-02T03:45:30.250Z')
      expect(session.check_out?.time).toBe('2026-03-02T07:00:00.000Z')
      // 3 h 14 min 29.75 s = 3.2415 h
      expect(session.total_hours).toBe(3.24)
    })

    it.each([
      ['a full day with no break', '2026-03-02T08:00:00Z', '2026-03-02T16:00:00Z', 0, 8],
      ['a break equal to the whole session', '2026-03-02T08:00:00Z', '2026-03-02T09:00:00Z', 60, 0],
      [
        'the spring DST day in Paris (7 real hours)',
        '2026-03-29T00:30:00+01:00',
        '2026-03-29T08:30:00+02:00',
        0,
        7,
      ],
      [
        'the autumn DST day in Paris (9 real hours)',
        '2026-10-25T00:30:00+02:00',
        '2026-10-25T08:30:00+01:00',
        0,
        9,
      ],
      ['a night shift across midnight', '2026-03-01T22:00:00Z', '2026-03-02T06:00:00Z', 30, 7.5],
      ['across midnight and a month end', '2026-02-28T23:30:00Z', '2026-03-01T00:15:00Z', 0, 0.75],
      ['1 h 0 min 30 s (seconds count)', '2026-03-02T08:00:00Z', '2026-03-02T09:00:30Z', 0, 1.01],
      ['1 h 0 min 18 s = 1.005 h, half-up', '2026-03-02T08:00:00Z', '2026-03-02T09:00:18Z', 0, 1.01],
      ['2 h 0 min 18 s = 2.005 h, half-up', '2026-03-02T08:00:00Z', '2026-03-02T10:00:18Z', 0, 2.01],
      [
        '20 min 42 s = 0.345 h, half-up (not to even)',
        '2026-03-02T08:00:00Z',
        '2026-03-02T08:20:42Z',
        0,
        0.35,
      ],
      ['20 min 41 s = 0.3447 h, down', '2026-03-02T08:00:00Z', '2026-03-02T08:20:41Z', 0, 0.34],
      ['1 min 48 s = 0.03 h', '2026-03-02T08:00:00Z', '2026-03-02T08:01:48Z', 0, 0.03],
      ['18 s = 0.005 h, half-up', '2026-03-02T08:00:00Z', '2026-03-02T08:00:18Z', 0, 0.01],
      ['17.999 s, just under half, down', '2026-03-02T08:00:00Z', '2026-03-02T08:00:17.999Z', 0, 0],
      [
        '2 h 30 min 18 s minus a 30 min break = 2.005 h',
        '2026-03-02T08:00:00Z',
        '2026-03-02T10:30:18Z',
        30,
        2.01,
      ],
      ['a break leaving 0.345 h', '2026-03-02T08:00:00Z', '2026-03-02T09:20:42Z', 60, 0.35],
    ])('total_hours for %s', async (_label, checkIn, checkOut, breakMinutes, expected) => {
      const w = await world()
      const session = await createSession(w, {
        check_in: { time: checkIn },
        check_out: { time: checkOut },
        break_minutes: breakMinutes,
      })
      expect(session.total_hours).toBe(expected)
      expect((await w.api.get<Session>(`/v1/sessions/${session.id}`)).body.total_hours).toBe(expected)
      const events = await newEvents(w)
      expect(events.map((e) => e.type)).toEqual(CREATED)
      expect(events.map((e) => e.data.object.total_hours)).toEqual([expected, expected])
    })

    it('reports the DST day in UTC', async () => {
      const w = await world()
      const session = await createSession(w, {
        check_in: { time: '2026-03-29T00:30:00+01:00' },
        check_out: { time: '2026-03-29T08:30:00+02:00' },
      })
      expect(session.check_in.time).toBe('2026-03-28T23:30:00.000Z')
      expect(session.check_out?.time).toBe('2026-03-29T06:30:00.000Z')
    })
  })

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

  describe('revisions and deletion', () => {
    it('keeps every revision (created, updated, deleted) with the key and the snapshots, after the delete too', async () => {
      const w = await world()
      const otherKey = await t.key({ account: w.name })
      const other = t.client(otherKey.secret)
      const session = await createSession(w)
      const first = (await w.api.patch<Session>(`/v1/sessions/${session.id}`, { break_minutes: 30 })).body
      const second = (await other.patch<Session>(`/v1/sessions/${session.id}`, { notes: 'checked' })).body

      const res = await other.delete(`/v1/sessions/${session.id}`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ object: 'session', id: session.id, deleted: true })

      expectError(await w.api.get(`/v1/sessions/${session.id}`), 404, 'not_found')
      const revisions = await revisionsOf(w.api, session.id)
      expect(revisions.has_more).toBe(false)
      expect(revisions.next_cursor).toBeNull()
      expect(revisions.data.map((r) => [r.action, r.key_id])).toEqual([
        ['deleted', otherKey.id],
        ['updated', otherKey.id],
        ['updated', w.key.id],
        ['created', w.key.id],
      ])
      const [deleted, updated2, updated1, creation] = revisions.data
      for (const revision of revisions.data) {
        expect(revision.object).toBe('session_revision')
        expect(revision.id).toMatch(/^rev_[0-9A-Z]{26}$/)
        expect(revision.session_id).toBe(session.id)
        expect(revision.livemode).toBe(false)
        expect(revision.created).toMatch(ISO_MS)
      }
      expect([creation?.before, creation?.after]).toEqual([null, session])
      expect([updated1?.before, updated1?.after]).toEqual([session, first])
      expect([updated2?.before, updated2?.after]).toEqual([first, second])
      expect([deleted?.before, deleted?.after]).toEqual([second, null])

      const page = await revisionsOf(w.api, session.id, '?limit=3')
      expect(page.data).toEqual(revisions.data.slice(0, 3))
      expect(page.has_more).toBe(true)
      const rest = await revisionsOf(
        w.api,
        session.id,
        `?limit=3&cursor=${encodeURIComponent(page.next_cursor ?? '')}`,
      )
      expect(rest.data).toEqual(revisions.data.slice(3))

      const events = await newEvents(w)
      expect(events.map((e) => e.type)).toEqual([...CREATED, ...EDITED, ...EDITED, 'session.deleted'])
      expect(events[6]?.data.object).toEqual(second)
    })

    it('soft-deletes: gone from GET, PATCH, DELETE and the list, the row kept with deleted_at', async () => {
      const w = await world()
      const kept = await createSession(w)
      const session = await createSession(w, {
        check_in: { time: '2026-03-03T08:00:00Z' },
        check_out: { time: '2026-03-03T09:00:00Z' },
      })
      const before = Date.now()
      expect((await w.api.delete(`/v1/sessions/${session.id}`)).status).toBe(200)

      expectError(await w.api.get(`/v1/sessions/${session.id}`), 404, 'not_found')
      expectError(await w.api.patch(`/v1/sessions/${session.id}`, { notes: 'x' }), 404, 'not_found')
      expectError(await w.api.delete(`/v1/sessions/${session.id}`), 404, 'not_found')
      expect((await w.api.get<List<Session>>('/v1/sessions')).body.data).toEqual([kept])

      const row = await t.db
        .selectFrom('sessions')
        .selectAll()
        .where('id', '=', session.id)
        .executeTakeFirst()
      expect(row).toBeDefined()
      expect(Number(row?.deleted_at)).toBeGreaterThanOrEqual(before)
      expect(await newEventTypes(w)).toEqual([...CREATED, ...CREATED, 'session.deleted'])
      expect((await revisionsOf(w.api, session.id)).data.map((r) => r.action)).toEqual(['deleted', 'created'])
    })

    it("answers 404 on delete and revisions for an unknown id, another account's session and the other mode's", async () => {
      const w = await world()
      const session = await createSession(w)
      const stranger = t.client((await t.key({ account: uniq('acct') })).secret)
      const live = t.client((await t.key({ account: w.name, mode: 'live' })).secret)
      expectError(await w.api.delete('/v1/sessions/ses_nope'), 404, 'not_found')
      expectError(await stranger.delete(`/v1/sessions/${session.id}`), 404, 'not_found')
      expectError(await live.delete(`/v1/sessions/${session.id}`), 404, 'not_found')
      expectError(await w.api.get('/v1/sessions/ses_nope/revisions'), 404, 'not_found')
      expectError(await stranger.get(`/v1/sessions/${session.id}/revisions`), 404, 'not_found')
      expectError(await live.get(`/v1/sessions/${session.id}/revisions`), 404, 'not_found')
      expect((await w.api.get(`/v1/sessions/${session.id}`)).body).toEqual(session)
      expect(await newEventTypes(w)).toEqual(CREATED)
    })
  })

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
