import type { Kysely } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrateToLatest } from '../../src/db/migrate.js'
import { toLocation } from '../../src/modules/locations/repository.js'
import { useDatabaseMigratedTo } from '../helpers/migrations.js'

/** Migration 016 on a database that already holds locations: each gets the default locale. */
describe('migration 016_location_locale', () => {
  const database = useDatabaseMigratedTo('015_time_clock')

  it('gives every existing location en-GB, and keeps the rest of it', async () => {
    const { db } = database
    // biome-ignore lint/suspicious/noExplicitAny: the schema as it was before 016
    const old = db as unknown as Kysely<any>
    const location = (id: string, timezone: string) => ({
      id,
      account_id: 'acct_1',
      livemode: 0,
      name: `Site ${id}`,
      timezone,
      address: null,
      created_at: 1_700_000_000_000,
      updated_at: 1_700_000_000_000,
    })
    await old
      .insertInto('locations')
      .values([location('loc_paris', 'Europe/Paris'), location('loc_ny', 'America/New_York')])
      .execute()

    expect(await migrateToLatest(db)).toContain('016_location_locale')
    const rows = await db.selectFrom('locations').selectAll().orderBy('id').execute()
    expect(rows.map(toLocation).map((l) => [l.id, l.timezone, l.locale])).toEqual([
      ['loc_ny', 'America/New_York', 'en-GB'],
      ['loc_paris', 'Europe/Paris', 'en-GB'],
    ])
  })
})
