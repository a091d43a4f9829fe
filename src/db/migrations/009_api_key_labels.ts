import type { Kysely } from 'kysely'

/**
 * API keys gain a `label` (at most 100 characters, or null): a name people give a key ("payroll
 * export", "Dana's console") so that a session's history can say who changed it rather than a
 * `key_…` id. Existing keys have none.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('label', 'text').execute()
}
