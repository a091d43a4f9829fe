import type { Kysely } from 'kysely'
import { describe, expect, it } from 'vitest'
import { isUniqueViolation } from '../../src/db/connection.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { listOperators } from '../../src/modules/operators/service.js'
import { useDatabaseMigratedTo } from '../helpers/migrations.js'

/** Migration 010 on a database that already holds operators: they keep working, without a rule. */
describe('migration 010_pay_rules', () => {
  const database = useDatabaseMigratedTo('009_api_key_labels')

  it('gives existing operators no rule, and allows one default rule per account and mode', async () => {
    const { db } = database
    // biome-ignore lint/suspicious/noExplicitAny: the schema as it was before 010
    const old = db as unknown as Kysely<any>
    await old
      .insertInto('operators')
      .values({
        id: 'op_old',
        account_id: 'acct_1',
        livemode: 0,
        ident: 'W-1',
        name: null,
        employee_id: null,
        is_active: 1,
        created_at: 1,
        updated_at: 1,
      })
      .execute()

    expect(await migrateToLatest(db)).toContain('010_pay_rules')
    const auth = { principalId: 'key_1', locationIds: null, accountId: 'acct_1', livemode: false }
    expect((await listOperators(db, auth, {}, undefined, 10)).map((o) => [o.id, o.pay_rule_id])).toEqual([
      ['op_old', null],
    ])

    const rule = (id: string, livemode: 0 | 1, isDefault: 0 | 1) => ({
      id,
      account_id: 'acct_1',
      livemode,
      name: id,
      is_default: isDefault,
      workweek_start: 'monday' as const,
      rounding_interval_minutes: 0,
      rounding_check_in: 'nearest' as const,
      rounding_check_out: 'nearest' as const,
      breaks: '[]',
      overtime_daily_minutes: null,
      overtime_daily_double_minutes: null,
      overtime_weekly_minutes: null,
      overtime_seventh_day: 0 as const,
      created_at: 1,
      updated_at: 1,
    })
    // Any number of rules that are not the default, one default per mode: the partial unique index.
    await db
      .insertInto('pay_rules')
      .values([rule('pr_1', 0, 1), rule('pr_2', 0, 0), rule('pr_3', 0, 0), rule('pr_4', 1, 1)])
      .execute()
    const second = await db
      .insertInto('pay_rules')
      .values(rule('pr_5', 0, 1))
      .execute()
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    expect(isUniqueViolation(second)).toBe(true)
  })
})
