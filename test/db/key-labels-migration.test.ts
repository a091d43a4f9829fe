import { type Kysely, type Migration, Migrator, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/connection.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import * as m001 from '../../src/db/migrations/001_foundation.js'
import * as m002 from '../../src/db/migrations/002_attendance.js'
import * as m003 from '../../src/db/migrations/003_webhooks.js'
import * as m004 from '../../src/db/migrations/004_outbox_tuning.js'
import * as m005 from '../../src/db/migrations/005_webhook_operations.js'
import * as m006 from '../../src/db/migrations/006_integrity.js'
import * as m007 from '../../src/db/migrations/007_review_and_pay_periods.js'
import * as m008 from '../../src/db/migrations/008_open_sessions_index.js'
import type { Db } from '../../src/db/types.js'
import { createKey, listKeys, setKeyLabel } from '../../src/modules/keys/service.js'
import { createTestDatabase, dialect, type TestDatabase } from '../helpers/database.js'

/** Migration 009 on a database that already holds keys: they keep working, without a label. */
describe('migration 009_api_key_labels', () => {
  let database: TestDatabase
  let db: Db

  beforeAll(async () => {
    database = await createTestDatabase()
    db = openDatabase(database.url).db
    const before: Record<string, Migration> = {
      '001_foundation': m001,
      '002_attendance': m002,
      '003_webhooks': m003,
      '004_outbox_tuning': m004,
      '005_webhook_operations': m005,
      '006_integrity': m006,
      '007_review_and_pay_periods': m007,
      '008_open_sessions_index': m008,
    }
    const schema =
      dialect === 'postgres'
        ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
        : undefined
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => before },
      ...(schema ? { migrationTableSchema: schema } : {}),
    })
    const { error } = await migrator.migrateToLatest()
    if (error) throw error
  })
  afterAll(async () => {
    await db?.destroy()
    await database?.drop()
  })

  it('adds a nullable label: existing keys have none, and can be given one', async () => {
    // biome-ignore lint/suspicious/noExplicitAny: the schema as it was before 009
    const old = db as unknown as Kysely<any>
    await old.insertInto('accounts').values({ id: 'acct_1', name: 'acme', created_at: Date.now() }).execute()
    await old
      .insertInto('api_keys')
      .values({
        id: 'key_old',
        account_id: 'acct_1',
        livemode: 0,
        secret_hash: 'hash',
        secret_prefix: 'sk_test_abcd',
        scopes: 'sessions:read',
        expires_at: null,
        revoked_at: null,
        created_at: Date.now(),
      })
      .execute()

    expect(await migrateToLatest(db)).toEqual(['009_api_key_labels'])
    expect((await listKeys(db)).map((k) => [k.id, k.label])).toEqual([['key_old', null]])
    expect(await setKeyLabel(db, 'key_old', 'Payroll export')).toBe(true)
    const created = await createKey(db, { account: 'acme', mode: 'test', label: 'Console' })
    expect((await listKeys(db)).map((k) => [k.id, k.label])).toEqual(
      [
        ['key_old', 'Payroll export'],
        [created.id, 'Console'],
      ].sort((a, b) => ((a[0] ?? '') < (b[0] ?? '') ? -1 : 1)),
    )
  })
})
