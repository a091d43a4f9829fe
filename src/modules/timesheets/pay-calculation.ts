import { WEEKDAYS, type Weekday } from '../../lib/dates.js'
import { toIso } from '../../lib/time.js'
import { hoursOfMs } from '../sessions/hours.js'

/**
 * The pay calculation of decisions.md, "Pay rules: rounding, breaks and overtime" (steps 1–7 of "How a
 * timesheet counts a session"): one operator's sessions and rule in, day entries out. Pure (no
 * database, no HTTP, no clock), so the timesheet service, a closed period's stored entries and the
 * bench all count a session the same way, and the worked examples and properties test it alone.
 * Every sum is in exact milliseconds; hours are rounded once, at the end (payHours).
 */

export type { Weekday }
export type RoundingMode = 'nearest' | 'up' | 'down'

export interface PayRuleTerms {
  id: string
  workweek_start: Weekday
  rounding: { interval_minutes: number; check_in: RoundingMode; check_out: RoundingMode }
  breaks: ReadonlyArray<{ after_minutes: number; minutes: number; action: 'deduct' | 'flag' }>
  overtime: {
    daily_minutes: number | null
    daily_double_minutes: number | null
    weekly_minutes: number | null
    seventh_day: boolean
  }
}

/** One session of one operator, as the timesheet reads it. Instants are epoch ms. */
export interface SessionForPay {
  /** YYYY-MM-DD: the session counts, whole, on this date (step 4). */
  work_date: string
  /** The session's location's IANA zone, 'UTC' without one: the wall clock that rounding reads. */
  time_zone: string
  check_in_at: number
  /** null: open, or closed without a check-out; counts nothing either way. */
  check_out_at: number | null
  /** Used only when `breaks` is empty. */
  break_minutes: number
  /** end null: the break ends at the (recorded) check-out. */
  breaks: ReadonlyArray<{ start: number; end: number | null; paid: boolean }>
  review_status: 'pending' | 'not_required' | 'approved' | 'rejected'
  /** status === 'open'. */
  open: boolean
}

/** One operator's day (or, folded, week), exact milliseconds. */
export interface PayDay {
  date: string
  /** D: W of approved + not_required completed sessions -> `hours`. */
  countedMs: number
  /** W of the others, never split. */
  pendingMs: number
  rejectedMs: number
  /** regularMs + overtimeMs + doubleTimeMs === countedMs. */
  regularMs: number
  overtimeMs: number
  doubleTimeMs: number
  /** Deducted by `deduct` break rules, from counted sessions only. */
  autoBreakMs: number
  sessions: number
  openSessions: number
  /** A `flag` break rule hit a counted or pending session of the day. */
  missedBreak: boolean
  /** A session of the day is `pending`. */
  pendingReview: boolean
}

/** What a closed period stored for a day: counts toward the week (weekly threshold, seventh day). */
export interface FixedDay {
  date: string
  countedMs: number
  regularMs: number
}

const MINUTE_MS = 60_000
const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000
const MS_PER_HUNDREDTH_HOUR = 36_000

/**
 * Steps 1–6 for ONE operator: sessions in any order, every date it has a session -> one PayDay, sorted
 * by date. `fixed` days (stored by a closed period) are not emitted and their sessions are not given,
 * but they count toward their workweek: their regular time toward `weekly_minutes`, their countedMs > 0
 * toward the seventh day. A session given anyway on a fixed date is ignored: a closed day never changes.
 *
 * Weekly overtime needs a workweek's earlier days: the caller passes the sessions from the workweek
 * start of its first date (or those days as `fixed`); every date given is computed.
 */
export function payDays(
  sessions: readonly SessionForPay[],
  rule: PayRuleTerms | null,
  fixed: readonly FixedDay[] = [],
): PayDay[] {
  const fixedDates = new Set(fixed.map((f) => f.date))
  // Step 3 reads the rules by `after_minutes` ascending (a stable sort keeps equal thresholds in order).
  const breakRules = rule ? [...rule.breaks].sort((a, b) => a.after_minutes - b.after_minutes) : []
  const intervalMs = rule ? rule.rounding.interval_minutes * MINUTE_MS : 0
  const byDate = new Map<string, PayDay>()
  for (const session of sessions) {
    if (fixedDates.has(session.work_date)) continue
    let day = byDate.get(session.work_date)
    if (!day) {
      day = emptyDay(session.work_date)
      byDate.set(session.work_date, day)
    }
    countSession(day, session, rule, intervalMs, breakRules)
  }
  const days = [...byDate.values()].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
  if (rule) splitDays(days, rule, fixed)
  // No rule: every counted millisecond is regular, as timesheets were before pay rules.
  else for (const day of days) day.regularMs = day.countedMs
  return days
}

function emptyDay(date: string): PayDay {
  return {
    date,
    countedMs: 0,
    pendingMs: 0,
    rejectedMs: 0,
    regularMs: 0,
    overtimeMs: 0,
    doubleTimeMs: 0,
    autoBreakMs: 0,
    sessions: 0,
    openSessions: 0,
    missedBreak: false,
    pendingReview: false,
  }
}

/**
 * Steps 1–4 for one session, added to its day. Without a rule (interval 0, no break rules) W is
 * check_out − check_in − U, U being the unpaid break records' exact durations or break_minutes: the
 * old SQL's `check_out_at - check_in_at - break_minutes * 60000` for a session without records (the
 * sessions API keeps break_minutes within the session, so the step-3 floor at 0 changes nothing there).
 */
function countSession(
  day: PayDay,
  session: SessionForPay,
  rule: PayRuleTerms | null,
  intervalMs: number,
  breakRules: PayRuleTerms['breaks'],
): void {
  day.sessions += 1
  if (session.open) day.openSessions += 1
  if (session.review_status === 'pending') day.pendingReview = true
  const checkOut = session.check_out_at
  // Open, or closed without a check-out (a forgotten one): nothing to count until it is set.
  if (checkOut === null) return

  // Step 1: recorded times never change; only the timesheet's copy of them is rounded.
  let start = session.check_in_at
  let end = checkOut
  if (rule && intervalMs > 0) {
    start = roundInstant(start, session.time_zone, intervalMs, rule.rounding.check_in)
    end = roundInstant(end, session.time_zone, intervalMs, rule.rounding.check_out)
  }
  const length = end - start

  // Step 2: breaks are never rounded; records replace break_minutes whenever there are any.
  let unpaid = 0
  if (session.breaks.length === 0) unpaid = session.break_minutes * MINUTE_MS
  else for (const b of session.breaks) if (!b.paid) unpaid += (b.end ?? checkOut) - b.start
  const workedBefore = length - unpaid

  // Step 3: W0 stays the worked time before any rule, so each tier compares the same W0.
  let missedBreak = false
  for (const breakRule of breakRules) {
    const required = breakRule.minutes * MINUTE_MS
    if (workedBefore > breakRule.after_minutes * MINUTE_MS && unpaid < required) {
      if (breakRule.action === 'deduct') unpaid = required
      else missedBreak = true
    }
  }
  const worked = Math.max(length - unpaid, 0)
  // The automatic break is what the rules actually took off: a rule's `minutes` larger than the time
  // left (60 after 30 min on a 40-minute session) deducts the 40 minutes there were, not 60, so that
  // counted + automatic breaks never exceed the session's worked time.
  const autoBreak = Math.max(workedBefore, 0) - worked

  // Step 4: approved and not_required are `hours`; the others are summed apart and never split.
  switch (session.review_status) {
    case 'approved':
    case 'not_required':
      day.countedMs += worked
      day.autoBreakMs += autoBreak
      if (missedBreak) day.missedBreak = true
      break
    case 'pending':
      day.pendingMs += worked
      if (missedBreak) day.missedBreak = true
      break
    case 'rejected':
      // Rejected sessions count for nothing, a missed break included.
      day.rejectedMs += worked
      break
  }
}

/** Steps 5 and 6 over the days (sorted by date), fixed days counting toward their workweeks. */
function splitDays(days: PayDay[], rule: PayRuleTerms, fixed: readonly FixedDay[]): void {
  const { daily_minutes, daily_double_minutes, weekly_minutes, seventh_day } = rule.overtime
  const daily = daily_minutes === null ? Number.POSITIVE_INFINITY : daily_minutes * MINUTE_MS
  const double = daily_double_minutes === null ? null : daily_double_minutes * MINUTE_MS
  const weekly = weekly_minutes === null ? null : weekly_minutes * MINUTE_MS

  type WeekDay = { day: number; countedMs: number; entry: PayDay | null; fixedRegularMs: number }
  const startIndex = WEEKDAYS.indexOf(rule.workweek_start)
  // Weeks keyed by the day number of their first day.
  const weeks = new Map<number, WeekDay[]>()
  const add = (item: WeekDay) => {
    const start = item.day - weekdayAfter(item.day, startIndex)
    const week = weeks.get(start)
    if (week) week.push(item)
    else weeks.set(start, [item])
  }
  for (const entry of days)
    add({ day: dayNumber(entry.date), countedMs: entry.countedMs, entry, fixedRegularMs: 0 })
  for (const f of fixed)
    add({ day: dayNumber(f.date), countedMs: f.countedMs, entry: null, fixedRegularMs: f.regularMs })

  for (const [start, week] of weeks) {
    week.sort((a, b) => a.day - b.day)
    // Step 5's seventh day: the week's seventh date, when each of its seven dates has counted time
    // (dates are unique: sessions of a fixed date are dropped, so seven dates with time are all seven).
    const seventh = seventh_day && week.filter((d) => d.countedMs > 0).length === 7

    let regularSoFar = 0
    for (const item of week) {
      const day = item.entry
      if (!day) {
        // A closed day's stored regular time is the week's so far, as it was when it was closed.
        regularSoFar += item.fixedRegularMs
        continue
      }
      const d = day.countedMs
      if (seventh && item.day === start + 6) {
        day.regularMs = 0
        day.overtimeMs = Math.min(d, daily)
        day.doubleTimeMs = d - day.overtimeMs
      } else {
        // Step 5: double time above the double threshold, regular up to the daily one, overtime between.
        day.doubleTimeMs = double !== null && d > double ? d - double : 0
        day.regularMs = Math.min(d - day.doubleTimeMs, daily)
        day.overtimeMs = d - day.doubleTimeMs - day.regularMs
      }
      // Step 6: only regular time counts toward the weekly threshold, and what crosses it moves once.
      if (weekly !== null) {
        const beyond = Math.min(Math.max(regularSoFar + day.regularMs - weekly, 0), day.regularMs)
        day.regularMs -= beyond
        day.overtimeMs += beyond
      }
      regularSoFar += day.regularMs
    }
  }
}

/** The first day of `date`'s workweek. */
export function workweekStart(date: string, start: Weekday): string {
  const day = dayNumber(date)
  return dateOfDay(day - weekdayAfter(day, WEEKDAYS.indexOf(start)))
}

/**
 * Dates as day numbers (days since 1970-01-01): the week arithmetic of a month timesheet runs once per
 * operator and day, and lib/dates' checked parse and format (a Date round trip each) were most of the
 * calculation's time. The dates here are work dates and stored days, well-formed by construction; a
 * text that is not one is refused, a day past its month's end rolls over as Date.UTC rolls it.
 */
function dayNumber(date: string): number {
  const day =
    Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / DAY_MS
  if (date.length !== 10 || !Number.isInteger(day)) throw new RangeError(`not a date: ${date}`)
  return day
}

function dateOfDay(day: number): string {
  return toIso(day * DAY_MS).slice(0, 10)
}

/** Days from the last `startIndex` weekday (0 Monday … 6 Sunday) to `day`: 0 to 6. 1970-01-01 was a Thursday. */
function weekdayAfter(day: number, startIndex: number): number {
  return mod(day + 3 - startIndex, 7)
}

/** Sum days (already split) into one entry dated `date` (a week's first day): exact ms added, flags or-ed. */
export function foldDays(date: string, days: readonly PayDay[]): PayDay {
  const total = emptyDay(date)
  for (const day of days) {
    total.countedMs += day.countedMs
    total.pendingMs += day.pendingMs
    total.rejectedMs += day.rejectedMs
    total.regularMs += day.regularMs
    total.overtimeMs += day.overtimeMs
    total.doubleTimeMs += day.doubleTimeMs
    total.autoBreakMs += day.autoBreakMs
    total.sessions += day.sessions
    total.openSessions += day.openSessions
    total.missedBreak ||= day.missedBreak
    total.pendingReview ||= day.pendingReview
  }
  return total
}

/**
 * Step 7: every sum rounded half-up to 2 decimals once (hoursOfMs); the split by the largest remainder,
 * so that regular + overtime + double time is `hours` to the hundredth: each part rounded down to
 * hundredths, the hundredths left given one each to the largest remainders, ties to regular, then
 * overtime, then double time. (The parts add up as hundredths; as JavaScript numbers, 0.1 + 0.2 is not
 * 0.3, so a consumer adding them compares at 2 decimals.)
 */
export function payHours(day: PayDay): {
  hours: number
  pending_hours: number
  rejected_hours: number
  regular_hours: number
  overtime_hours: number
  double_time_hours: number
  auto_break_hours: number
} {
  const hours = hoursOfMs(day.countedMs)
  // Each part's whole hundredths and remainder in whole milliseconds, so a tie is exact.
  let regular = Math.floor(day.regularMs / MS_PER_HUNDREDTH_HOUR)
  let overtime = Math.floor(day.overtimeMs / MS_PER_HUNDREDTH_HOUR)
  let doubleTime = Math.floor(day.doubleTimeMs / MS_PER_HUNDREDTH_HOUR)
  const remainders = [
    day.regularMs - regular * MS_PER_HUNDREDTH_HOUR,
    day.overtimeMs - overtime * MS_PER_HUNDREDTH_HOUR,
    day.doubleTimeMs - doubleTime * MS_PER_HUNDREDTH_HOUR,
  ]
  // At most three hundredths are left (each remainder is under one), one to each part at most:
  // the largest remainder first, the earlier part on a tie; a part that got one is out (−1).
  for (let left = Math.round(hours * 100) - regular - overtime - doubleTime; left > 0; left--) {
    let best = 0
    if ((remainders[1] as number) > (remainders[best] as number)) best = 1
    if ((remainders[2] as number) > (remainders[best] as number)) best = 2
    remainders[best] = -1
    if (best === 0) regular++
    else if (best === 1) overtime++
    else doubleTime++
  }
  return {
    hours,
    pending_hours: hoursOfMs(day.pendingMs),
    rejected_hours: hoursOfMs(day.rejectedMs),
    regular_hours: regular / 100,
    overtime_hours: overtime / 100,
    double_time_hours: doubleTime / 100,
    auto_break_hours: hoursOfMs(day.autoBreakMs),
  }
}

export function payFlags(day: PayDay): Array<'missed_break' | 'open_session' | 'pending_review'> {
  // Written in sorted order, so the list is sorted without sorting it.
  const flags: Array<'missed_break' | 'open_session' | 'pending_review'> = []
  if (day.missedBreak) flags.push('missed_break')
  if (day.openSessions > 0) flags.push('open_session')
  if (day.pendingReview) flags.push('pending_review')
  return flags
}

/**
 * Step 1 for one instant: its local wall-clock time in `timeZone` rounded to a multiple of `intervalMs`
 * counted from local midnight, by `mode` (`nearest`: exactly half rounds up), moved back to an instant
 * with the UTC offset of the instant being rounded (rounded instant = instant + (rounded local − local)).
 * So 01:40 PDT on a fall-back night rounds by the hour to 02:00 PDT, which is 01:00 PST. Rounding a
 * rounded instant changes nothing unless a DST change that is not a multiple of the interval lies
 * between them (Australia/Lord_Howe's 30 minutes under an hourly interval).
 */
export function roundInstant(
  instant: number,
  timeZone: string,
  intervalMs: number,
  mode: RoundingMode,
): number {
  const local = instant + utcOffsetMs(instant, timeZone)
  const rest = mod(mod(local, DAY_MS), intervalMs)
  if (rest === 0) return instant
  const down = instant - rest
  if (mode === 'down' || (mode === 'nearest' && rest * 2 < intervalMs)) return down
  return down + intervalMs
}

function mod(a: number, b: number): number {
  return ((a % b) + b) % b
}

/**
 * A zone's formatter, built once (a formatter costs tens of microseconds; the month timesheet rounds
 * millions of instants), and the zone's UTC offset by UTC hour: an hour whose first and last seconds
 * have the same offset has it throughout (zones change offset at most once in an hour), and the hour
 * holding a change (NaN) asks the formatter each time. A month's hours per zone are a few hundred.
 */
interface ZoneClock {
  format: Intl.DateTimeFormat
  offsetByHour: Map<number, number>
}
const zoneClocks = new Map<string, ZoneClock>()
/** Bounds the memory of a long-running process that rounds times over many years. */
const MAX_CACHED_HOURS = 100_000
const WALL_CLOCK = /^(\d{2})\/(\d{2})\/(\d+), (\d{2}):(\d{2}):(\d{2})$/

function utcOffsetMs(instant: number, timeZone: string): number {
  if (timeZone === 'UTC') return 0
  let clock = zoneClocks.get(timeZone)
  if (!clock) {
    clock = {
      format: new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      }),
      offsetByHour: new Map(),
    }
    zoneClocks.set(timeZone, clock)
  }
  const hour = Math.floor(instant / HOUR_MS)
  let offset = clock.offsetByHour.get(hour)
  if (offset === undefined) {
    const first = wallClockOffset(clock.format, hour * HOUR_MS)
    const last = wallClockOffset(clock.format, hour * HOUR_MS + HOUR_MS - 1000)
    offset = first === last ? first : Number.NaN
    if (clock.offsetByHour.size >= MAX_CACHED_HOURS) clock.offsetByHour.clear()
    clock.offsetByHour.set(hour, offset)
  }
  return Number.isNaN(offset) ? wallClockOffset(clock.format, instant) : offset
}

/** The wall clock's reading minus the instant, at the second (offsets are whole seconds). */
function wallClockOffset(format: Intl.DateTimeFormat, instant: number): number {
  const second = instant - mod(instant, 1000)
  // `format` gives "MM/DD/YYYY, HH:MM:SS" at a fraction of `formatToParts`' cost; the parts are the
  // fallback should a runtime word it otherwise.
  const match = WALL_CLOCK.exec(format.format(second))
  const parts = match
    ? { month: match[1], day: match[2], year: match[3], hour: match[4], minute: match[5], second: match[6] }
    : Object.fromEntries(format.formatToParts(second).map((p) => [p.type, p.value]))
  const wall = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  )
  return wall - second
}
