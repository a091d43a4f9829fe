import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Operation, ResponseOf } from '../../../packages/client/src/types.js'
import { ForgottenCheckOutSweep } from '../../../src/modules/sessions/sweep.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import type { Operator, Session } from '../../helpers/assertions.js'
import { atTime } from '../../helpers/clock.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { at, HOUR, MINUTE, plus, scanHelpers } from './helpers.js'

type BatchAnswer = ResponseOf<Operation<'/v1/scans/batch', 'post'>>

/** A break as a session shows it. */
const shown = (start: string, end: string | null, paid = false, source = 'scan') => ({
  start: { time: start },
  end: end === null ? null : { time: end },
  paid,
  source,
})

describe('break scans', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t?.close())
  const { world, scan, session, revisions, lastEventId } = scanHelpers(() => t)

  type W = Awaited<ReturnType<typeof world>>
  const scanOf = (w: W, op: Operator, time: string, direction?: string) =>
    scan(w.api, { device_id: w.gateA.code, operator_id: op.id, time, ...(direction ? { direction } : {}) })
  const eventsSince = (w: W, mark: string) => eventsOf(t, w.accountId, undefined, mark)

  it('break_start opens an unpaid break, break_end ends it, the check-out completes the day: events, revisions, no re-flag', async () => {
    const w = await world()
    const op = await w.operator()
    const checkIn = await scanOf(w, op, at('08:00'), 'in')
    const opened = await session(w.api, checkIn.session_id ?? '')
    expect(opened.breaks).toEqual([])

    let mark = await lastEventId(w.accountId)
    const started = await scanOf(w, op, at('12:00'), 'break_start')
    expect(started).toMatchObject({
      direction: 'break_start',
      result: 'break_started',
      flag_reason: null,
      session_id: opened.id,
    })
    const onBreak = await session(w.api, opened.id)
    expect(onBreak).toMatchObject({ breaks: [shown(at('12:00'), null)], break_minutes: 0, total_hours: null })
    let events = await eventsSince(w, mark)
    expect(events.map((e) => e.type)).toEqual(['scan.break_started', 'session.updated'])
    expect(events[0]?.data.object).toEqual(started)
    expect(events[1]?.data.object).toEqual(onBreak)
    expect(events[1]?.data.previous_attributes).toEqual({ breaks: [] })

    mark = await lastEventId(w.accountId)
    const ended = await scanOf(w, op, at('12:30:30'), 'break_end')
    expect(ended).toMatchObject({ direction: 'break_end', result: 'break_ended', session_id: opened.id })
    const back = await session(w.api, opened.id)
    // 30 min 30 s: 31 minutes, half-up.
    expect(back).toMatchObject({ breaks: [shown(at('12:00'), at('12:30:30'))], break_minutes: 31 })
    events = await eventsSince(w, mark)
    expect(events.map((e) => e.type)).toEqual(['scan.break_ended', 'session.updated'])
    expect(events[1]?.data.previous_attributes).toEqual({ breaks: onBreak.breaks, break_minutes: 0 })

    const out = await scanOf(w, op, at('16:00'), 'out')
    expect(out.result).toBe('checked_out')
    const done = await session(w.api, opened.id)
    // 8 h − 30 min 30 s, exactly: 7.4917 → 7.49.
    expect(done).toMatchObject({
      status: 'completed',
      breaks: back.breaks,
      break_minutes: 31,
      total_hours: 7.49,
      is_flagged: false,
      flag_reason: null,
      review_status: 'not_required',
    })
    const history = await revisions(w.api, opened.id)
    expect(history.map((r) => r.action)).toEqual([
      'checked_out',
      'break_ended',
      'break_started',
      'checked_in',
    ])
    expect(history[1]).toMatchObject({ before: onBreak, after: back })
  })

  it('flags, changing nothing: no_open_session, no_open_break, break_in_progress, and a break scan within 60 s is a duplicate', async () => {
    const w = await world()
    const op = await w.operator()
    const expectFlagged = async (
      time: string,
      direction: string,
      reason: string,
      sessionId: string | null,
    ) => {
      const mark = await lastEventId(w.accountId)
      const before = sessionId === null ? undefined : await session(w.api, sessionId)
      const s = await scanOf(w, op, time, direction)
      expect(s).toMatchObject({ result: 'flagged', flag_reason: reason, session_id: null, direction })
      expect((await eventsSince(w, mark)).map((e) => e.type)).toEqual(['scan.flagged'])
      if (sessionId !== null) expect(await session(w.api, sessionId)).toEqual(before)
    }

    await expectFlagged(at('07:00'), 'break_start', 'no_open_session', null)
    await expectFlagged(at('07:10'), 'break_end', 'no_open_session', null)
    const id = (await scanOf(w, op, at('08:00'), 'in')).session_id ?? ''
    await expectFlagged(at('08:00:30'), 'break_start', 'duplicate_scan', id)
    await expectFlagged(at('09:00'), 'break_end', 'no_open_break', id)
    expect((await scanOf(w, op, at('10:00'), 'break_start')).result).toBe('break_started')
    await expectFlagged(at('10:05'), 'break_start', 'break_in_progress', id)
    // `auto` never starts or ends a break: during a break it checks out (below, its own test).
  })

  it('late break scans are out_of_order: a start inside a recorded break, an end before the break began, a check-out before a break ended', async () => {
    const w = await world()
    const op = await w.operator()
    const id = (await scanOf(w, op, at('08:00'), 'in')).session_id ?? ''
    await scanOf(w, op, at('12:00'), 'break_start')
    expect((await scanOf(w, op, at('11:50'), 'break_end')).flag_reason).toBe('out_of_order')
    await scanOf(w, op, at('12:30'), 'break_end')
    const before = await session(w.api, id)
    expect((await scanOf(w, op, at('12:15'), 'break_start')).flag_reason).toBe('out_of_order')
    expect((await scanOf(w, op, at('12:20'), 'out')).flag_reason).toBe('out_of_order')
    // Before the check-in, and inside a completed session: as every late scan.
    expect((await scanOf(w, op, at('07:00'), 'break_start')).flag_reason).toBe('out_of_order')
    expect(await session(w.api, id)).toEqual(before)
    await scanOf(w, op, at('16:00'), 'out')
    expect((await scanOf(w, op, at('13:00'), 'break_start')).flag_reason).toBe('out_of_order')
  })

  it('a check-out during a break (auto or out) ends the break at the check-out time', async () => {
    const w = await world()
    for (const direction of ['auto', 'out']) {
      const op = await w.operator()
      const id = (await scanOf(w, op, at('08:00'), 'in')).session_id ?? ''
      await scanOf(w, op, at('15:00'), 'break_start')
      const mark = await lastEventId(w.accountId)
      const out = await scanOf(w, op, at('16:00'), direction)
      expect(out).toMatchObject({ result: 'checked_out', session_id: id })
      const done = await session(w.api, id)
      expect(done).toMatchObject({
        status: 'completed',
        check_out: { time: at('16:00') },
        breaks: [shown(at('15:00'), at('16:00'))],
        break_minutes: 60,
        total_hours: 7,
      })
      const events = await eventsSince(w, mark)
      expect(events.map((e) => e.type)).toEqual(['scan.checked_out', 'session.completed'])
      expect(events[1]?.data.object).toEqual(done)
    }
  })

  it('a session holds at most 10 breaks: the 11th break_start is flagged too_many_breaks', async () => {
    const w = await world()
    const op = await w.operator()
    const id = (await scanOf(w, op, at('06:00'), 'in')).session_id ?? ''
    for (let i = 0; i < 10; i++) {
      expect((await scanOf(w, op, plus(at('06:10'), i * 20 * MINUTE), 'break_start')).result).toBe(
        'break_started',
      )
      expect((await scanOf(w, op, plus(at('06:10'), (i * 20 + 5) * MINUTE), 'break_end')).result).toBe(
        'break_ended',
      )
    }
    const eleventh = await scanOf(w, op, plus(at('06:10'), 200 * MINUTE), 'break_start')
    expect(eleventh).toMatchObject({ result: 'flagged', flag_reason: 'too_many_breaks' })
    expect((await session(w.api, id)).breaks).toHaveLength(10)
  })

  it("a PATCH that sends a scanned break back unchanged keeps its source; a new one is the API's", async () => {
    const w = await world()
    const op = await w.operator()
    const id = (await scanOf(w, op, at('08:00'), 'in')).session_id ?? ''
    await scanOf(w, op, at('10:00'), 'break_start')
    await scanOf(w, op, at('10:15'), 'break_end')
    await scanOf(w, op, at('16:00'), 'out')
    const res = await w.api.patch<Session>(`/v1/sessions/${id}`, {
      breaks: [
        { start: { time: at('10:00') }, end: { time: at('10:15') } },
        { start: { time: at('12:00') }, end: { time: at('12:30') }, paid: true },
      ],
    })
    expect(res.status).toBe(200)
    expect(res.body.breaks).toEqual([
      shown(at('10:00'), at('10:15')),
      shown(at('12:00'), at('12:30'), true, 'api'),
    ])
    expect(res.body).toMatchObject({ break_minutes: 15, total_hours: 7.75, review_status: 'pending' })
  })

  it('a shift closed for running over 16 hours keeps its break open (no time is invented); the PATCH that sets the check-out ends it there', async () => {
    const w = await world()
    const op = await w.operator()
    const checkedIn = Date.now() - 3 * HOUR
    const id = (await scanOf(w, op, new Date(checkedIn).toISOString(), 'in')).session_id ?? ''
    await scanOf(w, op, new Date(checkedIn + HOUR).toISOString(), 'break_start')
    const sweep = new ForgottenCheckOutSweep(t.db, { intervalMs: 60_000 }, { error: () => undefined })
    // Earlier tests' open sessions of this database, long past, are closed by the same pass.
    expect(await atTime(checkedIn + 17 * HOUR, () => sweep.sweep())).toBeGreaterThanOrEqual(1)
    const closed = await session(w.api, id)
    expect(closed).toMatchObject({
      status: 'completed',
      check_out: null,
      flag_reason: 'max_shift_exceeded',
      breaks: [shown(new Date(checkedIn + HOUR).toISOString(), null)],
      total_hours: null,
    })

    const mark = await lastEventId(w.accountId)
    const checkOut = new Date(checkedIn + 2 * HOUR).toISOString()
    const res = await w.api.patch<Session>(`/v1/sessions/${id}`, { check_out: { time: checkOut } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({
      breaks: [shown(new Date(checkedIn + HOUR).toISOString(), checkOut)],
      break_minutes: 60,
      total_hours: 1,
    })
    const updated = (await eventsSince(w, mark)).find((e) => e.type === 'session.updated')
    expect(updated?.data.previous_attributes).toMatchObject({ breaks: closed.breaks, break_minutes: 0 })
  })

  it('a break scan after more than 16 hours reports the closure it caused, as an `out` does', async () => {
    const w = await world()
    const op = await w.operator()
    const id = (await scanOf(w, op, at('00:00'), 'in')).session_id ?? ''
    const late = await scanOf(w, op, at('17:00'), 'break_start')
    expect(late).toMatchObject({ result: 'flagged', flag_reason: 'max_shift_exceeded', session_id: id })
  })

  it('a batch applies break scans in time order, as POST /v1/scans would', async () => {
    const w = await world()
    const op = await w.operator()
    const body = (time: string, direction: string) => ({
      device_id: w.gateA.code,
      operator_id: op.id,
      time,
      direction,
    })
    const res = await w.api.post<BatchAnswer>('/v1/scans/batch', {
      scans: [
        body(at('12:45'), 'break_end'),
        body(at('08:00'), 'in'),
        body(at('16:00'), 'out'),
        body(at('12:00'), 'break_start'),
        body(at('12:50'), 'break_end'),
      ],
    })
    expect(res.status).toBe(200)
    const results = res.body.data.map((s) => ('result' in s ? [s.result, s.flag_reason] : s))
    expect(results).toEqual([
      ['break_ended', null],
      ['checked_in', null],
      ['checked_out', null],
      ['break_started', null],
      ['flagged', 'no_open_break'],
    ])
    const first = res.body.data[1]
    const done = await session(w.api, first && 'session_id' in first ? (first.session_id ?? '') : '')
    expect(done).toMatchObject({
      breaks: [shown(at('12:00'), at('12:45'))],
      break_minutes: 45,
      total_hours: 7.25,
    })
  })

  it('scan.break_started and scan.break_ended can be subscribed to', async () => {
    const w = await world()
    const res = await w.api.post('/v1/webhook-endpoints', {
      url: 'https://93.184.216.34/hooks/attendance',
      enabled_events: ['scan.break_started', 'scan.break_ended'],
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
  })
})
