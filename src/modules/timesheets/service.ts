import type { Readable } from 'node:stream'
import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Executor } from '../../db/types.js'
import { addDays, daysBetween } from '../../lib/dates.js'
import { findNamedOperator } from '../operators/service.js'
import { listAllPayRules, type PayRule } from '../pay-rules/service.js'
import { timesheetCsvStream } from './csv.js'
import {
  foldDays,
  type PayDay,
  payDays,
  payFlags,
  payHours,
  type SessionForPay,
  type Weekday,
  workweekStart,
} from './pay-calculation.js'
import { type ListTimesheetsQuery, MAX_TIMESHEET_DAYS, type TimesheetEntry } from './schemas.js'
import {
  type ClosedDayRow,
  closedDays,
  closedPeriodsBetween,
  countTimesheetEntries,
  locationZones,
  type OperatorBound,
  operatorDetails,
  type SessionPayRow,
  sessionPayRows,
  type TimesheetFilters,
} from './timesheet-read-model.js'

export type GroupBy = 'day' | 'week'

export interface TimesheetQuery extends TimesheetFilters {
  groupBy: GroupBy
}

/** One entry before rounding: exact milliseconds, so a week is a sum of its days' exact sums. */
export interface TimesheetTotals extends PayDay {
  operator_id: string
  operator_ident: string
  employee_id: string | null
  name: string | null
  /** The rule the entry was computed with (for a stored day: the rule of its close). */
  pay_rule_id: string | null
}

/** The cursor of a timesheet page: the last entry's operator ident and date. */
export type TimesheetKey = [operatorIdent: string, date: string]

export function isTimesheetKey(value: unknown): value is TimesheetKey {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'string' &&
    /^\d{4}-\d{2}-\d{2}$/.test(value[1])
  )
}

/** The query's rules beyond its schema: `to` not before `from`, at most 366 days. */
export function timesheetQuery(query: ListTimesheetsQuery): TimesheetQuery {
  const days = daysBetween(query.from, query.to) + 1
  if (days < 1) throw errors.invalidDateRange('to', 'to must not be before from.')
  if (days > MAX_TIMESHEET_DAYS) {
    throw errors.invalidDateRange(
      'to',
      `A timesheet spans at most ${MAX_TIMESHEET_DAYS} days (this one ${days}).`,
    )
  }
  return {
    from: query.from,
    to: query.to,
    operator_id: query.operator_id,
    location_id: query.location_id,
    groupBy: query.group_by ?? 'day',
  }
}

/** What a timesheet reads once, before its sessions: the rules, the zones, the closed periods. */
interface PayContext {
  rules: Map<string, PayRule>
  defaultRule: PayRule | null
  zones: Map<string, string>
  /** Closed periods whose stored days stand in for their sessions (none with a location filter). */
  closed: Array<{ start_date: string; end_date: string }>
  /** The first work date read: a workweek before `from` when a rule counts weeks, else `from`. */
  windowStart: string
}

async function payContext(db: Executor, auth: AuthContext, query: TimesheetQuery): Promise<PayContext> {
  const all = await listAllPayRules(db, auth)
  const rules = new Map(all.map((r) => [r.id, r]))
  const defaultRule = all.find((r) => r.is_default) ?? null
  // Weekly overtime and the seventh day read the workweek's earlier days (at most six before
  // `from`); without a rule that counts weeks, nothing before `from` changes an entry.
  const countsWeeks = all.some((r) => r.overtime.weekly_minutes !== null || r.overtime.seventh_day)
  const windowStart = countsWeeks ? addDays(query.from, -6) : query.from
  // A location's timesheet is a view, not the payroll record: it is computed from that location's
  // sessions alone, so the stored days (of every location) cannot stand in for it.
  const closed =
    query.location_id === undefined ? await closedPeriodsBetween(db, auth, windowStart, query.to) : []
  return { rules, defaultRule, zones: await locationZones(db, auth), closed, windowStart }
}

/** The sessions of one operator, read in order, before the calculation. */
interface OperatorRows {
  operator_id: string
  operator_ident: string
  rows: SessionPayRow[]
}

/**
 * Every operator of the timesheet with its sessions in [windowStart, to], from `start` on, read in
 * keyset batches of about `batch` sessions that always hold whole operators (a full batch is cut
 * before its last operator, who is read again at the head of the next): memory holds one batch
 * whatever the range, and no connection is held between batches.
 */
async function* operatorBatches(
  db: Executor,
  auth: AuthContext,
  query: TimesheetQuery,
  windowStart: string,
  start: OperatorBound,
  batch: number,
): AsyncGenerator<OperatorRows[], void, undefined> {
  const filters = { ...query, from: windowStart }
  let bound = start
  let take = batch
  for (;;) {
    const rows = await sessionPayRows(db, auth, filters, bound, take)
    const operators = groupByOperator(rows)
    const full = rows.length === take
    if (full) {
      // The last operator may go on in the next batch: read it whole there. One operator with
      // more sessions than the batch: read again with a larger batch.
      if (operators.length === 1) {
        take *= 2
        continue
      }
      operators.pop()
    }
    if (operators.length > 0) yield operators
    const last = operators[operators.length - 1]
    if (!full || !last) return
    bound = { ident: last.operator_ident, inclusive: false }
    take = batch
  }
}

function groupByOperator(rows: readonly SessionPayRow[]): OperatorRows[] {
  const operators: OperatorRows[] = []
  let current: OperatorRows | undefined
  for (const row of rows) {
    if (current?.operator_ident !== row.operator_ident) {
      current = { operator_id: row.operator_id, operator_ident: row.operator_ident, rows: [] }
      operators.push(current)
    }
    current.rows.push(row)
  }
  return operators
}

const NO_BREAKS = '[]'

/** A stored break record (migration 011) as the calculation reads it. */
interface StoredBreak {
  start: number
  end: number | null
  paid: boolean
}

function sessionForPay(row: SessionPayRow, zones: ReadonlyMap<string, string>): SessionForPay {
  return {
    work_date: row.work_date,
    time_zone: (row.location_id !== null && zones.get(row.location_id)) || 'UTC',
    check_in_at: row.check_in_at,
    check_out_at: row.check_out_at,
    break_minutes: row.break_minutes,
    // Most sessions have none: skip the parse.
    breaks: row.breaks === NO_BREAKS ? [] : (JSON.parse(row.breaks) as StoredBreak[]),
    review_status: row.review_status,
    open: row.status === 'open',
  }
}

function storedDay(row: ClosedDayRow): PayDay & { pay_rule_id: string | null } {
  return {
    date: row.date,
    countedMs: row.counted_ms,
    pendingMs: row.pending_ms,
    rejectedMs: row.rejected_ms,
    regularMs: row.regular_ms,
    overtimeMs: row.overtime_ms,
    doubleTimeMs: row.double_time_ms,
    autoBreakMs: row.auto_break_ms,
    sessions: row.sessions,
    openSessions: row.open_sessions,
    missedBreak: row.missed_break === 1,
    pendingReview: row.pending_review === 1,
    pay_rule_id: row.pay_rule_id,
  }
}

/**
 * Every entry of a timesheet after `after` (a page's cursor), in order (operator_ident, date).
 * Per operator: its rule (its own, else the account's default, else none), the calculation of
 * pay-calculation.ts over its sessions, with the days a closed period stored standing in for
 * theirs (and counting toward their workweek); then the days in [from, to], folded into workweeks
 * with `group_by=week`.
 */
export async function* timesheetTotals(
  db: Executor,
  auth: AuthContext,
  query: TimesheetQuery,
  after: TimesheetKey | undefined,
  batch: number,
): AsyncGenerator<TimesheetTotals, void, undefined> {
  const ctx = await payContext(db, auth, query)
  const start: OperatorBound = { ident: after?.[0] ?? '', inclusive: true }
  const isClosed = (date: string) => ctx.closed.some((p) => date >= p.start_date && date <= p.end_date)
  for await (const operators of operatorBatches(db, auth, query, ctx.windowStart, start, batch)) {
    const ids = operators.map((o) => o.operator_id)
    const details = await operatorDetails(db, auth, ids)
    const stored = ctx.closed.length > 0 ? await closedDays(db, auth, ids, ctx.windowStart, query.to) : []
    for (const operator of operators) {
      const detail = details.get(operator.operator_id)
      const rule = (detail?.pay_rule_id ? ctx.rules.get(detail.pay_rule_id) : undefined) ?? ctx.defaultRule
      const fixed = stored.filter((d) => d.operator_id === operator.operator_id).map(storedDay)
      const sessions = operator.rows
        .filter((r) => fixed.length === 0 || !isClosed(r.work_date))
        .map((r) => sessionForPay(r, ctx.zones))
      const computed = payDays(sessions, rule, fixed).map((d) => ({ ...d, pay_rule_id: rule?.id ?? null }))
      const days = [...computed, ...fixed]
        .filter((d) => d.date >= query.from && d.date <= query.to)
        .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
      const base = {
        operator_id: operator.operator_id,
        operator_ident: operator.operator_ident,
        employee_id: detail?.employee_id ?? null,
        name: detail?.name ?? null,
      }
      const entries = query.groupBy === 'week' ? foldWeeks(days, rule?.workweek_start ?? 'monday') : days
      for (const day of entries) {
        if (after && operator.operator_ident === after[0] && day.date <= after[1]) continue
        yield { ...day, ...base }
      }
    }
  }
}

/** Consecutive days of one workweek folded into one entry dated the week's first day. */
function foldWeeks<T extends PayDay & { pay_rule_id: string | null }>(days: readonly T[], start: Weekday) {
  const weeks: Array<PayDay & { pay_rule_id: string | null }> = []
  let group: T[] = []
  let week = ''
  const flush = () => {
    const last = group[group.length - 1]
    if (last) weeks.push({ ...foldDays(week, group), pay_rule_id: last.pay_rule_id })
  }
  for (const day of days) {
    const first = workweekStart(day.date, start)
    if (first !== week) {
      flush()
      group = []
      week = first
    }
    group.push(day)
  }
  flush()
  return weeks
}

/** The first `take` entries after `after`: one page. */
export async function timesheetPage(
  db: Executor,
  auth: AuthContext,
  query: TimesheetQuery,
  after: TimesheetKey | undefined,
  take: number,
): Promise<TimesheetTotals[]> {
  const entries: TimesheetTotals[] = []
  // Sessions, not entries: a day has one or two sessions, and a week up to seven days' worth.
  const batch = (query.groupBy === 'week' ? 14 : 2) * take + 50
  for await (const entry of timesheetTotals(db, auth, query, after, batch)) {
    entries.push(entry)
    if (entries.length >= take) break
  }
  return entries
}

export const timesheetKeyOf = (entry: TimesheetTotals): TimesheetKey => [entry.operator_ident, entry.date]

/** The API object: each sum rounded half-up to 2 decimals, once; the split by largest remainder. */
export function toTimesheetEntry(entry: TimesheetTotals): TimesheetEntry {
  return {
    object: 'timesheet_entry',
    operator_id: entry.operator_id,
    operator_ident: entry.operator_ident,
    employee_id: entry.employee_id,
    name: entry.name,
    date: entry.date,
    ...payHours(entry),
    sessions: entry.sessions,
    open_sessions: entry.openSessions,
    flags: payFlags(entry),
    pay_rule_id: entry.pay_rule_id,
  }
}

/** Sessions per database batch of a CSV (and of a pay period's close). */
export const CSV_BATCH = 5000

/**
 * The CSV's download name: `timesheet-<from>-<to>.csv`, and for one operator's timesheet its ident
 * after the dates (its id when no operator of the caller has it), so that a file saved with an
 * operator filter does not pass for the whole team's. Characters a file name or the header cannot
 * hold safely become `_`.
 */
export async function timesheetCsvFilename(
  db: Executor,
  auth: AuthContext,
  query: TimesheetQuery,
): Promise<string> {
  const dates = `timesheet-${query.from}-${query.to}`
  if (query.operator_id === undefined) return `${dates}.csv`
  const operator = await findNamedOperator(db, auth, { operator_id: query.operator_id })
  const who = (operator?.ident ?? query.operator_id).replace(/[^A-Za-z0-9._-]+/g, '_')
  return `${dates}-${who}.csv`
}

/**
 * The whole timesheet as CSV (csv.ts), as a stream that reads the database batch by batch as the
 * client takes the bytes (backpressure): memory stays flat whatever the range. The first batch is
 * read before this resolves, so a failure there is still an ordinary error answer.
 */
export async function timesheetCsv(
  db: Executor,
  auth: AuthContext,
  query: TimesheetQuery,
  batch = CSV_BATCH,
): Promise<{ rows: number; stream: Readable }> {
  // For a download's progress only: sessions written while it streams may change the real count.
  const rules = query.groupBy === 'week' ? await listAllPayRules(db, auth) : []
  const workweeks = rules.some((r) => r.workweek_start !== 'monday')
    ? { defaultStart: rules.find((r) => r.is_default)?.workweek_start ?? 'monday' }
    : undefined
  const rows = await countTimesheetEntries(db, auth, query, query.groupBy, workweeks)
  const stream = await timesheetCsvStream(apiEntries(timesheetTotals(db, auth, query, undefined, batch)))
  return { rows, stream }
}

async function* apiEntries(totals: AsyncGenerator<TimesheetTotals>): AsyncGenerator<TimesheetEntry> {
  for await (const entry of totals) yield toTimesheetEntry(entry)
}

/** Whether the client asked for CSV: `text/csv` listed in Accept before `application/json`. */
export function wantsCsv(accept: string | undefined): boolean {
  if (accept === undefined) return false
  for (const part of accept.split(',')) {
    const type = part.split(';')[0]?.trim().toLowerCase()
    if (type === 'text/csv') return true
    if (type === 'application/json' || type === '*/*' || type === 'application/*') return false
  }
  return false
}
