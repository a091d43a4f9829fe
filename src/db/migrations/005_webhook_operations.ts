import { type Kysely, sql } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  // Recover walks an endpoint's failed deliveries in id (creation) order, batch by batch. Failed
  // rows are few beside succeeded ones, so a partial index finds them without reading the rest.
  await db.schema
    .createIndex('webhook_deliveries_failed')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'id'])
    .where(sql.ref('status'), '=', 'failed')
    .execute()
}
