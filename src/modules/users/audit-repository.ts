import type { Insertable } from 'kysely'
import type { AuditLogTable } from '../../db/schema.js'
import type { Executor } from '../../db/types.js'

export async function insertAuditEntry(db: Executor, row: Insertable<AuditLogTable>): Promise<void> {
  await db.insertInto('audit_log').values(row).execute()
}
