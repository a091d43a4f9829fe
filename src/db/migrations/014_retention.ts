import type { Kysely } from 'kysely'

/**
 * Retention (modules/events/retention.ts) deletes the oldest events and webhook deliveries, a few
 * hundred at a time, in (created_at, id) order: each batch reads the head of one of these indexes
 * instead of the whole table, and its keyset cursor walks past the rows it must keep (an event not
 * yet relayed, a delivery still pending). No existing index starts with created_at: the events'
 * one is per account and mode, the deliveries' are by id.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['events', 'webhook_deliveries']) {
    await db.schema.createIndex(`${table}_created`).on(table).columns(['created_at', 'id']).execute()
  }
}
