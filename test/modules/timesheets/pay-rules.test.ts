import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import type { List, Operator, PayPeriod, TimesheetEntry } from '../../helpers/assertions.js'
import { created, ok, type World, world } from '../../helpers/world.js'

/**
 * Timesheets under pay rules, over HTTP (decisions.md, "Pay rules: rounding, breaks and
 * overtime"): the calculation itself has its table of worked examples in pay-calculation.test.ts;
 * here, that the service applies the right rule to the right sessions, reads a workweek's earlier
 * days, and that a closed period keeps what its close stored.
 */

/** The California-style rule of docs/review-and-timesheets.md. */
const CALIFORNIA = {
  name: 'California hourly',
  breaks: [{ after_minutes: 360, minutes: 30, action: 'deduct' }],
  overtime: { daily_minutes: 480, daily_double_minutes: 720, weekly_minutes: 2400, seventh_day: true },
}

/**
 * The week of Monday 5 October 2026, in UTC, every session approved. Worked after the automatic
 * 30-minute lunch (sessions over 6 h): Mon 9.5, Tue 13, Wed–Fri 8 each, Sat 4 (no lunch), Sun 9.5.
 */
const WEEK: Array<[date: string, from: string, to: string]> = [
  ['2026-10-05', '08:00', '18:00'],
  ['2026-10-06', '08:00', '21:30'],
  ['2026-10-07', '08:00', '16:30'],
  ['2026-10-08', '08:00', '16:30'],
  ['2026-10-09', '08:00', '16:30'],
  ['2026-10-10', '08:00', '12:00'],
  ['2026-10-11', '08:00', '18:00'],
]

/** What the week answers under CALIFORNIA, day by day: [hours, regular, overtime, double, auto break]. */
const CALIFORNIA_DAYS: Record<string, [number, number, number, number, number]> = {
  '2026-10-05': [9.5, 8, 1.5, 0, 0.5], // daily overtime beyond 8 h
  '2026-10-06': [13, 8, 4, 1, 0.5], // double time beyond 12 h
  '2026-10-07': [8, 8, 0, 0, 0.5],
  '2026-10-08': [8, 8, 0, 0, 0.5],
  '2026-10-09': [8, 8, 0, 0, 0.5], // 40 regular hours this week now
  '2026-10-10': [4, 0, 4, 0, 0], // weekly overtime: beyond 40 regular hours
  '2026-10-11': [9.5, 0, 8, 1.5, 0.5], // the seventh day: 8 h overtime, the rest double
}

function split([hours, regular, overtime, double, autoBreak]: [number, number, number, number, number]) {
  return {
    hours,
    regular_hours: regular,
    overtime_hours: overtime,
    double_time_hours: double,
    auto_break_hours: autoBreak,
  }
}

describe('timesheets under pay rules over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  /** An approved session (API sessions await review; approved ones are paid). */
  async function paid(w: World, op: Operator, date: string, from: string, to: string, extra = {}) {
    const session = await w.session(op, `${date}T${from}:00Z`, `${date}T${to}:00Z`, extra)
    await ok(w.approve(session.id))
    return session
  }

  async function workWeek(w: World, op: Operator) {
    for (const [date, from, to] of WEEK) await paid(w, op, date, from, to)
  }

  async function rule(w: World, body: Record<string, unknown>) {
    return created(w.root.post<{ id: string }>('/v1/pay-rules', body))
  }

  async function entries(w: World, query: string) {
    return (await ok(w.api.get<List<TimesheetEntry>>(`/v1/timesheets?${query}&limit=100`))).data
  }

  const byDate = (list: TimesheetEntry[]) =>
    Object.fromEntries(
      list.map((e) => [
        e.date,
        split([e.hours, e.regular_hours, e.overtime_hours, e.double_time_hours, e.auto_break_hours]),
      ]),
    )

  it('applies the default rule: daily, double, weekly and seventh-day overtime and the automatic lunch', async () => {
    const w = await world(t)
    const op = await w.operator({ ident: 'CA-1' })
    await workWeek(w, op)
    const ca = await rule(w, { ...CALIFORNIA, is_default: true })

    const days = await entries(w, 'from=2026-10-05&to=2026-10-11')
    expect(byDate(days)).toEqual(
      Object.fromEntries(Object.entries(CALIFORNIA_DAYS).map(([d, v]) => [d, split(v)])),
    )
    for (const e of days) expect(e).toMatchObject({ pay_rule_id: ca.id, flags: [], pending_hours: 0 })

    // The week view totals the workweek: 60 h = 40 regular + 17.5 overtime + 2.5 double.
    const week = await entries(w, 'from=2026-10-05&to=2026-10-11&group_by=week')
    expect(week).toEqual([
      expect.objectContaining({
        date: '2026-10-05',
        sessions: 7,
        ...split([60, 40, 17.5, 2.5, 3]),
      }),
    ])

    // From mid-week, the week's earlier days still count: Saturday is weekly overtime, Sunday the
    // seventh day, exactly as in the whole week's answer.
    const weekend = await entries(w, 'from=2026-10-10&to=2026-10-11')
    expect(byDate(weekend)).toEqual({
      '2026-10-10': split(CALIFORNIA_DAYS['2026-10-10'] ?? [0, 0, 0, 0, 0]),
      '2026-10-11': split(CALIFORNIA_DAYS['2026-10-11'] ?? [0, 0, 0, 0, 0]),
    })

    // The CSV carries the same split, the rule and the flags.
    const csv = await w.api.get<string>('/v1/timesheets?from=2026-10-06&to=2026-10-06', {
      accept: 'text/csv',
    })
    expect(csv.raw.body.split('\r\n')[1]).toBe(
      `CA-1,,,2026-10-06,13.00,0.00,0.00,1,0,8.00,4.00,1.00,0.50,${ca.id},`,
    )
  })

  it("an operator's own rule wins over the default; the workweek starts on its rule's day", async () => {
    const w = await world(t)
    const own = await w.operator({ ident: 'SUN-1' })
    const other = await w.operator({ ident: 'MON-1' })
    await rule(w, { name: 'Weekly only', is_default: true, overtime: { weekly_minutes: 2400 } })
    const sunday = await rule(w, {
      name: 'Sunday week',
      workweek_start: 'sunday',
      overtime: { weekly_minutes: 2400 },
    })
    await ok(w.root.patch(`/v1/operators/${own.id}`, { pay_rule_id: sunday.id }))
    // Ten hours a day, Sunday 4 to Thursday 8 October.
    for (const op of [own, other]) {
      for (const day of ['04', '05', '06', '07', '08']) await paid(w, op, `2026-10-${day}`, '08:00', '18:00')
    }
    const list = await entries(w, 'from=2026-10-04&to=2026-10-08')
    const thursday = (ident: string) =>
      list.find((e) => e.operator_ident === ident && e.date === '2026-10-08')
    // Sunday week: 40 h by Wednesday, so Thursday is all overtime. Monday week: Sunday belongs to
    // the week before, Monday to Thursday make exactly 40 h, nothing over.
    expect(thursday('SUN-1')).toMatchObject({ regular_hours: 0, overtime_hours: 10, pay_rule_id: sunday.id })
    expect(thursday('MON-1')).toMatchObject({ regular_hours: 10, overtime_hours: 0 })

    const weeks = await entries(w, 'from=2026-10-04&to=2026-10-08&group_by=week')
    expect(weeks.map((e) => [e.operator_ident, e.date, e.hours, e.overtime_hours])).toEqual([
      ['MON-1', '2026-09-28', 10, 0],
      ['MON-1', '2026-10-05', 40, 0],
      ['SUN-1', '2026-10-04', 50, 10],
    ])
    // The CSV's row count (for a progress bar) counts each worker's own weeks: 3, where ISO weeks
    // would make SUN-1's Sunday a week of its own (4).
    const csv = await w.api.get<string>('/v1/timesheets?from=2026-10-04&to=2026-10-08&group_by=week', {
      accept: 'text/csv',
    })
    expect(csv.headers['x-total-count']).toBe('3')
    expect(csv.raw.body.trim().split('\r\n')).toHaveLength(1 + 3)
  })

  it('rounds in the location’s local time and never changes the recorded times', async () => {
    const w = await world(t, { timezone: 'Asia/Kolkata' })
    const op = await w.operator()
    await rule(w, {
      name: 'Hourly',
      is_default: true,
      rounding: { interval_minutes: 60, check_in: 'nearest', check_out: 'nearest' },
    })
    // 08:30 to 17:10 IST: rounded to 09:00 and 17:00 in Kolkata (08:30 is half: up), 8 h. In UTC
    // (03:00 to 11:40) hourly rounding would give 03:00 to 12:00, 9 h.
    const session = await paid(w, op, '2026-10-05', '03:00', '11:40')
    const [entry] = await entries(w, 'from=2026-10-05&to=2026-10-05')
    expect(entry).toMatchObject({ hours: 8, regular_hours: 8 })
    const stored = await ok(w.api.get<typeof session>(`/v1/sessions/${session.id}`))
    expect(stored.check_in).toMatchObject({ time: '2026-10-05T03:00:00.000Z' })
    expect(stored.check_out).toMatchObject({ time: '2026-10-05T11:40:00.000Z' })
    expect(stored.total_hours).toBe(8.67)
  })

  it('recorded breaks count before the break rules; a `flag` rule marks the day and deducts nothing', async () => {
    const w = await world(t)
    const op = await w.operator()
    await rule(w, {
      name: 'Lunch',
      is_default: true,
      breaks: [
        { after_minutes: 300, minutes: 10, action: 'flag' },
        { after_minutes: 360, minutes: 30, action: 'deduct' },
      ],
    })
    // 7 h with a recorded 30-minute lunch: both rules met, nothing deducted.
    await paid(w, op, '2026-10-05', '08:00', '15:00', {
      breaks: [{ start: { time: '2026-10-05T12:00:00Z' }, end: { time: '2026-10-05T12:30:00Z' } }],
    })
    // 7 h with a 20-minute lunch: 10 more deducted (30 in all).
    await paid(w, op, '2026-10-06', '08:00', '15:00', {
      breaks: [{ start: { time: '2026-10-06T12:00:00Z' }, end: { time: '2026-10-06T12:20:00Z' } }],
    })
    // 5 h 30 without a break: the flag rule is missed (more than 300 min), nothing deducted.
    await paid(w, op, '2026-10-07', '08:00', '13:30')
    // 7 h without a break, pending review: 30 deducted (pending hours), the day flagged both ways.
    await w.session(op, '2026-10-08T08:00:00Z', '2026-10-08T15:00:00Z')
    const list = await entries(w, 'from=2026-10-05&to=2026-10-08')
    expect(list.map((e) => [e.date, e.hours, e.pending_hours, e.auto_break_hours, e.flags])).toEqual([
      ['2026-10-05', 6.5, 0, 0, []],
      ['2026-10-06', 6.5, 0, 0.17, []], // 10 min = 0.1667 h
      ['2026-10-07', 5.5, 0, 0, ['missed_break']],
      ['2026-10-08', 0, 6.5, 0, ['missed_break', 'pending_review']],
    ])
  })

  describe('a closed period never changes', () => {
    it('keeps its stored days whatever changes afterwards; its closed days count toward an open week; reopening recomputes', async () => {
      const w = await world(t)
      const op = await w.operator({ ident: 'CL-1' })
      await workWeek(w, op)
      const ca = await rule(w, { ...CALIFORNIA, is_default: true })
      const period = await created(w.period('2026-10-05', '2026-10-08'))
      const closed = await ok(w.close(period.id))
      expect(closed.totals).toEqual({
        operators: 1,
        hours: 38.5,
        regular_hours: 32,
        overtime_hours: 5.5,
        double_time_hours: 1,
        auto_break_hours: 2,
      })
      expect(await ok(w.api.get<PayPeriod>(`/v1/pay-periods/${period.id}`))).toEqual(closed)
      const before = await entries(w, 'from=2026-10-05&to=2026-10-11')
      expect(byDate(before)).toEqual(
        Object.fromEntries(Object.entries(CALIFORNIA_DAYS).map(([d, v]) => [d, split(v)])),
      )

      // Daily overtime only beyond 10 h now, and the location moves to Los Angeles.
      await ok(
        w.root.patch(`/v1/pay-rules/${ca.id}`, {
          overtime: {
            daily_minutes: 600,
            daily_double_minutes: 720,
            weekly_minutes: 2400,
            seventh_day: true,
          },
        }),
      )
      await ok(w.root.patch(`/v1/locations/${w.location.id}`, { timezone: 'America/Los_Angeles' }))
      const after = byDate(await entries(w, 'from=2026-10-05&to=2026-10-11'))
      // Monday to Thursday: what the close stored.
      for (const date of ['2026-10-05', '2026-10-06', '2026-10-07', '2026-10-08']) {
        expect(after[date]).toEqual(split(CALIFORNIA_DAYS[date] ?? [0, 0, 0, 0, 0]))
      }
      // Friday counts the stored 32 regular hours: 8 more reach 40, not beyond (a recompute of the
      // whole week under the new rule would have 35.5 regular hours by Thursday and 3.5 overtime
      // on Friday). Sunday, the seventh day: overtime up to the new 10 h.
      expect(after['2026-10-09']).toEqual(split([8, 8, 0, 0, 0.5]))
      expect(after['2026-10-10']).toEqual(split([4, 0, 4, 0, 0]))
      expect(after['2026-10-11']).toEqual(split([9.5, 0, 9.5, 0, 0.5]))

      // Another rule for the operator: the closed days still stand.
      const plain = await rule(w, { name: 'Plain' })
      await ok(w.root.patch(`/v1/operators/${op.id}`, { pay_rule_id: plain.id }))
      const monday = (await entries(w, 'from=2026-10-05&to=2026-10-05'))[0]
      expect(monday).toMatchObject({
        ...split(CALIFORNIA_DAYS['2026-10-05'] ?? [0, 0, 0, 0, 0]),
        pay_rule_id: ca.id,
      })

      // Reopened: computed from the sessions again, under the operator's rule now (no overtime).
      const reopened = await ok(w.reopen(period.id))
      expect(reopened.totals).toBeNull()
      const live = (await entries(w, 'from=2026-10-05&to=2026-10-05'))[0]
      expect(live).toMatchObject({ ...split([10, 10, 0, 0, 0]), pay_rule_id: plain.id })
    })
  })
})
