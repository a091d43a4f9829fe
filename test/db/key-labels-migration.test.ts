import type { Kysely } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrateToLatest } from '../../src/db/migrate.js'
import { createKey, listKeys, setKeyLabel } from '../../src/modules/keys/service.js'
import { useDatabaseMigratedTo } from '../helpers/migrations.js'

/** Migration 009 on a database that already holds keys: they keep working, without a label. */
describe('migration 009_api_key_labels', () => {
  const database = useDatabaseMigratedTo('008_open_sessions_index')

  it('adds a nullable label: existing keys have none, and can be given one', async () => {
    const { db } = database
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

    // The later migrations run too: 009 is the one this test is about.
    expect(await migrateToLatest(db)).toContain('009_api_key_labels')
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
