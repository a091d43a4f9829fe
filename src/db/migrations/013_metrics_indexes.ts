import { type Kysely, sql } from 'kysely'

/**
 * `webhook_oldest_pending_seconds` (http/metrics.ts) reads the oldest pending delivery's creation
 * time at every scrape. The pending deliveries' index (`webhook_deliveries_due`) is by due time,
 * and retention's by creation time (`webhook_deliveries_created`, 014) holds every delivery, the old
 * succeeded ones first, which a scrape would walk past. A partial index of the pending ones by creation time
 * answers the oldest at once and their count from the index alone; it stays as small as the
 * backlog, since a delivery leaves it when it succeeds or fails.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_pending_created')
    .on('webhook_deliveries')
    .column('created_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute()
}
