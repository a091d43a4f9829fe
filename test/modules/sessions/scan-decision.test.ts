import { describe, expect, it } from 'vitest'
import type { StoredBreak } from '../../../src/db/schema.js'
import { SCAN_FLAG_REASONS } from '../../../src/modules/scans/schemas.js'
import {
  DUPLICATE_WINDOW_MS,
  decideScan,
  isDuplicateOf,
  MAX_SHIFT_MS,
  type OpenSession,
  type ScanDirection,
  type ScanFacts,
  type ScanOutcome,
} from '../../../src/modules/sessions/scan-decision.js'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
/** 2026-03-02 08:00 UTC: the scans of the table happen around it. */
const T = Date.parse('2026-03-02T08:00:00.000Z')

const brk = (start: number, end: number | null): StoredBreak => ({ start, end, paid: false, source: 'scan' })

/** An open session checked in at `checkIn`, with break records. */
const session = (checkIn: number, breaks: StoredBreak[] = []): OpenSession => ({
  id: 'ses_open',
  check_in_at: checkIn,
  work_date: '2026-03-02',
  breaks: JSON.stringify(breaks),
})

/**
 * What the database would answer about a scan's operator: every fact the decision may ask for.
 * Defaults: active, no accepted scan near, no open session, nothing late, no closed period.
 */
interface World {
  active?: boolean
  acceptedScanAt?: number | null
  open?: OpenSession | null
  late?: boolean
  workDate?: string
  /** The work dates a closed pay period holds. */
  closedDates?: string[]
}

interface Row {
  name: string
  direction: ScanDirection
  at: number
  world: World
  /** The facts the decision asks for, in order (each a read, or the over-long session's closure). */
  asks: string[]
  expected: ScanOutcome
}

const flagged = (reason: string, sessionId?: string) =>
  ({ result: 'flagged', reason, ...(sessionId === undefined ? {} : { sessionId }) }) as ScanOutcome

const open8 = session(T)
const onBreak = session(T, [brk(T + 4 * HOUR, null)])
const afterBreak = session(T, [brk(T + 4 * HOUR, T + 4.5 * HOUR)])
const tenBreaks = session(
  T,
  Array.from({ length: 10 }, (_, i) => brk(T + i * 10 * MINUTE, T + i * 10 * MINUTE + MINUTE)),
)
const overlong = session(T - 17 * HOUR)

const rows: Row[] = [
  // Check-in
  {
    name: 'auto, no open session: checks in on the device’s work date',
    direction: 'auto',
    at: T,
    world: {},
    asks: ['accepted_scan', 'open_session', 'late', 'work_date', 'period_closed 2026-03-02'],
    expected: { result: 'checked_in', workDate: '2026-03-02' },
  },
  {
    name: 'in, no open session, a location whose day is another',
    direction: 'in',
    at: T,
    world: { workDate: '2026-03-01' },
    asks: ['accepted_scan', 'open_session', 'late', 'work_date', 'period_closed 2026-03-01'],
    expected: { result: 'checked_in', workDate: '2026-03-01' },
  },
  {
    name: 'in, an accepted scan a minute before: not a repeat',
    direction: 'in',
    at: T,
    world: { acceptedScanAt: T - DUPLICATE_WINDOW_MS },
    asks: ['accepted_scan', 'open_session', 'late', 'work_date', 'period_closed 2026-03-02'],
    expected: { result: 'checked_in', workDate: '2026-03-02' },
  },
  {
    name: 'auto after an open session of 17 hours: closes it, then checks in',
    direction: 'auto',
    at: T,
    world: { open: overlong },
    asks: [
      'accepted_scan',
      'open_session',
      'close_overlong',
      'late',
      'work_date',
      'period_closed 2026-03-02',
    ],
    expected: { result: 'checked_in', workDate: '2026-03-02' },
  },
  {
    name: 'in after an open session of exactly 16 hours: already checked in, nothing closed',
    direction: 'in',
    at: T + MAX_SHIFT_MS,
    world: { open: open8 },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('already_checked_in'),
  },
  // Check-out
  {
    name: 'auto with an open session: checks out',
    direction: 'auto',
    at: T + 8 * HOUR,
    world: { open: open8 },
    asks: ['accepted_scan', 'open_session', 'period_closed 2026-03-02'],
    expected: { result: 'checked_out', session: open8 },
  },
  {
    name: 'out during a break: checks out (the break ends with it)',
    direction: 'out',
    at: T + 5 * HOUR,
    world: { open: onBreak },
    asks: ['accepted_scan', 'open_session', 'period_closed 2026-03-02'],
    expected: { result: 'checked_out', session: onBreak },
  },
  {
    name: 'out right at the end of the last break',
    direction: 'out',
    at: T + 4.5 * HOUR,
    world: { open: afterBreak },
    asks: ['accepted_scan', 'open_session', 'period_closed 2026-03-02'],
    expected: { result: 'checked_out', session: afterBreak },
  },
  // Breaks
  {
    name: 'break_start in an open session',
    direction: 'break_start',
    at: T + 4 * HOUR,
    world: { open: open8 },
    asks: ['accepted_scan', 'open_session', 'period_closed 2026-03-02'],
    expected: { result: 'break_started', session: open8, breaks: [brk(T + 4 * HOUR, null)] },
  },
  {
    name: 'break_end of the break going on',
    direction: 'break_end',
    at: T + 4.5 * HOUR,
    world: { open: onBreak },
    asks: ['accepted_scan', 'open_session', 'period_closed 2026-03-02'],
    expected: { result: 'break_ended', session: onBreak, breaks: [brk(T + 4 * HOUR, T + 4.5 * HOUR)] },
  },
  // Flags, one row per reason (and per way to reach it)
  {
    name: 'inactive operator: flagged before anything is read',
    direction: 'auto',
    at: T,
    world: { active: false, acceptedScanAt: T, open: open8 },
    asks: [],
    expected: flagged('inactive_operator'),
  },
  {
    name: 'an accepted scan 30 s before: a repeat',
    direction: 'auto',
    at: T,
    world: { acceptedScanAt: T - 30_000, open: open8 },
    asks: ['accepted_scan'],
    expected: flagged('duplicate_scan'),
  },
  {
    name: 'an accepted scan 59.999 s after (a device that synced late): a repeat',
    direction: 'out',
    at: T,
    world: { acceptedScanAt: T + DUPLICATE_WINDOW_MS - 1 },
    asks: ['accepted_scan'],
    expected: flagged('duplicate_scan'),
  },
  {
    name: 'out with no open session',
    direction: 'out',
    at: T,
    world: {},
    asks: ['accepted_scan', 'open_session', 'late'],
    expected: flagged('no_open_session'),
  },
  {
    name: 'break_start with no open session',
    direction: 'break_start',
    at: T,
    world: {},
    asks: ['accepted_scan', 'open_session', 'late'],
    expected: flagged('no_open_session'),
  },
  {
    name: 'in with an open session',
    direction: 'in',
    at: T + HOUR,
    world: { open: open8 },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('already_checked_in'),
  },
  {
    name: 'auto at the very instant of the check-in (the repeat window passed by a late sync)',
    direction: 'auto',
    at: T,
    world: { open: open8 },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('invalid_time_range'),
  },
  {
    name: 'break_end at the instant its break started',
    direction: 'break_end',
    at: T + 4 * HOUR,
    world: { open: onBreak },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('invalid_time_range'),
  },
  {
    name: 'out after an open session of 17 hours: reports the closure it caused',
    direction: 'out',
    at: T,
    world: { open: overlong },
    asks: ['accepted_scan', 'open_session', 'close_overlong'],
    expected: flagged('max_shift_exceeded', 'ses_open'),
  },
  {
    name: 'break_start after an open session of 17 hours: reports the closure',
    direction: 'break_start',
    at: T,
    world: { open: overlong },
    asks: ['accepted_scan', 'open_session', 'close_overlong'],
    expected: flagged('max_shift_exceeded', 'ses_open'),
  },
  {
    name: 'a check-in on a work date of a closed period',
    direction: 'auto',
    at: T,
    world: { closedDates: ['2026-03-02'] },
    asks: ['accepted_scan', 'open_session', 'late', 'work_date', 'period_closed 2026-03-02'],
    expected: flagged('period_closed'),
  },
  {
    name: 'a check-out of a session whose work date is in a closed period',
    direction: 'auto',
    at: T + 8 * HOUR,
    world: { open: open8, closedDates: ['2026-03-02'] },
    asks: ['accepted_scan', 'open_session', 'period_closed 2026-03-02'],
    expected: flagged('period_closed'),
  },
  {
    name: 'a break of a session whose work date is in a closed period',
    direction: 'break_start',
    at: T + 4 * HOUR,
    world: { open: open8, closedDates: ['2026-03-02'] },
    asks: ['accepted_scan', 'open_session', 'period_closed 2026-03-02'],
    expected: flagged('period_closed'),
  },
  {
    name: 'a scan before the open session’s check-in',
    direction: 'auto',
    at: T - MINUTE * 5,
    world: { open: open8 },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('out_of_order'),
  },
  {
    name: 'a break scan before the open session’s check-in',
    direction: 'break_end',
    at: T - HOUR,
    world: { open: onBreak },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('out_of_order'),
  },
  {
    name: 'a check-out before a break the session recorded',
    direction: 'out',
    at: T + 4.25 * HOUR,
    world: { open: afterBreak },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('out_of_order'),
  },
  {
    name: 'a check-out at the start of the break going on',
    direction: 'auto',
    at: T + 4 * HOUR,
    world: { open: onBreak },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('out_of_order'),
  },
  {
    name: 'a check-in that a recorded session covers',
    direction: 'auto',
    at: T,
    world: { late: true },
    asks: ['accepted_scan', 'open_session', 'late'],
    expected: flagged('out_of_order'),
  },
  {
    name: 'a check-out that a recorded session covers (late before no open session)',
    direction: 'out',
    at: T,
    world: { late: true },
    asks: ['accepted_scan', 'open_session', 'late'],
    expected: flagged('out_of_order'),
  },
  {
    name: 'a break scan that a recorded session covers',
    direction: 'break_end',
    at: T,
    world: { late: true },
    asks: ['accepted_scan', 'open_session', 'late'],
    expected: flagged('out_of_order'),
  },
  {
    name: 'break_start inside a break already recorded',
    direction: 'break_start',
    at: T + 4.25 * HOUR,
    world: { open: afterBreak },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('out_of_order'),
  },
  {
    name: 'break_end before the break going on started',
    direction: 'break_end',
    at: T + 3 * HOUR,
    world: { open: onBreak },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('out_of_order'),
  },
  {
    name: 'break_end with no break going on',
    direction: 'break_end',
    at: T + 5 * HOUR,
    world: { open: afterBreak },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('no_open_break'),
  },
  {
    name: 'break_start during a break',
    direction: 'break_start',
    at: T + 5 * HOUR,
    world: { open: onBreak },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('break_in_progress'),
  },
  {
    name: 'break_start after ten breaks',
    direction: 'break_start',
    at: T + 3 * HOUR,
    world: { open: tenBreaks },
    asks: ['accepted_scan', 'open_session'],
    expected: flagged('too_many_breaks'),
  },
]

/**
 * Runs the decision as `scanning.ts` does: starts from what a scan always knows, answers each
 * question from `world` (the closure of an over-long session leaves no open session), and records
 * the questions.
 */
function decide(row: Row): { asks: string[]; outcome: ScanOutcome } {
  const { world } = row
  let facts: ScanFacts = { at: row.at, direction: row.direction, active: world.active ?? true }
  const asks: string[] = []
  for (;;) {
    const step = decideScan(facts)
    if ('result' in step) return { asks, outcome: step }
    asks.push(step.next === 'period_closed' ? `${step.next} ${step.workDate}` : step.next)
    expect(asks.length, 'each fact is asked once').toBeLessThan(8)
    switch (step.next) {
      case 'accepted_scan':
        facts = { ...facts, acceptedScanAt: world.acceptedScanAt ?? null }
        break
      case 'open_session':
        facts = { ...facts, open: world.open ?? null }
        break
      case 'close_overlong':
        facts = { ...facts, open: null, closed: step.session.id }
        break
      case 'late':
        facts = { ...facts, late: world.late ?? false }
        break
      case 'work_date':
        facts = { ...facts, workDate: world.workDate ?? '2026-03-02' }
        break
      case 'period_closed':
        facts = { ...facts, periodClosed: (world.closedDates ?? []).includes(step.workDate) }
        break
    }
  }
}

describe('decideScan: the worked examples', () => {
  for (const row of rows) {
    it(`${row.direction} — ${row.name}`, () => {
      expect(decide(row)).toEqual({ asks: row.asks, outcome: row.expected })
    })
  }

  it('covers every result and every flag reason a scan can have', () => {
    const outcomes = rows.map((row) => row.expected)
    expect(new Set(outcomes.map((o) => o.result))).toEqual(
      new Set(['checked_in', 'checked_out', 'break_started', 'break_ended', 'flagged']),
    )
    const reasons = outcomes.flatMap((o) => (o.result === 'flagged' ? [o.reason] : []))
    expect([...new Set(reasons)].sort()).toEqual([...SCAN_FLAG_REASONS].sort())
  })
})

describe('isDuplicateOf: less than a minute apart, either way', () => {
  const cases: Array<[offset: number, duplicate: boolean]> = [
    [0, true],
    [DUPLICATE_WINDOW_MS - 1, true],
    [-(DUPLICATE_WINDOW_MS - 1), true],
    [DUPLICATE_WINDOW_MS, false],
    [-DUPLICATE_WINDOW_MS, false],
  ]
  for (const [offset, duplicate] of cases) {
    it(`${offset} ms apart: ${duplicate}`, () => {
      expect(isDuplicateOf(T, T + offset)).toBe(duplicate)
    })
  }
})
