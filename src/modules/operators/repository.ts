import type { Selectable } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { supportsRowLocks } from '../../db/connection.js'
import { newestFirst } from '../../db/keyset.js'
import { type OperatorsTable, toFlag } from '../../db/schema.js'
import { type Owner, ownedBy, ownedRowFinder, ownedRowsBy } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import { toIso } from '../../lib/time.js'
import type { ListOperatorsQuery, Operator } from './schemas.js'

export type OperatorRow = Selectable<OperatorsTable>

export function toOperator(row: OperatorRow): Operator {
  return {
    object: 'operator',
    id: row.id,
    ident: row.ident,
    name: row.name,
    employee_id: row.employee_id,
    is_active: row.is_active === 1,
    pay_rule_id: row.pay_rule_id,
    has_pin: row.pin_hash !== null,
    home_location_id: row.home_location_id,
    start_date: row.start_date,
    end_date: row.end_date,
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    updated: toIso(row.updated_at),
  }
}

function owned(db: Executor, auth: AuthContext) {
  return db
    .selectFrom('operators')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
}

export async function insertOperator(trx: Trx, row: OperatorRow): Promise<void> {
  await trx.insertInto('operators').values(row).execute()
}

export const findOperator = ownedRowFinder('operators')

const operatorsBy = { id: ownedRowsBy('operators', 'id'), ident: ownedRowsBy('operators', 'ident') }
const lockedOperatorsBy = {
  id: ownedRowsBy('operators', 'id', { lock: true }),
  ident: ownedRowsBy('operators', 'ident', { lock: true }),
}

/**
 * The operators of an account and mode with this id or ident: what a reference names. With `lock`,
 * locked until the transaction ends (see `lockOperatorRows`).
 */
export function findOperatorsBy(
  db: Executor,
  owner: Owner,
  column: 'id' | 'ident',
  value: string,
  lock = false,
) {
  return (lock ? lockedOperatorsBy : operatorsBy)[column].rows(db, { ...owner, value })
}

/**
 * Locks the caller's operators with these ids (PostgreSQL), in id order, so two transactions that
 * lock the same operators never wait on each other in a cycle; returns them read under the lock.
 */
export async function lockOperatorRows(trx: Trx, auth: AuthContext, ids: readonly string[]) {
  return owned(trx, auth)
    .where('id', 'in', ids)
    .orderBy('id')
    .$if(supportsRowLocks(trx), (q) => q.forUpdate())
    .execute()
}

/**
 * The caller's operators with any of these ids or idents (a batch of scans names them either way),
 * locked until the transaction ends (FOR UPDATE on PostgreSQL) in id order, as `lockOperatorRows`
 * locks them: one statement for a batch.
 */
export function lockOperatorsNamed(
  trx: Trx,
  auth: AuthContext,
  ids: readonly string[],
  idents: readonly string[],
): Promise<OperatorRow[]> {
  return trx
    .selectFrom('operators')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
    .where((eb) =>
      eb.or([
        ...(ids.length > 0 ? [eb('id', 'in', ids)] : []),
        ...(idents.length > 0 ? [eb('ident', 'in', idents)] : []),
      ]),
    )
    .orderBy('id')
    .$if(supportsRowLocks(trx), (q) => q.forUpdate())
    .execute()
}

export async function updateOperatorRow(
  trx: Trx,
  id: string,
  changes: Partial<
    Pick<
      OperatorRow,
      | 'name'
      | 'employee_id'
      | 'is_active'
      | 'pay_rule_id'
      | 'updated_at'
      | 'pin_hash'
      | 'pin_failures'
      | 'pin_locked_until'
      | 'home_location_id'
      | 'start_date'
      | 'end_date'
    >
  >,
): Promise<void> {
  await trx.updateTable('operators').set(changes).where('id', '=', id).execute()
}

/** One operator of the caller's account and mode whose rule is this one (index `operators_pay_rule`). */
export async function findOperatorWithPayRule(
  db: Executor,
  auth: AuthContext,
  payRuleId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('operators')
    .select('id')
    .where((eb) => eb.and(ownedBy(auth)))
    .where('pay_rule_id', '=', payRuleId)
    .limit(1)
    .executeTakeFirst()
  return row?.id
}

export async function listOperatorRows(
  db: Executor,
  auth: AuthContext,
  filters: Pick<ListOperatorsQuery, 'is_active' | 'ident' | 'employee_id'>,
  beforeId: string | undefined,
  take: number,
): Promise<OperatorRow[]> {
  return owned(db, auth)
    .$if(filters.is_active !== undefined, (q) =>
      q.where('is_active', '=', toFlag(filters.is_active ?? false)),
    )
    .$if(filters.ident !== undefined, (q) => q.where('ident', '=', filters.ident ?? ''))
    .$if(filters.employee_id !== undefined, (q) => q.where('employee_id', '=', filters.employee_id ?? ''))
    .$call(newestFirst(beforeId, take))
    .execute()
}

/**
 * Counts a wrong PIN in one statement (two wrong PINs at once both count): the `limit`-th in a row
 * locks the operator's PIN scans until `lockedUntil` and starts the count again.
 */
export async function countPinFailure(db: Executor, id: string, limit: number, lockedUntil: number) {
  await db
    .updateTable('operators')
    .set((eb) => ({
      pin_locked_until: eb
        .case()
        .when('pin_failures', '>=', limit - 1)
        .then(lockedUntil)
        .else(eb.ref('pin_locked_until'))
        .end(),
      pin_failures: eb
        .case()
        .when('pin_failures', '>=', limit - 1)
        .then(0)
        .else(eb('pin_failures', '+', 1))
        .end(),
    }))
    .where('id', '=', id)
    .execute()
}

/** A right PIN: the count of wrong ones starts again. */
export async function resetPinFailures(db: Executor, id: string) {
  await db.updateTable('operators').set({ pin_failures: 0 }).where('id', '=', id).execute()
}
