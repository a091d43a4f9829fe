import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { type Device, expectError, type Operator, uniq } from '../../helpers/assertions.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { at, HOUR, plus, type Scan, scanHelpers } from './helpers.js'

describe('scans over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t?.close())
  const { world, scan, session, revisions, lastEventId, sessionRows, scanCount, accountName } = scanHelpers(
    () => t,
  )

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

    it("a scan before the open session's check-in: out_of_order (decisions: late scans), the session stays open", async () => {
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
        expect(s).toMatchObject({ result: 'flagged', flag_reason: 'out_of_order', session_id: null })
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
})
