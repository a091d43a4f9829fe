import type { Kysely } from 'kysely'

/**
 * The audit log's filters (`GET /v1/audit-log?user_id=…&type=…`): an account's entries by their
 * actor, by their target, and by their type, each newest first (keyset by id). Without them a
 * filtered page reads the account's whole log back to the first match, and sign-ins add an entry
 * each.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('audit_log_account_actor')
    .on('audit_log')
    .columns(['account_id', 'actor_id', 'id'])
    .execute()
  await db.schema
    .createIndex('audit_log_account_target')
    .on('audit_log')
    .columns(['account_id', 'target_id', 'id'])
    .execute()
  await db.schema
    .createIndex('audit_log_account_type')
    .on('audit_log')
    .columns(['account_id', 'type', 'id'])
    .execute()
}
