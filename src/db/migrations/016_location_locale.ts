import type { Kysely } from 'kysely'

/**
 * Locations gain `locale` (decisions.md, "Locations: locale"): the BCP 47 tag the kiosk formats its
 * clock and dates with. Existing locations take the default, `en-GB` (a 24-hour clock, as before).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('locations')
    .addColumn('locale', 'text', (c) => c.notNull().defaultTo('en-GB'))
    .execute()
}
