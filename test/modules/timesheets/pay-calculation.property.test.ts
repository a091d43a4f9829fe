import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { calendarDate, WEEKDAYS } from '../../../src/lib/dates.js'
import { hoursOfMs } from '../../../src/modules/sessions/hours.js'
import {
  foldDays,
  type PayDay,
  type PayRuleTerms,
  payDays,
  payHours,
  type RoundingMode,
  roundInstant,
  type SessionForPay,
  workweekStart,
} from '../../../src/modules/timesheets/pay-calculation.js'

/**
 * The pay calculation as properties, over any operator's sessions (any zone, status, breaks, across
 * DST changes) and any valid rule. The zones' offset changes are whole hours (or none), which every
 * rounding interval divides: see roundInstant for the one zone kind where rounding twice can differ.
 */

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const ZONES = ['UTC', 'America/Los_Angeles', 'Europe/Paris', 'Asia/Kolkata', 'Asia/Kathmandu']
/** Three weeks each: US and EU spring forward in the first, fall back in the second. */
const WINDOWS = [Date.UTC(2026, 2, 2), Date.UTC(2026, 9, 19)]
const WINDOW_MS = 21 * 24 * HOUR
const INTERVALS = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60]
const STATUSES = ['pending', 'not_required', 'approved', 'rejected'] as const
const mode = fc.constantFrom<RoundingMode>('nearest', 'up', 'down')
/** Each zone's wall clock read by Intl itself, to check a rounded time against (built once: costly). */
const WALL_CLOCKS = new Map(
  ZONES.map((timeZone) => [
    timeZone,
    new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    }),
  ]),
)

/** A session as the sessions API allows it: breaks inside it and not overlapping, break_minutes within it. */
const sessionArb: fc.Arbitrary<SessionForPay> = fc
  .record({
    window: fc.constantFrom(...WINDOWS),
    // Half the times on a minute, as most punches are, so rounding often starts on the grid.
    at: fc.oneof(
      fc.integer({ min: 0, max: WINDOW_MS }),
      fc.integer({ min: 0, max: WINDOW_MS / MINUTE }).map((m) => m * MINUTE),
    ),
    length: fc.integer({ min: 0, max: 16 * HOUR }),
    zone: fc.constantFrom(...ZONES),
    status: fc.constantFrom(...STATUSES),
    state: fc.constantFrom('completed', 'completed', 'completed', 'open', 'no_check_out'),
    breakShare: fc.double({ min: 0, max: 1, noNaN: true }),
    cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
    paid: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    lastOpenEnded: fc.boolean(),
  })
  .map((g) => {
    const checkIn = g.window + g.at
    const checkOut = checkIn + g.length
    const completed = g.state === 'completed'
    // Breaks from sorted cut points, paired: [c0, c1], [c2, c3], …, inside the session.
    const points = g.cuts.map((c) => checkIn + Math.floor(c * g.length)).sort((a, b) => a - b)
    const breaks: Array<{ start: number; end: number | null; paid: boolean }> = []
    for (let i = 0; i + 1 < points.length; i += 2) {
      const start = points[i] as number
      const end = points[i + 1] as number
      if (end > start) breaks.push({ start, end, paid: g.paid[i / 2] ?? false })
    }
    const last = breaks.at(-1)
    if (completed && last && g.lastOpenEnded && last.end === checkOut) last.end = null
    return {
      work_date: calendarDate(checkIn, g.zone),
      time_zone: g.zone,
      check_in_at: checkIn,
      check_out_at: completed ? checkOut : null,
      break_minutes: breaks.length > 0 ? 0 : Math.floor((g.breakShare * g.length) / MINUTE),
      breaks,
      review_status: g.status,
      open: g.state === 'open',
    }
  })

const sessionsArb = fc.array(sessionArb, { maxLength: 25 })

/** Any rule the pay-rules API accepts. */
const ruleArb: fc.Arbitrary<PayRuleTerms> = fc
  .record({
    workweek_start: fc.constantFrom(...WEEKDAYS),
    interval: fc.constantFrom(0, ...INTERVALS),
    check_in: mode,
    check_out: mode,
    breaks: fc.array(
      fc.record({
        after_minutes: fc.integer({ min: 1, max: 1440 }),
        minutes: fc.integer({ min: 1, max: 240 }),
        action: fc.constantFrom('deduct', 'flag' as const),
      }),
      { maxLength: 5 },
    ),
    daily: fc.option(fc.integer({ min: 1, max: 1440 })),
    doubleExtra: fc.option(fc.integer({ min: 1, max: 1440 })),
    weekly: fc.option(fc.integer({ min: 1, max: 10_080 })),
    seventh: fc.boolean(),
  })
  .map((g) => ({
    id: 'pr_property',
    workweek_start: g.workweek_start,
    rounding: { interval_minutes: g.interval, check_in: g.check_in, check_out: g.check_out },
    breaks: g.breaks,
    overtime: {
      daily_minutes: g.daily,
      // Double time needs daily and is above it; so does the seventh day need daily.
      daily_double_minutes: g.daily !== null && g.doubleExtra !== null ? g.daily + g.doubleExtra : null,
      weekly_minutes: g.weekly,
      seventh_day: g.daily !== null && g.seventh,
    },
  }))

const RUNS = { numRuns: 300 }
const hundredths = (hours: number) => Math.round(hours * 100)
const counts = (s: SessionForPay) => s.review_status === 'approved' || s.review_status === 'not_required'

function unpaidMs(s: SessionForPay, checkOut: number): number {
  if (s.breaks.length === 0) return s.break_minutes * MINUTE
  return s.breaks.filter((b) => !b.paid).reduce((sum, b) => sum + (b.end ?? checkOut) - b.start, 0)
}

/** The days grouped by their workweek, each folded into one week entry. */
function weeks(days: PayDay[], rule: PayRuleTerms | null): PayDay[] {
  const starts = new Map<string, PayDay[]>()
  for (const day of days) {
    const start = workweekStart(day.date, rule?.workweek_start ?? 'monday')
    starts.set(start, [...(starts.get(start) ?? []), day])
  }
  return [...starts].map(([start, group]) => foldDays(start, group))
}

describe('pay calculation (properties)', () => {
  it('splits every entry, day or week, into parts that add up to its hours', () => {
    fc.assert(
      fc.property(sessionsArb, fc.option(ruleArb), (sessions, rule) => {
        const days = payDays(sessions, rule)
        for (const entry of [...days, ...weeks(days, rule)]) {
          const h = payHours(entry)
          expect(
            hundredths(h.regular_hours) + hundredths(h.overtime_hours) + hundredths(h.double_time_hours),
          ).toBe(hundredths(h.hours))
          for (const part of [h.regular_hours, h.overtime_hours, h.double_time_hours])
            expect(part).toBeGreaterThanOrEqual(0)
        }
      }),
      RUNS,
    )
  })

  it('without a rule, answers what the old SQL summed per status: check_out − check_in − break_minutes', () => {
    const withoutRecords = sessionArb.map((s) => ({ ...s, breaks: [] }))
    fc.assert(
      fc.property(fc.array(withoutRecords, { maxLength: 25 }), (sessions) => {
        const sum = (date: string, statuses: string[]) =>
          sessions
            .filter(
              (s) => s.work_date === date && statuses.includes(s.review_status) && s.check_out_at !== null,
            )
            .reduce(
              (total, s) => total + (s.check_out_at as number) - s.check_in_at - s.break_minutes * 60000,
              0,
            )
        const days = payDays(sessions, null)
        expect(days.map((d) => d.date)).toEqual([...new Set(sessions.map((s) => s.work_date))].sort())
        for (const day of days) {
          const hours = sum(day.date, ['approved', 'not_required'])
          expect(day.countedMs).toBe(hours)
          expect(day.regularMs).toBe(hours)
          expect(day.pendingMs).toBe(sum(day.date, ['pending']))
          expect(day.rejectedMs).toBe(sum(day.date, ['rejected']))
          expect(payHours(day)).toMatchObject({
            hours: hoursOfMs(hours),
            regular_hours: hoursOfMs(hours),
            overtime_hours: 0,
            double_time_hours: 0,
            auto_break_hours: 0,
          })
          const ofDay = sessions.filter((s) => s.work_date === day.date)
          expect(day.sessions).toBe(ofDay.length)
          expect(day.openSessions).toBe(ofDay.filter((s) => s.open).length)
        }
      }),
      RUNS,
    )
  })

  it('rounding a rounded time, or a rounded session, changes nothing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: WINDOWS[0] as number, max: (WINDOWS[1] as number) + WINDOW_MS }),
        fc.constantFrom(...ZONES),
        fc.constantFrom(...INTERVALS),
        mode,
        mode,
        (instant, zone, interval, first, second) => {
          const once = roundInstant(instant, zone, interval * MINUTE, first)
          expect(roundInstant(once, zone, interval * MINUTE, second)).toBe(once)
          // On the local grid: a whole multiple of the interval since local midnight.
          const local = WALL_CLOCKS.get(zone)?.format(once) ?? ''
          const [h, m, s] = local.split(':').map(Number) as [number, number, number]
          expect(s).toBe(0)
          expect((h * 60 + m) % interval).toBe(0)
          expect(Math.abs(once - instant)).toBeLessThan(interval * MINUTE)
        },
      ),
      { numRuns: 2000 },
    )
    fc.assert(
      fc.property(sessionsArb, ruleArb, (sessions, rule) => {
        const interval = rule.rounding.interval_minutes * MINUTE
        const round = (t: number, m: RoundingMode, zone: string) =>
          interval > 0 ? roundInstant(t, zone, interval, m) : t
        const rounded = sessions.map((s) => ({
          ...s,
          check_in_at: round(s.check_in_at, rule.rounding.check_in, s.time_zone),
          check_out_at:
            s.check_out_at === null ? null : round(s.check_out_at, rule.rounding.check_out, s.time_zone),
          // A break that ended at the recorded check-out keeps that end.
          breaks: s.breaks.map((b) => ({ ...b, end: b.end ?? s.check_out_at })),
        }))
        expect(payDays(rounded, rule)).toEqual(payDays(sessions, rule))
      }),
      RUNS,
    )
  })

  it('moving a session inside its day changes no entry (by any time unrounded, by whole intervals rounded)', () => {
    fc.assert(
      fc.property(
        sessionsArb.filter((s) => s.length > 0),
        ruleArb,
        fc.nat(),
        fc.integer({ min: -12 * HOUR, max: 12 * HOUR }),
        (sessions, rule, pick, by) => {
          const interval = rule.rounding.interval_minutes * MINUTE
          const delta = interval > 0 ? Math.trunc(by / interval) * interval : by
          const index = pick % sessions.length
          const moved = sessions[index] as SessionForPay
          // Inside the day: its check-in stays on its work date.
          fc.pre(calendarDate(moved.check_in_at + delta, moved.time_zone) === moved.work_date)
          const after = sessions.map((s, i) =>
            i !== index
              ? s
              : {
                  ...s,
                  check_in_at: s.check_in_at + delta,
                  check_out_at: s.check_out_at === null ? null : s.check_out_at + delta,
                  breaks: s.breaks.map((b) => ({
                    ...b,
                    start: b.start + delta,
                    end: b.end === null ? null : b.end + delta,
                  })),
                },
          )
          const before = payDays(sessions, rule)
          expect(payDays(after, rule)).toEqual(before)
          const total = (days: PayDay[]) => weeks(days, rule).map((w) => w.countedMs)
          expect(total(payDays(after, rule))).toEqual(total(before))
        },
      ),
      RUNS,
    )
  })

  it('counts no minute twice: the parts are the counted time, which is the sessions’ time less breaks', () => {
    fc.assert(
      fc.property(sessionsArb, fc.option(ruleArb), (sessions, rule) => {
        const days = payDays(sessions, rule)
        for (const day of days) expect(day.regularMs + day.overtimeMs + day.doubleTimeMs).toBe(day.countedMs)
        const interval = (rule?.rounding.interval_minutes ?? 0) * MINUTE
        let recorded = 0
        let rounded = 0
        for (const s of sessions) {
          if (!counts(s) || s.check_out_at === null) continue
          recorded += Math.max(s.check_out_at - s.check_in_at - unpaidMs(s, s.check_out_at), 0)
          const start =
            interval && rule
              ? roundInstant(s.check_in_at, s.time_zone, interval, rule.rounding.check_in)
              : s.check_in_at
          const end =
            interval && rule
              ? roundInstant(s.check_out_at, s.time_zone, interval, rule.rounding.check_out)
              : s.check_out_at
          rounded += Math.max(end - start - unpaidMs(s, s.check_out_at), 0)
        }
        const counted = days.reduce((sum, d) => sum + d.countedMs, 0)
        const automatic = days.reduce((sum, d) => sum + d.autoBreakMs, 0)
        // What the break rules take off is the automatic break, and nothing else is lost or added.
        expect(counted + automatic).toBe(rounded)
        if (interval === 0) expect(counted).toBeLessThanOrEqual(recorded)
      }),
      RUNS,
    )
  })

  it('keeps regular time within the daily and the weekly thresholds', () => {
    fc.assert(
      fc.property(sessionsArb, ruleArb, (sessions, rule) => {
        const { daily_minutes, weekly_minutes } = rule.overtime
        const days = payDays(sessions, rule)
        for (const day of days)
          if (daily_minutes !== null) expect(day.regularMs).toBeLessThanOrEqual(daily_minutes * MINUTE)
        for (const week of weeks(days, rule)) {
          if (weekly_minutes !== null) expect(week.regularMs).toBeLessThanOrEqual(weekly_minutes * MINUTE)
          // What is not regular is overtime or double time: nothing dropped in the weekly move.
          expect(week.regularMs + week.overtimeMs + week.doubleTimeMs).toBe(week.countedMs)
        }
      }),
      RUNS,
    )
  })
})
