import { type Kysely, sql } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  // `GET /v1/sessions?status=…` needs an index only for `open`: open sessions are few (one per
  // operator at work at most), so without one a list of them would read the account's history;
  // completed ones are nearly every row, found at once by the newest-first list index
  // (`sessions_scope`). A partial index of the open sessions replaces the (account, mode, status,
  // id) index, which every session write updated, completed or not: an API create wrote 13 index
  // entries and now writes 12 (docs/performance-log.md).
  await db.schema.dropIndex('sessions_status').execute()
  await db.schema
    .createIndex('sessions_open')
    .on('sessions')
    .columns(['account_id', 'livemode', 'id'])
    .where(sql.ref('status'), '=', 'open')
    .where(sql.ref('deleted_at'), 'is', null)
    .execute()
}
