import { type Kysely, sql } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  // The sweep of forgotten check-outs looks, every few seconds and across every account, for open
  // sessions checked in more than 16 hours ago. Only open sessions are in this index, so it stays as
  // small as the number of operators at work, and the sweep never reads the table's history. (The
  // overlap rule needs no new index: `sessions_operator_check_in` and `sessions_one_open` of
  // migration 002 answer it.)
  await db.schema
    .createIndex('sessions_open_check_in')
    .on('sessions')
    .column('check_in_at')
    .where(sql.ref('status'), '=', 'open')
    .where(sql.ref('deleted_at'), 'is', null)
    .execute()
}
