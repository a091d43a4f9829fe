import { describe, expect, it } from 'vitest'
import { calendarDate } from '../../../src/lib/dates.js'
import {
  type FixedDay,
  foldDays,
  type PayDay,
  type PayRuleTerms,
  payDays,
  payFlags,
  payHours,
  type SessionForPay,
  workweekStart,
} from '../../../src/modules/timesheets/pay-calculation.js'

/**
 * The pay calculation (decisions.md, "Pay rules: rounding, breaks and overtime") by worked examples:
 * each row one operator's sessions and rule, and the timesheet entries worked out by hand, the
 * arithmetic in the comments. Instants are written in the wall clock of the session's zone.
 */

const MINUTE = 60_000
const HOUR = 60 * MINUTE

type Status = SessionForPay['review_status']
interface Shift {
  /** Check-in as ISO-8601 with its offset, in the session's zone's wall clock. */
  in: string
  /** Minutes of real elapsed time to the check-out (to the millisecond); null: no check-out. */
  minutes: number | null
  zone?: string
  status?: Status
  open?: boolean
  break_minutes?: number
  /** Minutes after check-in, and length in minutes (null: ends at the check-out). */
  breaks?: Array<{ at: number; minutes: number | null; paid?: boolean }>
}

function session(shift: Shift): SessionForPay {
  const zone = shift.zone ?? 'UTC'
  const checkIn = Date.parse(shift.in)
  return {
    work_date: calendarDate(checkIn, zone),
    time_zone: zone,
    check_in_at: checkIn,
    check_out_at: shift.minutes === null ? null : checkIn + Math.round(shift.minutes * MINUTE),
    break_minutes: shift.break_minutes ?? 0,
    breaks: (shift.breaks ?? []).map((b) => ({
      start: checkIn + b.at * MINUTE,
      end: b.minutes === null ? null : checkIn + (b.at + b.minutes) * MINUTE,
      paid: b.paid ?? false,
    })),
    review_status: shift.status ?? 'approved',
    open: shift.open ?? false,
  }
}

function rule(terms: {
  workweek_start?: PayRuleTerms['workweek_start']
  rounding?: PayRuleTerms['rounding']
  breaks?: PayRuleTerms['breaks']
  overtime?: Partial<PayRuleTerms['overtime']>
}): PayRuleTerms {
  return {
    id: 'pr_test',
    workweek_start: terms.workweek_start ?? 'monday',
    rounding: terms.rounding ?? { interval_minutes: 0, check_in: 'nearest', check_out: 'nearest' },
    breaks: terms.breaks ?? [],
    overtime: {
      daily_minutes: null,
      daily_double_minutes: null,
      weekly_minutes: null,
      seventh_day: false,
      ...terms.overtime,
    },
  }
}

const CALIFORNIA = rule({
  overtime: { daily_minutes: 480, daily_double_minutes: 720, weekly_minutes: 2400, seventh_day: true },
})

type Entry = ReturnType<typeof payHours> & {
  date: string
  sessions: number
  open_sessions: number
  flags: string[]
}

/** An expected entry: what is not written is 0 (1 session, no flags). */
function entry(date: string, values: Partial<Omit<Entry, 'date'>>): Entry {
  return {
    date,
    hours: 0,
    pending_hours: 0,
    rejected_hours: 0,
    regular_hours: 0,
    overtime_hours: 0,
    double_time_hours: 0,
    auto_break_hours: 0,
    sessions: 1,
    open_sessions: 0,
    flags: [],
    ...values,
  }
}

function asEntry(day: PayDay): Entry {
  return {
    date: day.date,
    ...payHours(day),
    sessions: day.sessions,
    open_sessions: day.openSessions,
    flags: payFlags(day),
  }
}

/** A day shift at 08:00 wall clock in Los Angeles in June (PDT, UTC−7). */
const la = (date: string, hours: number, status?: Status): Shift => ({
  in: `${date}T08:00:00-07:00`,
  minutes: hours * 60,
  zone: 'America/Los_Angeles',
  status,
})
/** A day shift at 08:00 UTC. */
const utc = (date: string, minutes: number, extra: Partial<Shift> = {}): Shift => ({
  in: `${date}T08:00:00Z`,
  minutes,
  ...extra,
})

interface Example {
  name: string
  shifts: Shift[]
  rule: PayRuleTerms | null
  fixed?: FixedDay[]
  expected: Entry[]
}

const EXAMPLES: Example[] = [
  {
    // 2026-06-01 is a Monday; every day of the week has counted time, so Sunday is the seventh day.
    name: 'a California week with a seventh day',
    rule: CALIFORNIA,
    shifts: [
      la('2026-06-01', 10),
      la('2026-06-02', 13),
      la('2026-06-03', 8),
      la('2026-06-04', 8),
      la('2026-06-05', 8),
      la('2026-06-06', 6),
      la('2026-06-07', 9),
    ],
    expected: [
      // 10 h: regular 8, overtime 2 (week's regular so far 8)
      entry('2026-06-01', { hours: 10, regular_hours: 8, overtime_hours: 2 }),
      // 13 h: double 13 − 12 = 1, regular 8, overtime 4 (so far 16)
      entry('2026-06-02', { hours: 13, regular_hours: 8, overtime_hours: 4, double_time_hours: 1 }),
      entry('2026-06-03', { hours: 8, regular_hours: 8 }), // so far 24
      entry('2026-06-04', { hours: 8, regular_hours: 8 }), // 32
      entry('2026-06-05', { hours: 8, regular_hours: 8 }), // 40: at the weekly 2400 min, not beyond
      // 6 h regular by day, all beyond 40 in the week: weekly overtime 6
      entry('2026-06-06', { hours: 6, overtime_hours: 6 }),
      // seventh day: overtime min(9, 8) = 8, double time the rest 1, regular 0
      entry('2026-06-07', { hours: 9, overtime_hours: 8, double_time_hours: 1 }),
    ],
  },
  {
    // Wednesday's only session is pending: it is not counted time, so Sunday is no seventh day.
    name: 'a California week whose Wednesday is pending has no seventh day',
    rule: CALIFORNIA,
    shifts: [
      la('2026-06-01', 10),
      la('2026-06-02', 13),
      la('2026-06-03', 8, 'pending'),
      la('2026-06-04', 8),
      la('2026-06-05', 8),
      la('2026-06-06', 6),
      la('2026-06-07', 9),
    ],
    expected: [
      entry('2026-06-01', { hours: 10, regular_hours: 8, overtime_hours: 2 }), // so far 8
      entry('2026-06-02', { hours: 13, regular_hours: 8, overtime_hours: 4, double_time_hours: 1 }), // 16
      entry('2026-06-03', { pending_hours: 8, flags: ['pending_review'] }), // pending is never split
      entry('2026-06-04', { hours: 8, regular_hours: 8 }), // 24
      entry('2026-06-05', { hours: 8, regular_hours: 8 }), // 32
      entry('2026-06-06', { hours: 6, regular_hours: 6 }), // 38
      // by day regular 8, overtime 1; 38 + 8 = 46 is 6 beyond 40: regular 2, overtime 1 + 6 = 7
      entry('2026-06-07', { hours: 9, regular_hours: 2, overtime_hours: 7 }),
    ],
  },
  {
    // Los Angeles falls back on Sunday 2026-11-01 at 02:00 PDT (09:00 UTC): that night has 25 hours.
    // In 21:53 PDT rounds (15 min, nearest: 8 of 15 is past half) to 22:00 PDT = 05:00 UTC; out 07:08
    // PST to 07:15 PST = 15:15 UTC. The wall clock reads 9 h 15, the real time is 10 h 15 = 10.25 h,
    // counted whole on the Saturday it started: regular 8, overtime 2.25.
    name: 'the 25-hour night in America/Los_Angeles',
    rule: rule({
      rounding: { interval_minutes: 15, check_in: 'nearest', check_out: 'nearest' },
      overtime: { daily_minutes: 480, daily_double_minutes: 720 },
    }),
    shifts: [{ in: '2026-10-31T21:53:00-07:00', minutes: 9 * 60 + 15 + 60, zone: 'America/Los_Angeles' }],
    expected: [entry('2026-10-31', { hours: 10.25, regular_hours: 8, overtime_hours: 2.25 })],
  },
  {
    // Hourly rounding reads each instant with its own offset. In 00:50 PDT (07:50 UTC) rounds to 01:00
    // PDT = 08:00 UTC; out 01:50 PST (09:50 UTC, the second 01:50 of the night) rounds to 02:00 PST =
    // 10:00 UTC. Two real hours, though the wall clock went from 01:00 to 02:00.
    name: 'hourly rounding in the repeated hour of the fall-back night',
    rule: rule({ rounding: { interval_minutes: 60, check_in: 'nearest', check_out: 'nearest' } }),
    shifts: [{ in: '2026-11-01T00:50:00-07:00', minutes: 120, zone: 'America/Los_Angeles' }],
    expected: [entry('2026-11-01', { hours: 2, regular_hours: 2 })],
  },
  {
    // Asia/Kolkata is UTC+05:30: the hour grid is the local one, half an hour off UTC's.
    // In 08:10 up → 09:00 IST, out 17:40 down → 17:00 IST: 8 h (on UTC's grid: 02:40Z up → 03:00Z,
    // 12:10Z down → 12:00Z, 9 h).
    name: 'hourly rounding in Asia/Kolkata, up and down',
    rule: rule({ rounding: { interval_minutes: 60, check_in: 'up', check_out: 'down' } }),
    shifts: [{ in: '2026-03-02T08:10:00+05:30', minutes: 9 * 60 + 30, zone: 'Asia/Kolkata' }],
    expected: [entry('2026-03-02', { hours: 8, regular_hours: 8 })],
  },
  {
    // Nearest: 08:30:00 IST is exactly half, up to 09:00; 17:29:59 is below half, down to 17:00: 8 h
    // (on UTC's grid 03:00Z stays and 11:59:59Z goes to 12:00Z: 9 h).
    name: 'hourly rounding in Asia/Kolkata, nearest with exactly half up',
    rule: rule({ rounding: { interval_minutes: 60, check_in: 'nearest', check_out: 'nearest' } }),
    shifts: [{ in: '2026-03-03T08:30:00+05:30', minutes: 9 * 60 - 1 / 60, zone: 'Asia/Kolkata' }],
    expected: [entry('2026-03-03', { hours: 8, regular_hours: 8 })],
  },
  {
    // Weekly 2400 min from Sunday 2026-06-07: seven days of 7 h. Sunday to Thursday 35 h regular;
    // Friday 35 + 7 = 42, 2 beyond 40: regular 5, overtime 2; Saturday all 7 beyond: overtime 7.
    name: 'a Sunday workweek counts weekly overtime from Sunday',
    rule: rule({ workweek_start: 'sunday', overtime: { weekly_minutes: 2400 } }),
    shifts: ['07', '08', '09', '10', '11', '12', '13'].map((d) => utc(`2026-06-${d}`, 420)),
    expected: [
      entry('2026-06-07', { hours: 7, regular_hours: 7 }),
      entry('2026-06-08', { hours: 7, regular_hours: 7 }),
      entry('2026-06-09', { hours: 7, regular_hours: 7 }),
      entry('2026-06-10', { hours: 7, regular_hours: 7 }),
      entry('2026-06-11', { hours: 7, regular_hours: 7 }),
      entry('2026-06-12', { hours: 7, regular_hours: 5, overtime_hours: 2 }),
      entry('2026-06-13', { hours: 7, overtime_hours: 7 }),
    ],
  },
  {
    // The same days from Monday: Sunday 06-07 ends the week of 06-01 alone (7 h regular); Monday to
    // Friday 35 h; Saturday 35 + 7 = 42: regular 5, overtime 2.
    name: 'the same days in a Monday workweek',
    rule: rule({ workweek_start: 'monday', overtime: { weekly_minutes: 2400 } }),
    shifts: ['07', '08', '09', '10', '11', '12', '13'].map((d) => utc(`2026-06-${d}`, 420)),
    expected: [
      entry('2026-06-07', { hours: 7, regular_hours: 7 }),
      entry('2026-06-08', { hours: 7, regular_hours: 7 }),
      entry('2026-06-09', { hours: 7, regular_hours: 7 }),
      entry('2026-06-10', { hours: 7, regular_hours: 7 }),
      entry('2026-06-11', { hours: 7, regular_hours: 7 }),
      entry('2026-06-12', { hours: 7, regular_hours: 7 }),
      entry('2026-06-13', { hours: 7, regular_hours: 5, overtime_hours: 2 }),
    ],
  },
  {
    name: 'tiers of automatic breaks (after 300 → 30, after 600 → 60, deduct)',
    rule: rule({
      breaks: [
        // Given out of order: the rules are read by after_minutes ascending.
        { after_minutes: 600, minutes: 60, action: 'deduct' },
        { after_minutes: 300, minutes: 30, action: 'deduct' },
      ],
    }),
    shifts: [
      utc('2026-06-01', 660),
      utc('2026-06-02', 480, { breaks: [{ at: 240, minutes: 20 }] }),
      utc('2026-06-03', 300),
      utc('2026-06-04', 360, { break_minutes: 45 }),
      utc('2026-06-05', 420, { breaks: [{ at: 240, minutes: 30, paid: true }] }),
      utc('2026-06-06', 660, { breaks: [{ at: 620, minutes: null }] }),
      utc('2026-06-07', 620),
    ],
    expected: [
      // W0 660 > 300 with U 0: deduct 30 (U 30); 660 > 600 with U 30 < 60: deduct 30 more. 600 min.
      entry('2026-06-01', { hours: 10, regular_hours: 10, auto_break_hours: 1 }),
      // W0 480 − 20 = 460 > 300, U 20 < 30: deduct 10 (0.1666… h → 0.17). 450 min.
      entry('2026-06-02', { hours: 7.5, regular_hours: 7.5, auto_break_hours: 0.17 }),
      // W0 300 is not more than 300: nothing.
      entry('2026-06-03', { hours: 5, regular_hours: 5 }),
      // break_minutes 45 without records: W0 315 > 300 but U 45 ≥ 30: nothing. 315 min.
      entry('2026-06-04', { hours: 5.25, regular_hours: 5.25 }),
      // A paid break is worked time, U 0: W0 420 > 300, deduct 30. 390 min.
      entry('2026-06-05', { hours: 6.5, regular_hours: 6.5, auto_break_hours: 0.5 }),
      // The open-ended break runs to the check-out: U 40. W0 620 > 300 with U ≥ 30; > 600 with
      // U 40 < 60: deduct 20. 660 − 60 = 600 min.
      entry('2026-06-06', { hours: 10, regular_hours: 10, auto_break_hours: 0.33 }),
      // Each tier compares W0, the time before any rule: 620 > 300, deduct 30; 620 > 600 still (though
      // 620 − 30 = 590 is not), deduct 30 more. 560 min = 9.333… h.
      entry('2026-06-07', { hours: 9.33, regular_hours: 9.33, auto_break_hours: 1 }),
    ],
  },
  {
    name: 'a deducted lunch, then a flagged second break (after 300 → 30 deduct, after 600 → 60 flag)',
    rule: rule({
      breaks: [
        { after_minutes: 300, minutes: 30, action: 'deduct' },
        { after_minutes: 600, minutes: 60, action: 'flag' },
      ],
    }),
    shifts: [
      utc('2026-06-01', 660),
      utc('2026-06-02', 660, { status: 'pending' }),
      utc('2026-06-03', 660, { status: 'rejected' }),
      utc('2026-06-04', 600, { breaks: [{ at: 240, minutes: 60 }] }),
    ],
    expected: [
      // 660 − 30 deducted = 630 min; W0 660 > 600 with U 30 < 60: flagged, nothing more deducted.
      entry('2026-06-01', {
        hours: 10.5,
        regular_hours: 10.5,
        auto_break_hours: 0.5,
        flags: ['missed_break'],
      }),
      // Pending: counted the same way apart, never split; its automatic break is not a counted one.
      entry('2026-06-02', { pending_hours: 10.5, flags: ['missed_break', 'pending_review'] }),
      // Rejected counts for nothing, its missed break included.
      entry('2026-06-03', { rejected_hours: 10.5 }),
      // W0 600 − 60 = 540: over 300 with U 60 ≥ 30, not over 600. 540 min.
      entry('2026-06-04', { hours: 9, regular_hours: 9 }),
    ],
  },
  {
    // By after_minutes ascending, the flag at 300 is read before the deduction at 600 makes the break
    // up: a 660-min day without a break is flagged (U 0 < 30), then 60 min deducted. 600 min.
    name: 'break rules are read by after_minutes: a flag before a larger deduction',
    rule: rule({
      breaks: [
        { after_minutes: 600, minutes: 60, action: 'deduct' },
        { after_minutes: 300, minutes: 30, action: 'flag' },
      ],
    }),
    shifts: [utc('2026-06-01', 660)],
    expected: [
      entry('2026-06-01', { hours: 10, regular_hours: 10, auto_break_hours: 1, flags: ['missed_break'] }),
    ],
  },
  {
    // Daily 481, double 722, 723 min worked = 12.05 h = 1205 hundredths. Parts in hundredths: regular
    // 481 min = 801.67, overtime 241 min = 401.67, double 1 min = 1.67; floors 801 + 401 + 1 = 1203
    // leave 2 hundredths, all three remainders tie at 24,000 ms: regular, then overtime.
    // (Each rounded alone: 8.02 + 4.02 + 0.02 = 12.06, one hundredth too many.)
    name: 'the largest remainder: 2 hundredths left, a three-way tie',
    rule: rule({ overtime: { daily_minutes: 481, daily_double_minutes: 722 } }),
    shifts: [utc('2026-06-01', 723)],
    expected: [
      entry('2026-06-01', {
        hours: 12.05,
        regular_hours: 8.02,
        overtime_hours: 4.02,
        double_time_hours: 0.01,
      }),
    ],
  },
  {
    // Daily 482, 723 min = 1205 hundredths: regular 482 min = 803.33, overtime 241 min = 401.67;
    // floors 803 + 401 = 1204 leave 1, to the larger remainder, overtime's.
    name: 'the largest remainder: 1 hundredth left, to overtime',
    rule: rule({ overtime: { daily_minutes: 482 } }),
    shifts: [utc('2026-06-01', 723)],
    expected: [entry('2026-06-01', { hours: 12.05, regular_hours: 8.03, overtime_hours: 4.02 })],
  },
  {
    // A closed period stored Monday to Thursday (9 h counted, 8 h regular each): the week's regular
    // so far is 32 h before Friday. Thursday's session is also given: a closed day never changes.
    name: 'fixed days count toward the week',
    rule: CALIFORNIA,
    fixed: ['2026-06-01', '2026-06-02', '2026-06-03', '2026-06-04'].map((date) => ({
      date,
      countedMs: 9 * HOUR,
      regularMs: 8 * HOUR,
    })),
    shifts: [la('2026-06-04', 5), la('2026-06-05', 9), la('2026-06-06', 8), la('2026-06-07', 10)],
    expected: [
      // regular 8, overtime 1; 32 + 8 = 40, not beyond
      entry('2026-06-05', { hours: 9, regular_hours: 8, overtime_hours: 1 }),
      // regular 8 by day, all beyond 40: overtime 8
      entry('2026-06-06', { hours: 8, overtime_hours: 8 }),
      // the fixed days have counted time, so Sunday is the seventh day: overtime 8, double 2
      entry('2026-06-07', { hours: 10, overtime_hours: 8, double_time_hours: 2 }),
    ],
  },
  {
    // Wednesday was stored with no counted time (its session pending then): no seventh day, and the
    // week's regular so far is 24 h before Friday.
    name: 'a fixed day without counted time breaks the seventh day',
    rule: CALIFORNIA,
    fixed: [
      { date: '2026-06-01', countedMs: 9 * HOUR, regularMs: 8 * HOUR },
      { date: '2026-06-02', countedMs: 9 * HOUR, regularMs: 8 * HOUR },
      { date: '2026-06-03', countedMs: 0, regularMs: 0 },
      { date: '2026-06-04', countedMs: 9 * HOUR, regularMs: 8 * HOUR },
    ],
    shifts: [la('2026-06-05', 9), la('2026-06-06', 8), la('2026-06-07', 10)],
    expected: [
      entry('2026-06-05', { hours: 9, regular_hours: 8, overtime_hours: 1 }), // 24 + 8 = 32
      entry('2026-06-06', { hours: 8, regular_hours: 8 }), // 40
      // by day regular 8, overtime 2; all 8 beyond 40: regular 0, overtime 10
      entry('2026-06-07', { hours: 10, overtime_hours: 10 }),
    ],
  },
  {
    // Without a rule: what timesheets were before pay rules, every counted hour regular.
    name: 'no rule',
    rule: null,
    shifts: [
      utc('2026-06-01', 480, { break_minutes: 30 }), // 7.5
      // records replace break_minutes: 120 − 15 unpaid (the paid 10 is worked time) = 105 min
      {
        in: '2026-06-01T17:00:00Z',
        minutes: 120,
        status: 'not_required',
        breaks: [
          { at: 30, minutes: 15 },
          { at: 90, minutes: 10, paid: true },
        ],
      },
      { in: '2026-06-01T20:00:00Z', minutes: 180, status: 'pending' },
      { in: '2026-06-01T04:00:00Z', minutes: 60, status: 'rejected' },
      // closed without a check-out, then approved: counts nothing
      { in: '2026-06-01T00:30:00Z', minutes: null },
      { in: '2026-06-01T23:00:00Z', minutes: null, status: 'not_required', open: true },
    ],
    expected: [
      // 7.5 + 1.75 = 9.25 counted; 3 pending; 1 rejected
      entry('2026-06-01', {
        hours: 9.25,
        regular_hours: 9.25,
        pending_hours: 3,
        rejected_hours: 1,
        sessions: 6,
        open_sessions: 1,
        flags: ['open_session', 'pending_review'],
      }),
    ],
  },
]

describe('pay calculation: worked examples', () => {
  it.each(EXAMPLES)('$name', ({ shifts, rule, fixed, expected }) => {
    // Sessions in any order: reversed, so the order given is not the order relied on.
    const days = payDays(shifts.map(session).reverse(), rule, fixed)
    expect(days.map(asEntry)).toEqual(expected)
    for (const day of days) expect(day.regularMs + day.overtimeMs + day.doubleTimeMs).toBe(day.countedMs)
  })

  it('folds the California week into one entry dated its Monday', () => {
    const days = payDays(EXAMPLES[0]?.shifts.map(session) ?? [], CALIFORNIA)
    const week = foldDays(workweekStart('2026-06-04', 'monday'), days)
    // regular 8 + 8 + 8 + 8 + 8 = 40; overtime 2 + 4 + 6 + 8 = 20; double 1 + 1 = 2
    expect(asEntry(week)).toEqual(
      entry('2026-06-01', {
        hours: 62,
        regular_hours: 40,
        overtime_hours: 20,
        double_time_hours: 2,
        sessions: 7,
      }),
    )
  })

  it('folds flags and exact milliseconds, rounding the week once', () => {
    // Three days of 20 min 42 s: 3,726,000 ms = 1.035 h → 1.04 (each day 0.345 → 0.35; 3 × 0.35 = 1.05).
    const shifts = ['01', '02', '03'].map((d) => utc(`2026-06-${d}`, 20.7))
    shifts.push({ in: '2026-06-03T20:00:00Z', minutes: null, open: true, status: 'pending' })
    const days = payDays(shifts.map(session), null)
    expect(days.map((d) => payHours(d).hours)).toEqual([0.35, 0.35, 0.35])
    expect(asEntry(foldDays('2026-06-01', days))).toEqual(
      entry('2026-06-01', {
        hours: 1.04,
        regular_hours: 1.04,
        sessions: 4,
        open_sessions: 1,
        flags: ['open_session', 'pending_review'],
      }),
    )
  })

  it('starts a workweek on each weekday', () => {
    // 2026-06-03 is a Wednesday.
    expect(workweekStart('2026-06-03', 'monday')).toBe('2026-06-01')
    expect(workweekStart('2026-06-03', 'wednesday')).toBe('2026-06-03')
    expect(workweekStart('2026-06-03', 'thursday')).toBe('2026-05-28')
    expect(workweekStart('2026-06-03', 'sunday')).toBe('2026-05-31')
    expect(workweekStart('2026-01-01', 'saturday')).toBe('2025-12-27')
    expect(() => workweekStart('2026-6-3', 'monday')).toThrow(RangeError)
    expect(() => workweekStart('June 3rd', 'monday')).toThrow(RangeError)
  })

  it('counts a session whose rounded check-out is not after its rounded check-in as zero', () => {
    // 08:05 → 08:20 by the hour, in up and out down: 09:00 → 08:00.
    const hourly = rule({ rounding: { interval_minutes: 60, check_in: 'up', check_out: 'down' } })
    const [day] = payDays([session(utc('2026-06-01', 15, { in: '2026-06-01T08:05:00Z' }))], hourly)
    expect(day && asEntry(day)).toEqual(entry('2026-06-01', {}))
  })

  it('deducts no more than the time there is', () => {
    // 40 min, after 30 → 60: the rule takes off all 40 minutes there are, and says so (not 60).
    const greedy = rule({ breaks: [{ after_minutes: 30, minutes: 60, action: 'deduct' }] })
    const [day] = payDays([session(utc('2026-06-01', 40))], greedy)
    expect(day?.countedMs).toBe(0)
    expect(day?.autoBreakMs).toBe(40 * MINUTE)
  })
})
