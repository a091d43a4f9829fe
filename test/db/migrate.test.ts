import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { openDatabase } from '../../src/db/connection.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { createTestDatabase, dialect, type TestDatabase } from '../helpers/database.js'

/** The schema a test database's URL selects (its search_path). */
const schemaOf = (database: TestDatabase) =>
  (new URL(database.url).searchParams.get('options') ?? '').replace('-c search_path=', '')

// Kysely's migrator lists the tables of every schema of the database, then asks about each by name:
// a schema dropped between the two fails the migration (3F000, 42P01, 42703). migrateToLatest does
// not work around that; the harness makes sure no schema is dropped while tests run
// (test/helpers/postgres-run.ts). These tests fail when a test database's drop() drops at once again.
describe.runIf(dialect === 'postgres')('test databases on PostgreSQL', () => {
  it('live in a database of this run, and outlive drop() until the run ends', async () => {
    const database = await createTestDatabase()
    const client = new pg.Client({ connectionString: inject('postgresRunUrl') })
    await client.connect()
    try {
      const { rows } = await client.query<{ name: string }>('select current_database() as name')
      expect(rows[0]?.name).toMatch(/^test_run_[0-9a-f]{12}$/)
      await database.drop()
      const schemas = await client.query('select 1 from pg_namespace where nspname = $1', [
        schemaOf(database),
      ])
      expect(schemas.rowCount).toBe(1)
    } finally {
      await client.end()
    }
  })

  it('migrateToLatest succeeds while other test files create and drop their databases beside it', async () => {
    let churning = true
    const churn = new pg.Client({ connectionString: inject('postgresRunUrl') })
    await churn.connect()
    // Other test files of the run making and dropping their databases, with a table each (what
    // Kysely's listing trips over), far more often than real test files do.
    const otherFiles = (async () => {
      while (churning) {
        const database = await createTestDatabase()
        await churn.query(`create table ${schemaOf(database)}.t (id serial primary key, v text)`)
        await database.drop()
      }
    })()
    try {
      for (let run = 0; run < 15; run++) {
        const database = await createTestDatabase()
        const { db } = openDatabase(database.url)
        try {
          expect((await migrateToLatest(db)).length).toBeGreaterThan(0)
        } finally {
          await db.destroy()
          await database.drop()
        }
      }
    } finally {
      churning = false
      await otherFiles
      await churn.end()
    }
  }, 120_000)
})
