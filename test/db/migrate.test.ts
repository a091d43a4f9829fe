import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { DEFAULT_MIGRATION_TABLE, sql } from 'kysely'
import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { openDatabase } from '../../src/db/connection.js'
import { migrateToLatest, missingMigrations } from '../../src/db/migrate.js'
import type { Db } from '../../src/db/types.js'
import { createTestDatabase, dialect, type TestDatabase, useMigratedDatabase } from '../helpers/database.js'

/** The schema a test database's URL selects (its search_path). */
const schemaOf = (database: TestDatabase) =>
  (new URL(database.url).searchParams.get('options') ?? '').replace('-c search_path=', '')

// Kysely's migrator, left to itself, lists the tables of every schema of the database, then asks
// about each by name: a schema dropped between the two fails the migration (3F000, 42P01, 42703).
// migrateToLatest shows it only its own schema's tables (src/db/migrate.ts), and the harness still
// drops no schema while tests run (test/helpers/postgres-run.ts): these tests check both.
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
    const churn = new pg.Client({ connectionString: inject('postgresRunUrl') })
    await churn.connect()
    try {
      // Other test files of the run making and dropping their databases, with a table each (what
      // Kysely's listing trips over), far more often than real test files do.
      await migrateBeside(async () => {
        const database = await createTestDatabase()
        await churn.query(`create table ${schemaOf(database)}.t (id serial primary key, v text)`)
        await database.drop()
      })
    } finally {
      await churn.end()
    }
  }, 120_000)

  it('gives a test that drops tables a database of its own, which drop() removes', async () => {
    const database = await createTestDatabase({ ownPostgresDatabase: true })
    const name = new URL(database.url).pathname.slice(1)
    const run = new pg.Client({ connectionString: inject('postgresRunUrl') })
    await run.connect()
    try {
      const { db } = openDatabase(database.url)
      try {
        await migrateToLatest(db)
        const own = await sql<{ name: string }>`select current_database() as name`.execute(db)
        expect(own.rows[0]?.name).toBe(name)
      } finally {
        await db.destroy()
      }
      const { rows } = await run.query<{ name: string }>('select current_database() as name')
      expect(rows[0]?.name).not.toBe(name)
      await database.drop()
      expect((await run.query('select 1 from pg_database where datname = $1', [name])).rowCount).toBe(0)
    } finally {
      await run.end()
    }
  })

  it('migrateToLatest succeeds while a test file beside it drops tables in a database of its own', async () => {
    // What test/http/errors.test.ts does to provoke a real failure, far more often. One database
    // for the whole churn: making databases in a loop would slow every PostgreSQL test of the run.
    const own = await createTestDatabase({ ownPostgresDatabase: true })
    const client = new pg.Client({ connectionString: own.url })
    await client.connect()
    try {
      await migrateBeside(async () => {
        await client.query('create table operators (id serial primary key, v text)')
        await client.query('drop table operators')
      })
    } finally {
      await client.end()
      await own.drop()
    }
  }, 120_000)
})

/** Migrates 15 fresh test databases, one after the other, while `churnOnce` runs again and again. */
async function migrateBeside(churnOnce: () => Promise<void>): Promise<void> {
  let churning = true
  const churn = (async () => {
    while (churning) await churnOnce()
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
    await churn
  }
}

describe('test files that drop or rename tables', () => {
  const TEST = path.resolve(import.meta.dirname, '..')
  const files = readdirSync(TEST, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => ({ file: f, text: readFileSync(path.join(TEST, f), 'utf8') }))

  it('finds the test files, and the one that drops a table', () => {
    expect(files.length).toBeGreaterThan(80)
    expect(files.map((f) => f.file)).toContain(path.join('http', 'errors.test.ts'))
  })

  it('run on a PostgreSQL database of their own', () => {
    // Statements inside sql`...` only: a savepoint-name test quotes "drop table" as data.
    const destructive = /sql`\s*(drop table|alter table \w+ rename)/i
    const shared = files
      .filter((f) => destructive.test(f.text) && !f.text.includes('ownPostgresDatabase: true'))
      .map((f) => f.file)
    expect(shared).toEqual([])
  })
})

// A rolling upgrade or a rollback: this release's processes start on a schema a newer release has
// already migrated (docs/operations.md, "Upgrades and rollbacks").
describe('beside a newer release', () => {
  const database = useMigratedDatabase()

  it('migrates, with nothing to run, a database that ran a migration this release does not know', async () => {
    const { db } = database
    await sql`insert into ${sql.table(DEFAULT_MIGRATION_TABLE)} (name, timestamp)
      values (${'999_newer_release'}, ${new Date(0).toISOString()})`.execute(db)
    expect(await migrateToLatest(db)).toEqual([])
    // And readiness counts it as nothing missing.
    expect(await missingMigrations(db)).toEqual([])
  })
})

// Several processes on one database is PostgreSQL's case (SQLite: one API process per file, and
// Kysely runs SQLite's migrations without a lock or a transaction around them).
describe.runIf(dialect === 'postgres')('processes started together on an empty database', () => {
  it('each migrates (or finds it done), none fails on the migration table another one is creating', async () => {
    // Several rounds, each on a fresh database: the window (one process's read of the table failing
    // as another creates it) is a few milliseconds wide. scale-out's API processes met it on CI.
    for (let round = 0; round < 6; round++) {
      const database = await createTestDatabase()
      const openers = Array.from({ length: 8 }, () => openDatabase(database.url).db)
      try {
        // Started a few milliseconds apart, as processes are: a later one reads before an earlier
        // one has created the table, and looks for the table after it has.
        const results = await Promise.allSettled(
          openers.map(async (db, i) => {
            await new Promise((resolve) => setTimeout(resolve, i * 3))
            return migrateToLatest(db)
          }),
        )
        expect(results.filter((result) => result.status === 'rejected')).toEqual([])
        // Every migration ran exactly once, by one of them.
        const ran = results.flatMap((result) => (result.status === 'fulfilled' ? result.value : []))
        expect(ran.length).toBe(new Set(ran).size)
        expect(await missingMigrations(openers[0] as Db)).toEqual([])
      } finally {
        await Promise.all(openers.map((db) => db.destroy()))
        await database.drop()
      }
    }
  }, 120_000)
})
