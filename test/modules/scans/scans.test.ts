import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isUniqueViolation } from '../../../src/db/connection.js'
import type { SessionRow } from '../../../src/modules/sessions/repository.js'
import { type ApiClient, type ApiResponse, buildTestApp, type TestApp } from '../../helpers/app.js'
import {
  type Device,
  expectError,
  ISO_MS,
  type List,
  type Operator,
  type Session,
  type SessionRevision,
  uniq,
} from '../../helpers/assertions.js'
import { dialect } from '../../helpers/database.js'
import { eventsOf } from '../../helpers/fixtures.js'

interface Scan {
  object: 'scan'
  id: string
  device_id: string
  operator_id: string
  operator_ident: string
  time: string
  direction: 'auto' | 'in' | 'out'
  result: 'checked_in' | 'checked_out' | 'flagged'
  flag_reason: string | null
  session_id: string | null
  livemode: boolean
  created: string
}

const SCAN_KEYS = [
  'created',
  'device_id',
  'direction',
  'flag_reason',
  'id',
  'livemode',
  'object',
  'operator_id',
  'operator_ident',
  'result',
  'session_id',
  'time',
]

/** The day every scenario happens on; `at('08:00')` is 08:00 UTC that day. */
const DAY = '2026-03-02'
const at = (hhmmss: string, day = DAY) => `${day}T${hhmmss.length === 5 ? `${hhmmss}:00` : hhmmss}.000Z`
const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString()
const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

describe('scans over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t?.close())

  /**
   * An account of its own with two locations and two devices (each at its location) and a
   * helper to make operators; `mark()` remembers the last event so a test can read only its own.
   */
  async function world(mode: 'test' | 'live' = 'test') {
    const key = await t.key({ account: uniq('acct'), mode })
    const api = t.client(key.secret)
    const created = async <T>(path: string, body: Record<string, unknown>) => {
      const res = await api.post<T>(path, body)
      expect(res.status).toBe(201)
      return res.body
    }
    const plantA = await created<{ id: string }>('/v1/locations', { name: 'Plant A' })
    const plantB = await created<{ id: string }>('/v1/locations', { name: 'Plant B' })
    const gateA = await created<Device>('/v1/devices', { code: uniq('gate-a'), location_id: plantA.id })
    const gateB = await created<Device>('/v1/devices', { code: uniq('gate-b'), location_id: plantB.id })
    return {
      key,
      api,
      accountId: key.account_id,
      plantA,
      plantB,
      gateA,
      gateB,
      operator: (ident = uniq('op')) => created<Operator>('/v1/operators', { ident }),
    }
  }

  async function scan(api: ApiClient, body: Record<string, unknown>): Promise<Scan> {
    const res = await api.post<Scan>('/v1/scans', body)
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body
  }

  async function session(api: ApiClient, id: string): Promise<Session> {
    const res = await api.get<Session>(`/v1/sessions/${id}`)
    expect(res.status).toBe(200)
    return res.body
  }

  async function revisions(api: ApiClient, sessionId: string): Promise<SessionRevision[]> {
    const res = await api.get<List<SessionRevision>>(`/v1/sessions/${sessionId}/revisions`)
    expect(res.status).toBe(200)
    return res.body.data
  }

  async function lastEventId(accountId: string): Promise<string> {
    const all = await eventsOf(t, accountId)
    return all[all.length - 1]?.id ?? ''
  }

  async function sessionRows(accountId: string, operatorId?: string): Promise<SessionRow[]> {
    return t.db
      .selectFrom('sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .$if(operatorId !== undefined, (q) => q.where('operator_id', '=', operatorId ?? ''))
      .orderBy('check_in_at')
      .orderBy('id')
      .execute()
  }

  async function scanCount(accountId: string): Promise<number> {
    const rows = await t.db.selectFrom('scans').select('id').where('account_id', '=', accountId).execute()
    return rows.length
  }

  describe('check-in and check-out', () => {
    it('a first scan checks the operator in: the scan, the open session, its revision and one event', async () => {
      const w = await world()
      const alice = await w.operator()
      const mark = await lastEventId(w.accountId)

      // Given with an offset, answered in UTC.
      const res = await w.api.post<Scan>('/v1/scans', {
        device_id: w.gateA.code,
        operator_ident: alice.ident,
        time: '2026-03-02T09:00:00+01:00',
      })
      expect(res.status).toBe(201)
      const s = res.body
      expect(Object.keys(s).sort()).toEqual(SCAN_KEYS)
      expect(s.object).toBe('scan')
      expect(s.id).toMatch(/^scn_[0-9A-Z]{26}$/)
      expect(s).toMatchObject({
        device_id: w.gateA.code,
        operator_id: alice.id,
        operator_ident: alice.ident,
        time: at('08:00'),
        direction: 'auto',
        result: 'checked_in',
        flag_reason: null,
        livemode: false,
      })
      expect(s.session_id).toMatch(/^ses_[0-9A-Z]{26}$/)
      expect(s.created).toMatch(ISO_MS)

      const fetched = await w.api.get<Scan>(`/v1/scans/${s.id}`)
      expect(fetched.status).toBe(200)
      expect(fetched.body).toEqual(s)

      const open = await session(w.api, s.session_id ?? '')
      expect(open).toMatchObject({
        operator_id: alice.id,
        operator_ident: alice.ident,
        device_id: w.gateA.code,
        location_id: w.plantA.id,
        check_in: { time: at('08:00') },
        check_out: null,
        break_minutes: 0,
        total_hours: null,
        is_flagged: false,
        flag_reason: null,
        source: 'scan',
        status: 'open',
        livemode: false,
      })

      const revs = await revisions(w.api, open.id)
      expect(revs.map((r) => r.action)).toEqual(['checked_in'])
      expect(revs[0]?.before).toBeNull()
      expect(revs[0]?.after).toEqual(open)
      expect(revs[0]?.key_id).toBe(w.key.id)

      const evts = await eventsOf(t, w.accountId, undefined, mark)
      expect(evts.map((e) => e.type)).toEqual(['scan.checked_in'])
      expect(evts[0]?.data.object).toEqual(s)
    })

    it('the next scan checks the operator out: the session completes with its hours, then session.completed', async () => {
      const w = await world()
      const alice = await w.operator()
      const mark = await lastEventId(w.accountId)
      const checkIn = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') })
      const checkOut = await scan(w.api, {
        device_id: w.gateB.code,
        operator_id: alice.id,
        time: at('16:30'),
      })

      expect(checkOut).toMatchObject({
        result: 'checked_out',
        flag_reason: null,
        session_id: checkIn.session_id,
        device_id: w.gateB.code,
        time: at('16:30'),
      })
      const done = await session(w.api, checkIn.session_id ?? '')
      expect(done).toMatchObject({
        check_in: { time: at('08:00') },
        check_out: { time: at('16:30') },
        total_hours: 8.5,
        status: 'completed',
        is_flagged: false,
        flag_reason: null,
        source: 'scan',
        // The session keeps the device and location it was opened at.
        device_id: w.gateA.code,
        location_id: w.plantA.id,
      })

      const revs = await revisions(w.api, done.id)
      expect(revs.map((r) => r.action)).toEqual(['checked_out', 'checked_in'])
      expect(revs[0]?.before).toMatchObject({ status: 'open', check_out: null, total_hours: null })
      expect(revs[0]?.after).toEqual(done)

      const evts = await eventsOf(t, w.accountId, undefined, mark)
      expect(evts.map((e) => e.type)).toEqual(['scan.checked_in', 'scan.checked_out', 'session.completed'])
      expect(evts[1]?.data.object).toEqual(checkOut)
      expect(evts[2]?.data.object).toEqual(done)

      // A third scan opens a new session: auto toggles.
      const again = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('17:00') })
      expect(again.result).toBe('checked_in')
      expect(again.session_id).not.toBe(checkIn.session_id)
      expect((await sessionRows(w.accountId, alice.id)).map((r) => r.status)).toEqual(['completed', 'open'])
    })

    it('a scan without a time is stamped now', async () => {
      const w = await world()
      const alice = await w.operator()
      const before = Date.now()
      const s = await scan(w.api, { device_id: w.gateA.code, operator_ident: alice.ident })
      const after = Date.now()
      expect(Date.parse(s.time)).toBeGreaterThanOrEqual(before)
      expect(Date.parse(s.time)).toBeLessThanOrEqual(after)
      expect(s.result).toBe('checked_in')
      expect((await session(w.api, s.session_id ?? '')).check_in.time).toBe(s.time)
    })

    it('a device without a location opens a session without one', async () => {
      const w = await world()
      const alice = await w.operator()
      const kiosk = await w.api.post<Device>('/v1/devices', { code: uniq('kiosk') })
      expect(kiosk.status).toBe(201)
      const s = await scan(w.api, { device_id: kiosk.body.code, operator_id: alice.id, time: at('08:00') })
      expect((await session(w.api, s.session_id ?? '')).location_id).toBeNull()
    })

    it('direction in and out force the direction when they agree with the state', async () => {
      const w = await world()
      const alice = await w.operator()
      const checkIn = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: at('08:00'),
        direction: 'in',
      })
      expect(checkIn).toMatchObject({ result: 'checked_in', direction: 'in', flag_reason: null })
      const checkOut = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: at('12:00'),
        direction: 'out',
      })
      expect(checkOut).toMatchObject({
        result: 'checked_out',
        direction: 'out',
        session_id: checkIn.session_id,
      })
      expect((await session(w.api, checkIn.session_id ?? '')).total_hours).toBe(4)
    })
  })

  describe('flagged scans change no session', () => {
    it('direction out with no open session: no_open_session, and scan.flagged is the only event', async () => {
      const w = await world()
      const alice = await w.operator()
      const mark = await lastEventId(w.accountId)
      const s = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: at('08:00'),
        direction: 'out',
      })
      expect(s).toMatchObject({
        result: 'flagged',
        flag_reason: 'no_open_session',
        session_id: null,
        direction: 'out',
      })
      expect(await sessionRows(w.accountId)).toEqual([])
      const evts = await eventsOf(t, w.accountId, undefined, mark)
      expect(evts.map((e) => e.type)).toEqual(['scan.flagged'])
      expect(evts[0]?.data.object).toEqual(s)
      // Stored, and retrievable like any scan.
      expect((await w.api.get<Scan>(`/v1/scans/${s.id}`)).body).toEqual(s)
    })

    it('direction in with an open session: already_checked_in, the session untouched', async () => {
      const w = await world()
      const alice = await w.operator()
      const checkIn = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') })
      const before = await session(w.api, checkIn.session_id ?? '')
      const mark = await lastEventId(w.accountId)

      const s = await scan(w.api, {
        device_id: w.gateB.code,
        operator_id: alice.id,
        time: at('10:00'),
        direction: 'in',
      })
      expect(s).toMatchObject({ result: 'flagged', flag_reason: 'already_checked_in', session_id: null })
      expect(await session(w.api, before.id)).toEqual(before)
      expect((await revisions(w.api, before.id)).map((r) => r.action)).toEqual(['checked_in'])
      expect((await eventsOf(t, w.accountId, undefined, mark)).map((e) => e.type)).toEqual(['scan.flagged'])
      expect(await sessionRows(w.accountId)).toHaveLength(1)
    })

    it('an inactive operator: inactive_operator, even with a session open', async () => {
      const w = await world()
      const alice = await w.operator()
      const bob = await w.operator()
      const checkIn = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') })
      expect((await w.api.delete(`/v1/operators/${alice.id}`)).status).toBe(200)
      expect((await w.api.patch(`/v1/operators/${bob.id}`, { is_active: false })).status).toBe(200)
      const before = await session(w.api, checkIn.session_id ?? '')
      const mark = await lastEventId(w.accountId)

      const out = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('16:00') })
      expect(out).toMatchObject({ result: 'flagged', flag_reason: 'inactive_operator', session_id: null })
      const first = await scan(w.api, {
        device_id: w.gateA.code,
        operator_ident: bob.ident,
        time: at('16:00'),
      })
      expect(first).toMatchObject({ result: 'flagged', flag_reason: 'inactive_operator', session_id: null })
      // Even 17 hours on, an inactive operator's scan closes nothing.
      const late = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: plus(at('08:00'), 17 * HOUR),
      })
      expect(late.flag_reason).toBe('inactive_operator')

      expect(await session(w.api, before.id)).toEqual(before)
      expect(await sessionRows(w.accountId, bob.id)).toEqual([])
      expect((await eventsOf(t, w.accountId, undefined, mark)).map((e) => e.type)).toEqual([
        'scan.flagged',
        'scan.flagged',
        'scan.flagged',
      ])

      // Reactivated, the operator scans normally again.
      expect((await w.api.patch(`/v1/operators/${alice.id}`, { is_active: true })).status).toBe(200)
      const back = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('17:00') })
      expect(back).toMatchObject({ result: 'checked_out', session_id: before.id })
    })

    it('a check-out not after the check-in: invalid_time_range, the session stays open', async () => {
      const w = await world()
      const alice = await w.operator()
      const checkIn = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('10:00') })
      const before = await session(w.api, checkIn.session_id ?? '')
      const mark = await lastEventId(w.accountId)

      for (const direction of ['auto', 'out'] as const) {
        const s = await scan(w.api, {
          device_id: w.gateA.code,
          operator_id: alice.id,
          time: at('09:00'),
          direction,
        })
        expect(s).toMatchObject({ result: 'flagged', flag_reason: 'invalid_time_range', session_id: null })
      }
      expect(await session(w.api, before.id)).toEqual(before)
      expect((await eventsOf(t, w.accountId, undefined, mark)).map((e) => e.type)).toEqual([
        'scan.flagged',
        'scan.flagged',
      ])

      // The flagged scans do not stop a later, valid check-out.
      const out = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('11:00') })
      expect(out).toMatchObject({ result: 'checked_out', session_id: before.id })
    })
  })

  describe('the duplicate window (60 s either side of the last accepted scan)', () => {
    it('59 s after is a duplicate; 60 s after is accepted', async () => {
      const w = await world()
      const alice = await w.operator()
      const checkIn = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: at('08:00:00'),
      })
      const before = await session(w.api, checkIn.session_id ?? '')
      const mark = await lastEventId(w.accountId)

      const dup = await scan(w.api, { device_id: w.gateB.code, operator_id: alice.id, time: at('08:00:59') })
      expect(dup).toMatchObject({ result: 'flagged', flag_reason: 'duplicate_scan', session_id: null })
      expect(await session(w.api, before.id)).toEqual(before)
      expect((await eventsOf(t, w.accountId, undefined, mark)).map((e) => e.type)).toEqual(['scan.flagged'])

      const ok = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:01:00') })
      expect(ok).toMatchObject({ result: 'checked_out', flag_reason: null, session_id: before.id })
      // One minute worked: 1/60 h, rounded half-up to 0.02.
      expect((await session(w.api, before.id)).total_hours).toBe(0.02)
    })

    it('also covers the time before: 30 s before is a duplicate, 60 s before is not', async () => {
      const w = await world()
      const alice = await w.operator()
      const checkIn = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: at('08:00:00'),
      })

      const earlier = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: at('07:59:30'),
      })
      expect(earlier).toMatchObject({ result: 'flagged', flag_reason: 'duplicate_scan' })

      // Outside the window, the same scan is judged on its merits: it would check out before the check-in.
      const outside = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: at('07:59:00'),
      })
      expect(outside).toMatchObject({ result: 'flagged', flag_reason: 'invalid_time_range' })
      expect((await session(w.api, checkIn.session_id ?? '')).status).toBe('open')
    })

    it('flagged scans do not extend the window: it runs from the last accepted scan', async () => {
      const w = await world()
      const alice = await w.operator()
      const checkIn = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: at('08:00:00'),
      })
      const dup = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00:50') })
      expect(dup.flag_reason).toBe('duplicate_scan')
      // 50 s after the flagged scan but 100 s after the accepted one: accepted.
      const out = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:01:40') })
      expect(out).toMatchObject({ result: 'checked_out', session_id: checkIn.session_id })
      // And the window now runs from the check-out.
      const dup2 = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:02:30') })
      expect(dup2.flag_reason).toBe('duplicate_scan')
      const inAgain = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: at('08:02:40'),
      })
      expect(inAgain.result).toBe('checked_in')
    })

    it('the window is per operator', async () => {
      const w = await world()
      const alice = await w.operator()
      const bob = await w.operator()
      const a = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') })
      const b = await scan(w.api, { device_id: w.gateA.code, operator_id: bob.id, time: at('08:00') })
      expect([a.result, b.result]).toEqual(['checked_in', 'checked_in'])
      expect(a.session_id).not.toBe(b.session_id)
    })
  })

  describe('the 16-hour rule', () => {
    it('a session open for more than 16 h is closed as flagged by the next scan, which then checks in', async () => {
      const w = await world()
      const dave = await w.operator()
      const first = await scan(w.api, { device_id: w.gateB.code, operator_id: dave.id, time: at('08:03') })
      const open = await session(w.api, first.session_id ?? '')
      const mark = await lastEventId(w.accountId)

      const next = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: dave.id,
        time: plus(at('08:03'), 17 * HOUR),
      })
      expect(next).toMatchObject({ result: 'checked_in', flag_reason: null, time: at('01:03', '2026-03-03') })
      expect(next.session_id).not.toBe(open.id)

      const closed = await session(w.api, open.id)
      expect(closed).toMatchObject({
        status: 'completed',
        check_in: { time: at('08:03') },
        check_out: null,
        total_hours: null,
        is_flagged: true,
        flag_reason: 'max_shift_exceeded',
        source: 'scan',
      })
      const revs = await revisions(w.api, open.id)
      expect(revs.map((r) => r.action)).toEqual(['closed', 'checked_in'])
      expect(revs[0]?.before).toEqual(open)
      expect(revs[0]?.after).toEqual(closed)

      const fresh = await session(w.api, next.session_id ?? '')
      expect(fresh).toMatchObject({
        status: 'open',
        check_in: { time: next.time },
        is_flagged: false,
        location_id: w.plantA.id,
      })

      const evts = await eventsOf(t, w.accountId, undefined, mark)
      expect(evts.map((e) => e.type)).toEqual(['session.flagged', 'scan.checked_in'])
      expect(evts[0]?.data.object).toEqual(closed)
      expect(evts[0]?.data.previous_attributes).toEqual({
        status: 'open',
        is_flagged: false,
        flag_reason: null,
      })
      expect(evts[1]?.data.object).toEqual(next)
      expect((await sessionRows(w.accountId, dave.id)).filter((r) => r.status === 'open')).toHaveLength(1)
    })

    it('exactly 16 h is not over the limit: a normal check-out', async () => {
      const w = await world()
      const alice = await w.operator()
      const first = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('06:00') })
      const out = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('22:00') })
      expect(out).toMatchObject({ result: 'checked_out', session_id: first.session_id })
      expect(await session(w.api, first.session_id ?? '')).toMatchObject({
        total_hours: 16,
        is_flagged: false,
        flag_reason: null,
      })
    })

    it('an explicit out more than 16 h later closes the session and reports it: max_shift_exceeded', async () => {
      const w = await world()
      const alice = await w.operator()
      const first = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('06:00') })
      const mark = await lastEventId(w.accountId)
      const out = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: plus(at('06:00'), 17 * HOUR),
        direction: 'out',
      })
      expect(out).toMatchObject({
        result: 'flagged',
        flag_reason: 'max_shift_exceeded',
        session_id: first.session_id,
      })
      const closed = await session(w.api, first.session_id ?? '')
      expect(closed).toMatchObject({
        status: 'completed',
        check_out: null,
        flag_reason: 'max_shift_exceeded',
      })
      const evts = await eventsOf(t, w.accountId, undefined, mark)
      expect(evts.map((e) => e.type)).toEqual(['session.flagged', 'scan.flagged'])
      expect((await sessionRows(w.accountId, alice.id)).filter((r) => r.status === 'open')).toHaveLength(0)
    })

    it('one minute over 16 h closes the session', async () => {
      const w = await world()
      const alice = await w.operator()
      const first = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('06:00') })
      const next = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('22:01') })
      expect(next.result).toBe('checked_in')
      expect(await session(w.api, first.session_id ?? '')).toMatchObject({
        status: 'completed',
        check_out: null,
        flag_reason: 'max_shift_exceeded',
      })
    })
  })

  describe('refused scans', () => {
    it('an unknown device or operator is 422 and stores nothing', async () => {
      const w = await world()
      const alice = await w.operator()
      const mark = await lastEventId(w.accountId)
      expectError(
        await w.api.post('/v1/scans', { device_id: 'no-such-gate', operator_id: alice.id }),
        422,
        'validation_error',
        'unknown_device',
        'device_id',
      )
      expectError(
        await w.api.post('/v1/scans', { device_id: w.gateA.code, operator_ident: 'nobody' }),
        422,
        'validation_error',
        'unknown_operator',
        'operator_ident',
      )
      expectError(
        await w.api.post('/v1/scans', { device_id: w.gateA.code, operator_id: 'op_nope' }),
        422,
        'validation_error',
        'unknown_operator',
        'operator_id',
      )
      expectError(
        await w.api.post('/v1/scans', {
          device_id: w.gateA.code,
          operator_id: alice.id,
          time: '2026-03-02T08:00:00',
        }),
        422,
        'validation_error',
        'invalid_timestamp',
        'time',
      )
      expectError(
        await w.api.post('/v1/scans', {
          device_id: w.gateA.code,
          operator_id: alice.id,
          direction: 'sideways',
        }),
        422,
        'validation_error',
      )
      expect(await scanCount(w.accountId)).toBe(0)
      expect(await sessionRows(w.accountId)).toEqual([])
      expect(await eventsOf(t, w.accountId, undefined, mark)).toEqual([])
    })

    it('a live key scanning a test device is cross_mode_reference; live scans are livemode', async () => {
      const w = await world()
      const live = t.client(
        (await t.key({ account: (await accountName(w.accountId)) ?? '', mode: 'live' })).secret,
      )
      const liveOp = await live.post<Operator>('/v1/operators', { ident: uniq('live-op') })
      expect(liveOp.status).toBe(201)
      expectError(
        await live.post('/v1/scans', { device_id: w.gateA.code, operator_id: liveOp.body.id }),
        422,
        'validation_error',
        'cross_mode_reference',
        'device_id',
      )
      const liveGate = await live.post<Device>('/v1/devices', { code: uniq('live-gate') })
      const s = await scan(live, { device_id: liveGate.body.code, operator_id: liveOp.body.id })
      expect(s.livemode).toBe(true)
      expect((await session(live, s.session_id ?? '')).livemode).toBe(true)
      // Not visible to the test key.
      expect((await w.api.get(`/v1/scans/${s.id}`)).status).toBe(404)
    })
  })

  async function accountName(accountId: string) {
    const row = await t.db
      .selectFrom('accounts')
      .select('name')
      .where('id', '=', accountId)
      .executeTakeFirst()
    return row?.name
  }

  describe('listing and retrieval', () => {
    it('lists newest first, filters by operator, device and result, and pages', async () => {
      const w = await world()
      const alice = await w.operator()
      const bob = await w.operator()
      const s1 = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') })
      const s2 = await scan(w.api, { device_id: w.gateB.code, operator_id: bob.id, time: at('08:00') })
      const s3 = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00:10') })
      const s4 = await scan(w.api, { device_id: w.gateB.code, operator_id: alice.id, time: at('12:00') })
      const s5 = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: bob.id,
        time: at('12:00'),
        direction: 'in',
      })
      const ids = (res: ApiResponse<List<Scan>>) => res.body.data.map((s) => s.id)

      const all = await w.api.get<List<Scan>>('/v1/scans')
      expect(all.status).toBe(200)
      expect(ids(all)).toEqual([s5, s4, s3, s2, s1].map((s) => s.id))
      expect(all.body.data[0]).toEqual(s5)

      expect(ids(await w.api.get<List<Scan>>(`/v1/scans?operator_id=${alice.id}`))).toEqual(
        [s4, s3, s1].map((s) => s.id),
      )
      expect(ids(await w.api.get<List<Scan>>(`/v1/scans?device_id=${w.gateB.code}`))).toEqual(
        [s4, s2].map((s) => s.id),
      )
      expect(ids(await w.api.get<List<Scan>>('/v1/scans?result=flagged'))).toEqual([s5, s3].map((s) => s.id))
      expect(ids(await w.api.get<List<Scan>>('/v1/scans?result=checked_in'))).toEqual(
        [s2, s1].map((s) => s.id),
      )
      expect(
        ids(await w.api.get<List<Scan>>(`/v1/scans?result=checked_out&operator_id=${alice.id}`)),
      ).toEqual([s4.id])
      expect(
        (await w.api.get<List<Scan>>(`/v1/scans?operator_id=${alice.id}&device_id=${w.gateB.code}`)).body
          .data,
      ).toEqual([s4])

      const page1 = await w.api.get<List<Scan>>('/v1/scans?limit=2')
      expect(ids(page1)).toEqual([s5.id, s4.id])
      expect(page1.body.has_more).toBe(true)
      const page2 = await w.api.get<List<Scan>>(`/v1/scans?limit=2&cursor=${page1.body.next_cursor}`)
      expect(ids(page2)).toEqual([s3.id, s2.id])
      const page3 = await w.api.get<List<Scan>>(`/v1/scans?limit=2&cursor=${page2.body.next_cursor}`)
      expect(ids(page3)).toEqual([s1.id])
      expect(page3.body).toMatchObject({ has_more: false, next_cursor: null })

      expectError(await w.api.get('/v1/scans?result=maybe'), 422, 'validation_error')
    })

    it('another account sees none of the scans, and an unknown id is 404', async () => {
      const w = await world()
      const other = await world()
      const alice = await w.operator()
      const s = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') })
      expectError(await other.api.get(`/v1/scans/${s.id}`), 404, 'not_found')
      expect((await other.api.get<List<Scan>>('/v1/scans')).body.data).toEqual([])
      expectError(await w.api.get('/v1/scans/scn_00000000000000000000000000'), 404, 'not_found')
    })
  })

  it('a full day of four operators at two devices', async () => {
    const w = await world()
    const [alice, bob, carol, dave] = [
      await w.operator(),
      await w.operator(),
      await w.operator(),
      await w.operator(),
    ]
    if (!alice || !bob || !carol || !dave) throw new Error('operators missing')
    const mark = await lastEventId(w.accountId)
    const A = w.gateA.code
    const B = w.gateB.code
    const NEXT_DAY = '2026-03-03'

    const plan: Array<[Operator, string, string, Scan['result'], string | null]> = [
      [alice, A, at('07:58'), 'checked_in', null],
      [bob, B, at('08:00'), 'checked_in', null],
      [carol, A, at('08:01'), 'checked_in', null],
      [dave, B, at('08:03'), 'checked_in', null],
      [alice, A, at('12:00'), 'checked_out', null],
      [bob, B, at('12:02'), 'checked_out', null],
      [bob, B, at('12:02:20'), 'flagged', 'duplicate_scan'],
      [carol, A, at('12:30'), 'checked_out', null],
      [alice, A, at('12:45'), 'checked_in', null],
      [bob, B, at('13:00'), 'checked_in', null],
      [carol, B, at('13:05'), 'checked_in', null],
      [alice, A, at('16:30'), 'checked_out', null],
      [bob, A, at('17:00'), 'checked_out', null],
      [carol, B, at('17:15'), 'checked_out', null],
      // Dave forgot to check out; he comes back 17 hours after checking in.
      [dave, A, at('01:03', NEXT_DAY), 'checked_in', null],
    ]
    const scans: Scan[] = []
    for (const [operator, device, time, result, reason] of plan) {
      const s = await scan(w.api, { device_id: device, operator_ident: operator.ident, time })
      expect([s.result, s.flag_reason], `${operator.ident} at ${time}`).toEqual([result, reason])
      scans.push(s)
    }

    const rows = await sessionRows(w.accountId)
    const byOperator = (op: Operator) =>
      rows
        .filter((r) => r.operator_id === op.id)
        .map((r) => [
          new Date(r.check_in_at).toISOString(),
          r.check_out_at === null ? null : new Date(r.check_out_at).toISOString(),
          r.status,
          r.is_flagged,
          r.flag_reason,
          r.location_id,
        ])
    const [pA, pB] = [w.plantA.id, w.plantB.id]
    expect(byOperator(alice)).toEqual([
      [at('07:58'), at('12:00'), 'completed', 0, null, pA],
      [at('12:45'), at('16:30'), 'completed', 0, null, pA],
    ])
    expect(byOperator(bob)).toEqual([
      [at('08:00'), at('12:02'), 'completed', 0, null, pB],
      [at('13:00'), at('17:00'), 'completed', 0, null, pB],
    ])
    expect(byOperator(carol)).toEqual([
      [at('08:01'), at('12:30'), 'completed', 0, null, pA],
      [at('13:05'), at('17:15'), 'completed', 0, null, pB],
    ])
    expect(byOperator(dave)).toEqual([
      [at('08:03'), null, 'completed', 1, 'max_shift_exceeded', pB],
      [at('01:03', NEXT_DAY), null, 'open', 0, null, pA],
    ])
    expect(rows).toHaveLength(8)
    expect(rows.every((r) => r.source === 'scan')).toBe(true)

    // total_hours through the API: 4h02 → 4.03, 3h45 → 3.75, 4h29 → 4.48, 4h10 → 4.17.
    const hours = async (op: Operator) => {
      const res = await w.api.get<List<Session>>(`/v1/sessions?operator_id=${op.id}`)
      return res.body.data.map((s) => s.total_hours).reverse()
    }
    expect(await hours(alice)).toEqual([4.03, 3.75])
    expect(await hours(bob)).toEqual([4.03, 4])
    expect(await hours(carol)).toEqual([4.48, 4.17])
    expect(await hours(dave)).toEqual([null, null])

    const evts = await eventsOf(t, w.accountId, undefined, mark)
    expect(evts.map((e) => e.type)).toEqual([
      'scan.checked_in', // alice in
      'scan.checked_in', // bob in
      'scan.checked_in', // carol in
      'scan.checked_in', // dave in
      'scan.checked_out', // alice lunch
      'session.completed',
      'scan.checked_out', // bob lunch
      'session.completed',
      'scan.flagged', // bob's double tap
      'scan.checked_out', // carol lunch
      'session.completed',
      'scan.checked_in', // alice back
      'scan.checked_in', // bob back
      'scan.checked_in', // carol back
      'scan.checked_out', // alice leaves
      'session.completed',
      'scan.checked_out', // bob leaves
      'session.completed',
      'scan.checked_out', // carol leaves
      'session.completed',
      'session.flagged', // dave's forgotten session closed
      'scan.checked_in', // dave in the next day
    ])
    // Each scan event carries its scan, in order; each session event the session the scan touched.
    expect(evts.filter((e) => e.type.startsWith('scan.')).map((e) => e.data.object)).toEqual(scans)
    const sessionEvents = evts.filter((e) => e.type.startsWith('session.')).map((e) => e.data.object.id)
    const closedBy = (i: number) => scans[i]?.session_id
    expect(sessionEvents).toEqual([
      closedBy(4),
      closedBy(5),
      closedBy(7),
      closedBy(11),
      closedBy(12),
      closedBy(13),
      scans[3]?.session_id,
    ])
  })

  describe('concurrency', () => {
    it('10 simultaneous scans of one operator at one time: exactly one check-in and one open session', async () => {
      const w = await world()
      const alice = await w.operator()
      const mark = await lastEventId(w.accountId)
      const time = at('08:00')
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          w.api.post<Scan>('/v1/scans', {
            device_id: i % 2 === 0 ? w.gateA.code : w.gateB.code,
            operator_id: alice.id,
            time,
          }),
        ),
      )
      const statuses = responses.map((r) => r.status)
      expect(
        statuses.every((s) => s === 201 || s === 409),
        JSON.stringify(statuses),
      ).toBe(true)
      for (const res of responses.filter((r) => r.status === 409)) {
        expectError(res, 409, 'conflict', 'open_session_exists')
      }
      const accepted = responses.filter((r) => r.status === 201).map((r) => r.body)
      expect(accepted.filter((s) => s.result === 'checked_in')).toHaveLength(1)
      expect(
        accepted.filter((s) => s.result !== 'checked_in').every((s) => s.flag_reason === 'duplicate_scan'),
      ).toBe(true)

      const rows = await sessionRows(w.accountId, alice.id)
      expect(rows).toHaveLength(1)
      expect(rows[0]?.status).toBe('open')
      const types = (await eventsOf(t, w.accountId, undefined, mark)).map((e) => e.type)
      expect(types.filter((x) => x === 'scan.checked_in')).toHaveLength(1)
      expect(types.filter((x) => x === 'scan.flagged')).toHaveLength(accepted.length - 1)
      expect(types).toHaveLength(accepted.length)
    })

    it('simultaneous scans at different times keep one open session and a consistent history', async () => {
      const w = await world()
      const alice = await w.operator()
      const responses = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          w.api.post<Scan>('/v1/scans', {
            device_id: w.gateA.code,
            operator_id: alice.id,
            time: plus(at('08:00'), i * 5 * MINUTE),
          }),
        ),
      )
      expect(responses.every((r) => r.status === 201 || r.status === 409)).toBe(true)
      const accepted = responses.filter((r) => r.status === 201).map((r) => r.body)
      const rows = await sessionRows(w.accountId, alice.id)
      expect(rows.filter((r) => r.status === 'open').length).toBeLessThanOrEqual(1)
      expect(rows).toHaveLength(accepted.filter((s) => s.result === 'checked_in').length)
      expect(rows.filter((r) => r.check_out_at !== null)).toHaveLength(
        accepted.filter((s) => s.result === 'checked_out').length,
      )
      for (const r of rows) if (r.check_out_at !== null) expect(r.check_out_at).toBeGreaterThan(r.check_in_at)
    })

    it.runIf(dialect === 'postgres')(
      'two API processes on one PostgreSQL database never open two sessions for one operator',
      async () => {
        const second = await buildTestApp({}, { database: t.database })
        try {
          const w = await world()
          const operators = [await w.operator(), await w.operator()]
          const apis = [w.api, second.client(w.key.secret)] as const
          const results: Record<string, Scan['result'][]> = {}
          for (let round = 0; round < 12; round++) {
            const time = plus(at('06:00'), round * 10 * MINUTE)
            const responses = await Promise.all(
              operators.flatMap((op) =>
                Array.from({ length: 8 }, (_, i) =>
                  apis[i % 2]?.post<Scan>('/v1/scans', {
                    device_id: i % 4 < 2 ? w.gateA.code : w.gateB.code,
                    operator_id: op.id,
                    time,
                  }),
                ),
              ),
            )
            for (const res of responses) {
              if (!res) throw new Error('no response')
              expect([201, 409], JSON.stringify(res.body)).toContain(res.status)
              if (res.status === 409) expectError(res, 409, 'conflict', 'open_session_exists')
            }
            for (const op of operators) {
              const mine = responses
                .filter((r) => r?.status === 201)
                .map((r) => r?.body as Scan)
                .filter((s) => s.operator_id === op.id)
              const accepted = mine.filter((s) => s.result !== 'flagged')
              expect(accepted, `round ${round}`).toHaveLength(1)
              expect(
                mine.filter((s) => s.result === 'flagged').every((s) => s.flag_reason === 'duplicate_scan'),
              ).toBe(true)
              results[op.id] = [...(results[op.id] ?? []), accepted[0]?.result ?? 'flagged']
              const open = (await sessionRows(w.accountId, op.id)).filter((r) => r.status === 'open')
              expect(open.length).toBeLessThanOrEqual(1)
            }
          }
          for (const op of operators) {
            // One accepted scan per round, so the operator strictly alternates in and out.
            expect(results[op.id]).toEqual(
              Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? 'checked_in' : 'checked_out')),
            )
            const rows = await sessionRows(w.accountId, op.id)
            expect(rows).toHaveLength(6)
            expect(
              rows.every((r) => r.status === 'completed' && r.check_out_at === r.check_in_at + 10 * MINUTE),
            ).toBe(true)
          }
        } finally {
          // Only the second app: the database belongs to `t`, which drops it.
          await second.app.close()
        }
      },
    )
  })

  describe('the partial unique index sessions_one_open', () => {
    function row(accountId: string, operatorId: string, extra: Partial<SessionRow> = {}): SessionRow {
      const now = Date.now()
      return {
        id: `ses_${randomBytes(13).toString('hex').toUpperCase()}`,
        account_id: accountId,
        livemode: 0,
        operator_id: operatorId,
        operator_ident: 'x',
        device_code: 'gate',
        location_id: null,
        check_in_at: now,
        check_out_at: null,
        break_minutes: 0,
        notes: null,
        is_flagged: 0,
        flag_reason: null,
        source: 'scan',
        status: 'open',
        deleted_at: null,
        created_at: now,
        updated_at: now,
        work_date: '2026-01-01',
        review_status: 'not_required',
        reviewed_at: null,
        reviewed_by: null,
        review_note: null,
        ...extra,
      }
    }

    async function insertFails(r: SessionRow): Promise<unknown> {
      try {
        await t.db.insertInto('sessions').values(r).execute()
      } catch (error) {
        return error
      }
      return undefined
    }

    it('refuses a second open session of one operator in one account and mode, and nothing else', async () => {
      const accountId = uniq('acct_idx')
      const op = uniq('op_idx')
      await t.db.insertInto('sessions').values(row(accountId, op)).execute()

      const error = await insertFails(row(accountId, op))
      expect(error).toBeDefined()
      expect(isUniqueViolation(error)).toBe(true)
      expect(String((error as Error).message)).toMatch(/sessions_one_open|UNIQUE constraint failed/)

      // Completed, deleted, other mode, other account, other operator: all allowed.
      expect(
        await insertFails(row(accountId, op, { status: 'completed', check_out_at: Date.now() + 1 })),
      ).toBe(undefined)
      expect(await insertFails(row(accountId, op, { deleted_at: Date.now() }))).toBe(undefined)
      expect(await insertFails(row(accountId, op, { livemode: 1 }))).toBe(undefined)
      expect(await insertFails(row(uniq('acct_idx'), op))).toBe(undefined)
      expect(await insertFails(row(accountId, uniq('op_idx')))).toBe(undefined)

      // An update that would reopen a completed session is refused too.
      const completed = row(accountId, op, { status: 'completed', check_out_at: Date.now() + 1 })
      await t.db.insertInto('sessions').values(completed).execute()
      let updateError: unknown
      try {
        await t.db.updateTable('sessions').set({ status: 'open' }).where('id', '=', completed.id).execute()
      } catch (e) {
        updateError = e
      }
      expect(isUniqueViolation(updateError)).toBe(true)

      const open = await t.db
        .selectFrom('sessions')
        .select('id')
        .where('account_id', '=', accountId)
        .where('operator_id', '=', op)
        .where('livemode', '=', 0)
        .where('status', '=', 'open')
        .where('deleted_at', 'is', null)
        .execute()
      expect(open).toHaveLength(1)
    })
  })
})
