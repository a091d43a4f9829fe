import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import type { List, Operator, Session } from '../../helpers/assertions.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { at, type Scan, scanHelpers } from './helpers.js'

describe('scans over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t?.close())
  const { world, scan, lastEventId, sessionRows } = scanHelpers(() => t)

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
})
