import type { Insertable, Selectable } from 'kysely'
import { newestFirst } from '../../db/keyset.js'
import type { AuditLogTable } from '../../db/schema.js'
import type { Executor } from '../../db/types.js'
import { toIso } from '../../lib/time.js'
import type { AuditEntry, AuditType } from './schemas.js'

export async function insertAuditEntry(db: Executor, row: Insertable<AuditLogTable>): Promise<void> {
  await db.insertInto('audit_log').values(row).execute()
}

export type AuditRow = Selectable<AuditLogTable>

export function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    object: 'audit_entry',
    id: row.id,
    type: row.type as AuditType,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
    target:
      row.target_type === null || row.target_id === null
        ? null
        : { type: row.target_type, id: row.target_id },
    ip: row.ip,
    created: toIso(row.created_at),
  }
}

/**
 * A page of an account's log, newest first. Each filter has its index (migration 018): `type` reads
 * `audit_log_account_type`; `user_id`, the person as actor or as target, is two index reads of at
 * most a page each (`audit_log_account_actor`, `audit_log_account_target`) merged, rather than an
 * OR that walks the account's whole log. An entry where the person is both appears once (UNION).
 */
export async function listAuditRows(
  db: Executor,
  accountId: string,
  filters: { userId?: string; type?: AuditType },
  beforeId: string | undefined,
  take: number,
): Promise<AuditRow[]> {
  const entries = () =>
    db
      .selectFrom('audit_log')
      .selectAll()
      .where('account_id', '=', accountId)
      .$if(filters.type !== undefined, (q) => q.where('type', '=', filters.type ?? 'sign_in'))
  const { userId } = filters
  if (userId === undefined) return entries().$call(newestFirst(beforeId, take)).execute()
  const by = (column: 'actor_id' | 'target_id') =>
    entries().where(column, '=', userId).$call(newestFirst(beforeId, take))
  return db
    .selectFrom(by('actor_id').as('by_actor'))
    .selectAll()
    .union(db.selectFrom(by('target_id').as('by_target')).selectAll())
    .orderBy('id', 'desc')
    .limit(take)
    .execute()
}
