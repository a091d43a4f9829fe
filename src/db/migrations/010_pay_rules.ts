import { type Kysely, sql } from 'kysely'
import { columnTypes } from './types.js'

/**
 * Pay rules (docs/review-and-timesheets.md, "Pay rules"): how a timesheet rounds, deducts breaks and
 * splits overtime, and operators' `pay_rule_id`.
 *
 * The scalar terms (rounding, overtime thresholds) are columns: each is one typed value that the API
 * changes alone (a PATCH of `overtime.weekly_minutes`) and the timesheet reads for every operator.
 * `breaks` is JSON text: a list of at most 5 entries, always read, written and validated whole, which
 * no query ever filters on; a child table would cost a join (or a second read) on every look-up of a
 * rule for nothing.
 *
 * A rule is deleted outright (no `deleted_at`), as locations and devices are: a rule that an operator
 * still uses cannot be deleted, and timesheets of closed periods keep the id they applied.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db)

  await db.schema
    .createTable('pay_rules')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull())
    .addColumn('workweek_start', 'text', (c) => c.notNull())
    .addColumn('rounding_interval_minutes', 'integer', (c) => c.notNull())
    .addColumn('rounding_check_in', 'text', (c) => c.notNull())
    .addColumn('rounding_check_out', 'text', (c) => c.notNull())
    .addColumn('breaks', 'text', (c) => c.notNull())
    .addColumn('overtime_daily_minutes', 'integer')
    .addColumn('overtime_daily_double_minutes', 'integer')
    .addColumn('overtime_weekly_minutes', 'integer')
    .addColumn('overtime_seventh_day', 'integer', (c) => c.notNull())
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('updated_at', t.instant, (c) => c.notNull())
    .execute()
  // The list, newest first by id, and every look-up of an account and mode's rules.
  await db.schema
    .createIndex('pay_rules_scope')
    .on('pay_rules')
    .columns(['account_id', 'livemode', 'id'])
    .execute()
  // At most one default per account and mode, whatever races: the database refuses a second one.
  // Both dialects have partial unique indexes.
  await db.schema
    .createIndex('pay_rules_default')
    .on('pay_rules')
    .columns(['account_id', 'livemode'])
    .unique()
    .where(sql.ref('is_default'), '=', 1)
    .execute()

  await db.schema.alterTable('operators').addColumn('pay_rule_id', t.id).execute()
  // Deleting a rule asks whether an operator uses it: only operators with a rule are indexed.
  await db.schema
    .createIndex('operators_pay_rule')
    .on('operators')
    .columns(['account_id', 'livemode', 'pay_rule_id'])
    .where(sql.ref('pay_rule_id'), 'is not', null)
    .execute()
}
