import { PostgresAdapter, type Selectable, sql } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import type { ClosedTimesheetDaysTable } from '../../db/schema.js'
import { ownedBy } from '../../db/scope.js'
import type { Executor } from '../../db/types.js'

/*
 * The timesheet's read model: sessions seen with their operators, locations, pay rules and the days
 * closed pay periods stored (each table owned by its module; test/architecture.test.ts, READ_MODELS).
 * It only reads; every write to those tables is their owner's.
 */

export interface TimesheetFilters {
  from: string
  to: string
  operator_id?: string | undefined
  location_id?: string | undefined
}

/** The columns of a session the pay calculation reads. */
export interface SessionPayRow {
  operator_id: string
  operator_ident: string
  work_date: string
  location_id: string | null
  check_in_at: number
  check_out_at: number | null
  break_minutes: number
  /** JSON: `[{start, end, paid, source}]` in epoch ms (migration 011). */
  breaks: string
  review_status: 'pending' | 'not_required' | 'approved' | 'rejected'
  status: string
}

/**
 * A principal held to sites sees the timesheet rows of the operators homed at its locations, each
 * operator whole (at every location: overtime counts every site's hours; decisions.md, "Sites"):
 * those operators' ids, a subquery of the statement that reads the sessions, so a batch is full
 * and nothing is left out after it. The subquery reads the account's operators (`operators_scope`),
 * a small table beside its sessions: no index of its own.
 */
function operatorsHomedAt(db: Executor, auth: AuthContext, sites: readonly string[]) {
  return db
    .selectFrom('operators')
    .select('operators.id')
    .where((eb) => eb.and(ownedBy(auth)))
    .where('operators.home_location_id', 'in', sites)
}

/** Where a batch starts: operators after `ident` (or at it, when `inclusive`), in byte order. */
export interface OperatorBound {
  ident: string
  inclusive: boolean
}

/**
 * One batch of sessions (not deleted) whose work date is in [from, to], ordered by
 * (operator_ident, work_date), from the operator `start` on. The partial index sessions_timesheet
 * (account, mode, operator_ident, work_date) gives them in that order, so a first page reads a few
 * operators' sessions, not the month; the caller cuts a full batch at its last operator.
 */
export function sessionPayRowsQuery(
  db: Executor,
  auth: AuthContext,
  f: TimesheetFilters,
  start: OperatorBound,
  take: number,
) {
  // SQLite's planner, without statistics, would rather read the month through sessions_work_date
  // and sort it; a unary + on the range's column (SQLite's own idiom) keeps that index out, so it
  // takes sessions_timesheet, in order, and stops after `take` rows. PostgreSQL plans on statistics
  // and needs no such hint (the plans are in docs/performance-log.md).
  const workDate = db.getExecutor().adapter instanceof PostgresAdapter ? sql`work_date` : sql`+work_date`
  return db
    .selectFrom('sessions')
    .select([
      'operator_id',
      'operator_ident',
      'work_date',
      'location_id',
      'check_in_at',
      'check_out_at',
      'break_minutes',
      'breaks',
      'review_status',
      'status',
    ])
    .where((eb) => eb.and(ownedBy(auth)))
    .where('deleted_at', 'is', null)
    .where(sql<boolean>`${workDate} >= ${f.from} and ${workDate} <= ${f.to}`)
    .$if(f.operator_id !== undefined, (q) => q.where('operator_id', '=', f.operator_id ?? ''))
    .$if(f.location_id !== undefined, (q) => q.where('location_id', '=', f.location_id ?? ''))
    .$if(auth.locationIds !== null, (q) =>
      q.where('operator_id', 'in', operatorsHomedAt(db, auth, auth.locationIds ?? [])),
    )
    .where('operator_ident', start.inclusive ? '>=' : '>', start.ident)
    .orderBy('operator_ident')
    .orderBy('work_date')
    .limit(take)
}

export function sessionPayRows(
  db: Executor,
  auth: AuthContext,
  f: TimesheetFilters,
  start: OperatorBound,
  take: number,
): Promise<SessionPayRow[]> {
  return sessionPayRowsQuery(db, auth, f, start, take).execute()
}

/** Names, employee ids and pay rules of the operators of a batch. */
export async function operatorDetails(db: Executor, auth: AuthContext, ids: readonly string[]) {
  const details = new Map<
    string,
    { name: string | null; employee_id: string | null; pay_rule_id: string | null }
  >()
  if (ids.length === 0) return details
  const rows = await db
    .selectFrom('operators')
    .select(['id', 'name', 'employee_id', 'pay_rule_id'])
    .where((eb) => eb.and(ownedBy(auth)))
    .where('id', 'in', ids)
    .execute()
  for (const r of rows)
    details.set(r.id, { name: r.name, employee_id: r.employee_id, pay_rule_id: r.pay_rule_id })
  return details
}

/** The time zone of every location of the account and mode (a small table), by id. */
export async function locationZones(db: Executor, auth: AuthContext): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('locations')
    .select(['id', 'timezone'])
    .where((eb) => eb.and(ownedBy(auth)))
    .execute()
  return new Map(rows.map((r) => [r.id, r.timezone]))
}

/** Closed periods that stored their timesheet (`totals` set) and share a day with [from, to]. */
export function closedPeriodsBetween(db: Executor, auth: AuthContext, from: string, to: string) {
  return db
    .selectFrom('pay_periods')
    .select(['id', 'start_date', 'end_date'])
    .where((eb) => eb.and(ownedBy(auth)))
    .where('status', '=', 'closed')
    .where('totals', 'is not', null)
    .where('start_date', '<=', to)
    .where('end_date', '>=', from)
    .execute()
}

export type ClosedDayRow = Selectable<ClosedTimesheetDaysTable>

/** The stored days of `operatorIds` in [from, to] (closed periods' timesheets). */
export async function closedDays(
  db: Executor,
  auth: AuthContext,
  operatorIds: readonly string[],
  from: string,
  to: string,
): Promise<ClosedDayRow[]> {
  if (operatorIds.length === 0) return []
  const rows = await db
    .selectFrom('closed_timesheet_days')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
    .where('operator_id', 'in', operatorIds)
    .where('date', '>=', from)
    .where('date', '<=', to)
    .execute()
  // PostgreSQL answers bigint columns as numbers (db/connection.ts parses them); nothing to convert.
  return rows
}

/**
 * How many entries the timesheet has (day or workweek groups): sent with a CSV as `X-Total-Count`
 * so a download can show its progress. Weeks are numbered from 0001-01-01, a Monday.
 */
export async function countTimesheetEntries(
  db: Executor,
  auth: AuthContext,
  f: TimesheetFilters,
  groupBy: 'day' | 'week',
  /**
   * Weeks: set when some pay rule starts its workweek on another day than Monday (each operator's
   * week then starts on its rule's day, else `defaultStart`, the default rule's); unset, every week
   * is an ISO week and the operators' rules need not be read.
   */
  workweeks?: { defaultStart: string },
): Promise<number> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  // Days from Monday to the operator's workweek start: weeks are numbered from 0001-01-01, a Monday,
  // shifted by it.
  const offset = workweeks
    ? sql`case coalesce(r.workweek_start, ${workweeks.defaultStart}) when 'tuesday' then 1 when 'wednesday' then 2 when 'thursday' then 3 when 'friday' then 4 when 'saturday' then 5 when 'sunday' then 6 else 0 end`
    : sql`0`
  const period =
    groupBy === 'day'
      ? sql`s.work_date`
      : postgres
        ? sql`(cast(s.work_date as date) - date '0001-01-01' - ${offset}) / 7`
        : sql`cast((julianday(s.work_date) - julianday('0001-01-01') - ${offset}) / 7 as integer)`
  const groups = db
    .selectFrom('sessions as s')
    .$if(workweeks !== undefined && groupBy === 'week', (q) =>
      q
        .leftJoin('operators as o', 'o.id', 's.operator_id')
        .leftJoin('pay_rules as r', 'r.id', 'o.pay_rule_id'),
    )
    .select(sql<number>`1`.as('one'))
    .where('s.account_id', '=', auth.accountId)
    .where('s.livemode', '=', auth.livemode ? 1 : 0)
    .where('s.deleted_at', 'is', null)
    .where('s.work_date', '>=', f.from)
    .where('s.work_date', '<=', f.to)
    .$if(f.operator_id !== undefined, (q) => q.where('s.operator_id', '=', f.operator_id ?? ''))
    .$if(f.location_id !== undefined, (q) => q.where('s.location_id', '=', f.location_id ?? ''))
    .$if(auth.locationIds !== null, (q) =>
      q.where('s.operator_id', 'in', operatorsHomedAt(db, auth, auth.locationIds ?? [])),
    )
    // Period first: the order of sessions_work_date (work_date, operator_ident), read alone.
    .groupBy([period, sql`s.operator_ident`])
  const row = await db
    .selectFrom(groups.as('g'))
    .select(sql<number | string>`count(*)`.as('n'))
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}
