import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { type Device, ISO_MS, uniq } from '../../helpers/assertions.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { at, HOUR, plus, SCAN_KEYS, type Scan, scanHelpers } from './helpers.js'

describe('scans over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t?.close())
  const { world, scan, session, revisions, lastEventId, sessionRows } = scanHelpers(() => t)

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

      // Outside the window, the same scan is judged on its merits: it comes before the open session's check-in.
      const outside = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: alice.id,
        time: at('07:59:00'),
      })
      expect(outside).toMatchObject({ result: 'flagged', flag_reason: 'out_of_order' })
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
})
