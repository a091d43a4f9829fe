import type { Selectable } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import type { Executor, Trx } from '../../db/connection.js'
import { supportsRowLocks } from '../../db/connection.js'
import type { OperatorsTable } from '../../db/schema.js'
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
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    updated: toIso(row.updated_at),
  }
}

function scoped(db: Executor, auth: AuthContext) {
  return db
    .selectFrom('operators')
    .selectAll()
    .where('account_id', '=', auth.accountId)
    .where('livemode', '=', auth.livemode ? 1 : 0)
}

export async function insertOperator(trx: Trx, row: OperatorRow): Promise<void> {
  await trx.insertInto('operators').values(row).execute()
}

export async function findOperator(
  db: Executor,
  auth: AuthContext,
  id: string,
): Promise<OperatorRow | undefined> {
  return scoped(db, auth).where('id', '=', id).executeTakeFirst()
}

/** Reads the row for a change in `trx`, locking it on PostgreSQL so concurrent edits queue up. */
export async function findOperatorForUpdate(trx: Trx, auth: AuthContext, id: string) {
  return scoped(trx, auth)
    .where('id', '=', id)
    .$if(supportsRowLocks(trx), (q) => q.forUpdate())
    .executeTakeFirst()
}

export async function updateOperatorRow(
  trx: Trx,
  id: string,
  changes: Partial<Pick<OperatorRow, 'name' | 'employee_id' | 'is_active' | 'updated_at'>>,
): Promise<void> {
  await trx.updateTable('operators').set(changes).where('id', '=', id).execute()
}

export async function listOperatorRows(
  db: Executor,
  auth: AuthContext,
  filters: Pick<ListOperatorsQuery, 'is_active' | 'ident' | 'employee_id'>,
  beforeId: string | undefined,
  take: number,
): Promise<OperatorRow[]> {
  return scoped(db, auth)
    .$if(filters.is_active !== undefined, (q) => q.where('is_active', '=', filters.is_active ? 1 : 0))
    .$if(filters.ident !== undefined, (q) => q.where('ident', '=', filters.ident ?? ''))
    .$if(filters.employee_id !== undefined, (q) => q.where('employee_id', '=', filters.employee_id ?? ''))
    .$if(beforeId !== undefined, (q) => q.where('id', '<', beforeId ?? ''))
    .orderBy('id', 'desc')
    .limit(take)
    .execute()
}
