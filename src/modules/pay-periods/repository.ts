import { type Selectable, sql } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { compiled } from '../../db/compiled.js'
import { supportsRowLocks } from '../../db/connection.js'
import { newestFirst } from '../../db/keyset.js'
import type { ClosedTimesheetDaysTable, PayPeriodsTable } from '../../db/schema.js'
import { type Owner, ownedBy, ownedRowFinder } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import { toIso, toIsoOrNull } from '../../lib/time.js'
import type { Actor } from '../actors/schemas.js'
import type { PayPeriod, PayPeriodTotals } from './schemas.js'

export type PayPeriodRow = Selectable<PayPeriodsTable>

/** A pay period as the API shows it, with who closed it (`closedBy`, looked up by the caller). */
export function toPayPeriod(row: PayPeriodRow, closedBy: Actor | null): PayPeriod {
  return {
    object: 'pay_period',
    id: row.id,
    start_date: row.start_date,
    end_date: row.end_date,
    status: row.status,
    closed_at: toIsoOrNull(row.closed_at),
    closed_by: closedBy,
    totals: row.totals === null ? null : (JSON.parse(row.totals) as PayPeriodTotals),
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    updated: toIso(row.updated_at),
  }
}

function owned(db: Executor, auth: AuthContext) {
  return db
    .selectFrom('pay_periods')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
}

export const findPayPeriod = ownedRowFinder('pay_periods')

/** A period of the caller sharing at least one day with [start, end]. */
export async function findOverlappingPeriod(db: Executor, auth: AuthContext, start: string, end: string) {
  return owned(db, auth)
    .where('start_date', '<=', end)
    .where('end_date', '>=', start)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst()
}

/** One date (every create, and every edit that keeps its work date): compiled once (db/compiled.ts). */
const closedPeriodHoldingDate = compiled((db, p: Owner & { date: string }) =>
  db
    .selectFrom('pay_periods')
    .selectAll()
    .where('account_id', '=', p.account_id)
    .where('livemode', '=', p.livemode)
    .where('status', '=', 'closed')
    .where('start_date', '<=', p.date)
    .where('end_date', '>=', p.date)
    .limit(1),
)

/** The first closed period holding any of `dates`, if one does. */
export async function findClosedPeriodHolding(db: Executor, auth: AuthContext, dates: readonly string[]) {
  if (dates.length === 0) return undefined
  if (dates.length === 1 && dates[0] !== undefined) {
    return closedPeriodHoldingDate.first(db, { ...ownedBy(auth), date: dates[0] })
  }
  return owned(db, auth)
    .where('status', '=', 'closed')
    .where((eb) => eb.or(dates.map((d) => eb.and([eb('start_date', '<=', d), eb('end_date', '>=', d)]))))
    .limit(1)
    .executeTakeFirst()
}

export async function insertPayPeriod(trx: Trx, row: PayPeriodRow) {
  await trx.insertInto('pay_periods').values(row).execute()
}

export async function updatePayPeriodRow(trx: Trx, id: string, changes: Partial<PayPeriodRow>) {
  await trx.updateTable('pay_periods').set(changes).where('id', '=', id).execute()
}

export async function listPayPeriodRows(
  db: Executor,
  auth: AuthContext,
  filters: { status?: 'open' | 'closed' },
  beforeId: string | undefined,
  take: number,
) {
  return owned(db, auth)
    .$if(filters.status !== undefined, (q) => q.where('status', '=', filters.status ?? 'open'))
    .$call(newestFirst(beforeId, take))
    .execute()
}

export type ClosedDayRow = Selectable<ClosedTimesheetDaysTable>

/** Rows per insert: well under SQLite's 32,766 bound parameters at 17 columns a row. */
const CLOSED_DAYS_PER_INSERT = 500

/** A closing period's timesheet days (closed-timesheet.ts). */
export async function insertClosedDays(trx: Trx, rows: readonly ClosedDayRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CLOSED_DAYS_PER_INSERT) {
    await trx
      .insertInto('closed_timesheet_days')
      .values(rows.slice(i, i + CLOSED_DAYS_PER_INSERT))
      .execute()
  }
}

export async function deleteClosedDays(trx: Trx, payPeriodId: string): Promise<void> {
  await trx.deleteFrom('closed_timesheet_days').where('pay_period_id', '=', payPeriodId).execute()
}

/**
 * The pay-period lock of an account and mode (PostgreSQL; SQLite write transactions are serial
 * already). Every session write whose work date could lie in a period takes it shared, before it
 * reads the periods' status; closing a period (and creating one) takes it exclusive, before it
 * counts the sessions. So a close and a session write never interleave: the write either commits
 * first (and the close, which waits for it, counts it) or waits for the close and then reads
 * `closed`. Held until the transaction ends.
 */
export async function lockPayPeriods(trx: Trx, auth: AuthContext, mode: 'shared' | 'exclusive') {
  if (!supportsRowLocks(trx)) return
  const key = `pay_periods:${auth.accountId}:${auth.livemode ? 'live' : 'test'}`
  if (mode === 'shared') {
    await sql`select pg_advisory_xact_lock_shared(hashtextextended(${key}, 0))`.execute(trx)
  } else {
    await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx)
  }
}
