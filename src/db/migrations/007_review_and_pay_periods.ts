import { type Kysely, PostgresAdapter, sql } from 'kysely'
import { calendarDate } from '../../lib/dates.js'
import { columnTypes } from './types.js'

/**
 * Review, pay periods and timesheets (docs/review-and-timesheets.md).
 *
 * Sessions gain `work_date` (the calendar date of the check-in in the location's time zone, stored
 * when the session is written, so a location whose zone changes later does not move past sessions)
 * and the review fields. Existing sessions are backfilled: `work_date` from their location's zone
 * (UTC without one), `review_status` `pending` when flagged and `not_required` otherwise.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db)
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter

  await db.schema.alterTable('sessions').addColumn('work_date', 'text').execute()
  await db.schema
    .alterTable('sessions')
    .addColumn('review_status', 'text', (c) => c.notNull().defaultTo('not_required'))
    .execute()
  await db.schema.alterTable('sessions').addColumn('reviewed_at', t.instant).execute()
  await db.schema.alterTable('sessions').addColumn('reviewed_by', t.id).execute()
  await db.schema.alterTable('sessions').addColumn('review_note', 'text').execute()

  await db
    .updateTable('sessions')
    .set({ review_status: sql`case when is_flagged = 1 then 'pending' else 'not_required' end` })
    .execute()

  // Work dates: UTC for every session first, in one statement; then the sessions at a location
  // whose zone is not UTC.
  if (postgres) {
    await sql`update sessions set work_date = to_char(to_timestamp(check_in_at / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')`.execute(
      db,
    )
  } else {
    await sql`update sessions set work_date = date(check_in_at / 1000, 'unixepoch')`.execute(db)
  }
  const zones = await db
    .selectFrom('locations')
    .select(['id', 'timezone'])
    .where('timezone', '!=', 'UTC')
    .execute()
  for (const { id, timezone } of zones as Array<{ id: string; timezone: string }>) {
    // Computed here rather than with PostgreSQL's `at time zone`, so both databases use the one
    // zone database the service itself uses (Node's ICU).
    let after = ''
    for (;;) {
      const rows = (await db
        .selectFrom('sessions')
        .select(['id', 'check_in_at'])
        .where('location_id', '=', id)
        .where('id', '>', after)
        .orderBy('id')
        .limit(1000)
        .execute()) as Array<{ id: string; check_in_at: number | string }>
      if (rows.length === 0) break
      for (const row of rows) {
        await db
          .updateTable('sessions')
          .set({ work_date: calendarDate(Number(row.check_in_at), timezone) })
          .where('id', '=', row.id)
          .execute()
      }
      after = rows[rows.length - 1]?.id ?? after
    }
  }

  if (postgres) {
    // Timesheets are ordered by operator_ident then date: byte order ("C"), as on SQLite, whatever
    // the database's default collation.
    await sql`alter table sessions alter column operator_ident type text collate "C"`.execute(db)
  }
  // work_date stays nullable in the database (SQLite cannot add NOT NULL to an existing column, and
  // both dialects keep one schema); every write path of the service sets it.

  // Timesheets: groups of (operator_ident, work_date) read in index order, so the first page of a
  // month stops after the rows it needs, and a CSV streams in keyset batches.
  await db.schema
    .createIndex('sessions_timesheet')
    .on('sessions')
    .columns(['account_id', 'livemode', 'operator_ident', 'work_date'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute()
  // The review queue and closing a period: pending and open sessions by work date.
  await db.schema
    .createIndex('sessions_review')
    .on('sessions')
    .columns(['account_id', 'livemode', 'review_status', 'work_date'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute()
  // Work-date ranges (the list filters; counting a timesheet's rows for a download's progress,
  // which reads only this index).
  await db.schema
    .createIndex('sessions_work_date')
    .on('sessions')
    .columns(['account_id', 'livemode', 'work_date', 'operator_ident'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute()

  await db.schema
    .createTable('pay_periods')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('start_date', 'text', (c) => c.notNull())
    .addColumn('end_date', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('closed_at', t.instant)
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('updated_at', t.instant, (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('pay_periods_scope')
    .on('pay_periods')
    .columns(['account_id', 'livemode', 'id'])
    .execute()
  await db.schema
    .createIndex('pay_periods_dates')
    .on('pay_periods')
    .columns(['account_id', 'livemode', 'start_date', 'end_date'])
    .execute()
}
