import { PostgresAdapter, type RawBuilder, sql } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { ownedBy } from '../../db/scope.js'
import type { Executor } from '../../db/types.js'

export interface TimesheetFilters {
  from: string
  to: string
  operator_id?: string | undefined
  location_id?: string | undefined
}

/** Where a batch starts: groups at or after (operator_ident, work_date), in that order. */
export interface DayKey {
  operatorIdent: string
  date: string
}

/** The totals of one operator on one work date; durations in exact milliseconds. */
export interface DayTotalsRow {
  operator_ident: string
  operator_id: string
  work_date: string
  approved_ms: number
  pending_ms: number
  rejected_ms: number
  sessions: number
  open_sessions: number
}

/** Worked time of a completed session: check-out − check-in − break, in ms (bigint on PostgreSQL). */
const WORKED_MS = sql`check_out_at - check_in_at - break_minutes * cast(60000 as bigint)`

function workedMsWhere(condition: RawBuilder<unknown>) {
  return sql<
    number | string
  >`sum(case when ${condition} and check_out_at is not null then ${WORKED_MS} else 0 end)`
}

/**
 * One batch of per-operator, per-day totals, ordered by (operator_ident, work_date), starting at
 * `from` (inclusive). The sums are of exact milliseconds, in SQL; rounding is the caller's, once.
 * The partial index sessions_timesheet (account, mode, operator_ident, work_date) gives the rows in
 * group order, so the database aggregates as it reads and stops at `take` groups: a first page
 * reads a few operators' sessions, not the month.
 */
export function dayTotalsQuery(
  db: Executor,
  auth: AuthContext,
  f: TimesheetFilters,
  start: DayKey | undefined,
  take: number,
) {
  // SQLite's planner, without statistics, would rather read the month through sessions_work_date
  // and sort it; a unary + on the range's column (SQLite's own idiom) keeps that index out, so it
  // takes sessions_timesheet, in group order, and stops after `take` groups. PostgreSQL plans on
  // statistics and needs no such hint (the plans are in docs/performance-log.md).
  const workDate = db.getExecutor().adapter instanceof PostgresAdapter ? sql`work_date` : sql`+work_date`
  return (
    db
      .selectFrom('sessions')
      .select([
        'operator_ident',
        'work_date',
        sql<string>`max(operator_id)`.as('operator_id'),
        workedMsWhere(sql`review_status in ('approved', 'not_required')`).as('approved_ms'),
        workedMsWhere(sql`review_status = 'pending'`).as('pending_ms'),
        workedMsWhere(sql`review_status = 'rejected'`).as('rejected_ms'),
        sql<number | string>`count(*)`.as('sessions'),
        sql<number | string>`sum(case when status = 'open' then 1 else 0 end)`.as('open_sessions'),
      ])
      .where((eb) => eb.and(ownedBy(auth)))
      .where('deleted_at', 'is', null)
      .where(sql<boolean>`${workDate} >= ${f.from} and ${workDate} <= ${f.to}`)
      .$if(f.operator_id !== undefined, (q) => q.where('operator_id', '=', f.operator_id ?? ''))
      .$if(f.location_id !== undefined, (q) => q.where('location_id', '=', f.location_id ?? ''))
      // Always a keyset bound, from ('', from) on the first batch: it makes the index in group order
      // (sessions_timesheet) the obvious plan, so the database aggregates as it reads and stops after
      // `take` groups, instead of aggregating the whole range through the work-date index and sorting.
      .where(
        sql<boolean>`(operator_ident, work_date) >= (${start?.operatorIdent ?? ''}, ${start?.date ?? f.from})`,
      )
      .groupBy(['operator_ident', 'work_date'])
      .orderBy('operator_ident')
      .orderBy('work_date')
      .limit(take)
  )
}

export async function dayTotals(
  db: Executor,
  auth: AuthContext,
  f: TimesheetFilters,
  start: DayKey | undefined,
  take: number,
): Promise<DayTotalsRow[]> {
  const rows = await dayTotalsQuery(db, auth, f, start, take).execute()
  // PostgreSQL answers sums of bigint as numeric (text); every value here is an integer well
  // inside 2^53.
  return rows.map((r) => ({
    operator_ident: r.operator_ident,
    operator_id: r.operator_id,
    work_date: r.work_date,
    approved_ms: Number(r.approved_ms),
    pending_ms: Number(r.pending_ms),
    rejected_ms: Number(r.rejected_ms),
    sessions: Number(r.sessions),
    open_sessions: Number(r.open_sessions),
  }))
}

/** Names and employee ids of the operators of a batch. */
export async function operatorDetails(db: Executor, auth: AuthContext, ids: readonly string[]) {
  if (ids.length === 0) return new Map<string, { name: string | null; employee_id: string | null }>()
  const rows = await db
    .selectFrom('operators')
    .select(['id', 'name', 'employee_id'])
    .where((eb) => eb.and(ownedBy(auth)))
    .where('id', 'in', ids)
    .execute()
  return new Map(rows.map((r) => [r.id, { name: r.name, employee_id: r.employee_id }]))
}

/**
 * How many entries the timesheet has (day or ISO-week groups): sent with a CSV as `X-Total-Count`
 * so a download can show its progress. Weeks are numbered from 0001-01-01, a Monday.
 */
export async function countTimesheetEntries(
  db: Executor,
  auth: AuthContext,
  f: TimesheetFilters,
  groupBy: 'day' | 'week',
): Promise<number> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  const period =
    groupBy === 'day'
      ? sql`work_date`
      : postgres
        ? sql`(cast(work_date as date) - date '0001-01-01') / 7`
        : sql`cast((julianday(work_date) - julianday('0001-01-01')) / 7 as integer)`
  const groups = db
    .selectFrom('sessions')
    .select(sql<number>`1`.as('one'))
    .where((eb) => eb.and(ownedBy(auth)))
    .where('deleted_at', 'is', null)
    .where('work_date', '>=', f.from)
    .where('work_date', '<=', f.to)
    .$if(f.operator_id !== undefined, (q) => q.where('operator_id', '=', f.operator_id ?? ''))
    .$if(f.location_id !== undefined, (q) => q.where('location_id', '=', f.location_id ?? ''))
    // Period first: the order of sessions_work_date (work_date, operator_ident), read alone.
    .groupBy([period, sql`operator_ident`])
  const row = await db
    .selectFrom(groups.as('g'))
    .select(sql<number | string>`count(*)`.as('n'))
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}
