import { type Kysely, sql } from 'kysely'

/**
 * Sessions gain their break records: a JSON list `[{"start", "end", "paid", "source"}]` (epoch
 * milliseconds, `end` null while a scanned break is open) in a column of the session row, so a
 * session is read with its breaks in one query and a list of sessions needs no second one. Existing
 * sessions have none: their `break_minutes` keeps meaning what it did.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('breaks', 'text', (c) => c.notNull().defaultTo(sql`'[]'`))
    .execute()
}
