import { type Selectable, sql } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { supportsRowLocks } from '../../db/connection.js'
import { newestFirst } from '../../db/keyset.js'
import type { PayRulesTable } from '../../db/schema.js'
import { type Owner, ownedBy, ownedRowFinder, ownedRowsBy } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import { toIso } from '../../lib/time.js'
import type { PayRule, PayRuleBreak } from './schemas.js'

export type PayRuleRow = Selectable<PayRulesTable>

export function toPayRule(row: PayRuleRow): PayRule {
  return {
    object: 'pay_rule',
    id: row.id,
    name: row.name,
    is_default: row.is_default === 1,
    workweek_start: row.workweek_start,
    rounding: {
      interval_minutes: row.rounding_interval_minutes as PayRule['rounding']['interval_minutes'],
      check_in: row.rounding_check_in,
      check_out: row.rounding_check_out,
    },
    breaks: JSON.parse(row.breaks) as PayRuleBreak[],
    overtime: {
      daily_minutes: row.overtime_daily_minutes,
      daily_double_minutes: row.overtime_daily_double_minutes,
      weekly_minutes: row.overtime_weekly_minutes,
      seventh_day: row.overtime_seventh_day === 1,
    },
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    updated: toIso(row.updated_at),
  }
}

function owned(db: Executor, auth: AuthContext) {
  return db
    .selectFrom('pay_rules')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
}

export const findPayRule = ownedRowFinder('pay_rules')

const lockedPayRulesById = ownedRowsBy('pay_rules', 'id', { lock: true })

/**
 * The rules of an account and mode with this id (what an operator's `pay_rule_id` names), locked
 * until the transaction ends, so a rule being assigned cannot be deleted beside it.
 */
export function lockPayRulesById(db: Executor, owner: Owner, id: string) {
  return lockedPayRulesById.rows(db, { ...owner, value: id })
}

export async function insertPayRule(trx: Trx, row: PayRuleRow): Promise<void> {
  await trx.insertInto('pay_rules').values(row).execute()
}

export async function updatePayRuleRow(trx: Trx, id: string, changes: Partial<PayRuleRow>): Promise<void> {
  await trx.updateTable('pay_rules').set(changes).where('id', '=', id).execute()
}

export async function deletePayRuleRow(trx: Trx, id: string): Promise<void> {
  await trx.deleteFrom('pay_rules').where('id', '=', id).execute()
}

/**
 * Serialises the changes of an account and mode's default rule (PostgreSQL; SQLite write
 * transactions are serial already): with no default yet there is no row to lock, and two rules
 * made default at once would each find none to unset, then one would fail on the unique index.
 * Held until the transaction ends.
 */
export async function lockDefaultPayRule(trx: Trx, auth: AuthContext): Promise<void> {
  if (!supportsRowLocks(trx)) return
  const key = `pay_rules_default:${auth.accountId}:${auth.livemode ? 'live' : 'test'}`
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx)
}

/**
 * Unsets the default of the account and mode, unless it is rule `keepId`; returns the rows as they
 * were (at most one: the partial unique index `pay_rules_default`).
 */
export async function unsetDefaultPayRule(
  trx: Trx,
  auth: AuthContext,
  keepId: string | undefined,
  now: number,
): Promise<PayRuleRow[]> {
  const previous = await owned(trx, auth)
    .where('is_default', '=', 1)
    .$if(keepId !== undefined, (q) => q.where('id', '!=', keepId ?? ''))
    .execute()
  for (const row of previous) await updatePayRuleRow(trx, row.id, { is_default: 0, updated_at: now })
  return previous
}

export async function listPayRuleRows(
  db: Executor,
  auth: AuthContext,
  _filters: unknown,
  beforeId: string | undefined,
  take: number,
): Promise<PayRuleRow[]> {
  return owned(db, auth).$call(newestFirst(beforeId, take)).execute()
}

/** Every rule of the account and mode, oldest first: a small set (an account has a few rules). */
export function listAllPayRuleRows(db: Executor, auth: AuthContext): Promise<PayRuleRow[]> {
  return owned(db, auth).orderBy('id').execute()
}
