import type { Kysely } from 'kysely'
import { columnTypes } from './types.js'

/**
 * A closed pay period keeps its timesheet (docs/review-and-timesheets.md, "A closed period never
 * changes"): closing stores every operator's day entries as computed then, in exact milliseconds
 * (so a week that spans a closed and an open period still sums exact values and rounds once), and
 * the period's totals. Reopening deletes them. While the period is closed, timesheets of its dates
 * answer these rows, whatever later happens to pay rules, operators' rules or locations' zones.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db)
  await db.schema
    .createTable('closed_timesheet_days')
    .addColumn('pay_period_id', t.id, (c) => c.notNull())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('operator_id', t.id, (c) => c.notNull())
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('pay_rule_id', t.id)
    .addColumn('counted_ms', t.instant, (c) => c.notNull())
    .addColumn('pending_ms', t.instant, (c) => c.notNull())
    .addColumn('rejected_ms', t.instant, (c) => c.notNull())
    .addColumn('regular_ms', t.instant, (c) => c.notNull())
    .addColumn('overtime_ms', t.instant, (c) => c.notNull())
    .addColumn('double_time_ms', t.instant, (c) => c.notNull())
    .addColumn('auto_break_ms', t.instant, (c) => c.notNull())
    .addColumn('sessions', 'integer', (c) => c.notNull())
    .addColumn('open_sessions', 'integer', (c) => c.notNull())
    .addColumn('missed_break', 'integer', (c) => c.notNull())
    .addColumn('pending_review', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('closed_timesheet_days_pkey', ['pay_period_id', 'operator_id', 'date'])
    .execute()
  // A timesheet reads the stored days of a batch's operators over its dates.
  await db.schema
    .createIndex('closed_timesheet_days_operator')
    .on('closed_timesheet_days')
    .columns(['account_id', 'livemode', 'operator_id', 'date'])
    .execute()
  // The totals answered by the close (and by reading the period while it is closed), as JSON.
  await db.schema.alterTable('pay_periods').addColumn('totals', 'text').execute()
}
