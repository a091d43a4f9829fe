import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, inject } from 'vitest'
import { openServiceDatabase } from '../../src/db/connection.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { Database } from '../../src/db/schema.js'
import type { Db } from '../../src/db/types.js'
import { onServer } from './postgres-run.js'

export type TestDialect = 'sqlite' | 'postgres'

export const dialect: TestDialect = process.env.TEST_DIALECT === 'postgres' ? 'postgres' : 'sqlite'

/**
 * The run's `no-database` project (vitest.config.ts) holds the files that reach none of the database
 * helpers; one that opens a database all the same is misfiled, and fails here rather than run once.
 */
function refuseWithoutDialect(): void {
  if (process.env.TEST_DIALECT === 'none') {
    throw new Error(
      'this test file opens a database but runs in the no-database project: import the database ' +
        'helpers from test/helpers (test/helpers/test-kinds.ts follows test/ imports to find them)',
    )
  }
}

export interface TestDatabase {
  /** A DATABASE_URL for this fresh, empty database. */
  url: string
  /**
   * Removes a SQLite file, or a PostgreSQL database of its own, now. A PostgreSQL schema stays
   * until the run ends and its database is dropped (test/helpers/postgres-run.ts says why).
   */
  drop(): Promise<void>
}

/**
 * A fresh database per call: a SQLite file in a temporary folder, or a PostgreSQL schema of its
 * own (selected through the connection's search_path) in this run's database. Real databases, no
 * mocks; tests of different files never see each other's rows.
 *
 * `ownPostgresDatabase`: for a test that drops or renames a table. Kysely's migrator lists the
 * tables of every schema of its database, then asks about each by name, so a table dropped in a
 * shared run database fails the migration of a test file running beside it (42P01). A PostgreSQL
 * database of its own is invisible to the others; `drop()` removes it.
 */
export async function createTestDatabase(
  options: { ownPostgresDatabase?: boolean; migrated?: boolean } = {},
): Promise<TestDatabase> {
  refuseWithoutDialect()
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-test-'))
    if (options.migrated) fs.copyFileSync(await migratedSqliteFile(), path.join(dir, 'attendance.db'))
    return {
      url: `sqlite:${path.join(dir, 'attendance.db')}`,
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    }
  }
  const base = inject('postgresRunUrl')
  const name = `t_${randomBytes(6).toString('hex')}`
  const url = new URL(base)
  if (options.ownPostgresDatabase) {
    await onServer(base, `create database ${name}`)
    url.pathname = `/${name}`
    return {
      url: url.toString(),
      drop: () => onServer(base, `drop database if exists ${name} with (force)`),
    }
  }
  await onServer(base, `create schema ${name}`)
  url.searchParams.set('options', `-c search_path=${name}`)
  if (options.migrated) await replayMigrations(base, url.toString(), name)
  return { url: url.toString(), drop: async () => undefined }
}

interface Statement {
  sql: string
  parameters: readonly unknown[]
}

let postgresMigration: Promise<{ schema: string; statements: Statement[] }> | undefined

/**
 * PostgreSQL's counterpart of `migratedSqliteFile`: the statements the migrations run, recorded once
 * per test process by migrating a schema of its own through a Kysely that logs every query. Reads
 * (the migrator's look-ups) are left out: on an empty schema they change nothing.
 */
function recordedMigration(base: string): Promise<{ schema: string; statements: Statement[] }> {
  postgresMigration ??= (async () => {
    const schema = `tpl_${randomBytes(6).toString('hex')}`
    await onServer(base, `create schema ${schema}`)
    const url = new URL(base)
    url.searchParams.set('options', `-c search_path=${schema}`)
    const statements: Statement[] = []
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.toString(), max: 1 }) }),
      log: (event) => {
        if (event.level === 'query' && !/^\s*select\b/i.test(event.query.sql))
          statements.push({ sql: event.query.sql, parameters: event.query.parameters })
      },
    })
    try {
      await migrateToLatest(db)
    } finally {
      await db.destroy()
    }
    return { schema, statements }
  })()
  return postgresMigration
}

/**
 * Runs the recorded migration in schema `name`, in one transaction: the schema the migrations would
 * write, in a fraction of the migrator's time (it introspects the schema before and after each
 * migration). The migrator names its bookkeeping tables with the recording's schema; that name is a
 * random token, replaced by this one's.
 */
async function replayMigrations(base: string, url: string, name: string): Promise<void> {
  const { schema, statements } = await recordedMigration(base)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('begin')
    for (const statement of statements)
      await client.query(statement.sql.replaceAll(schema, name), [...statement.parameters])
    await client.query('commit')
  } finally {
    await client.end()
  }
}

let migratedSqlite: Promise<string> | undefined

/**
 * A SQLite file migrated to the latest version once per test process, closed (so its WAL is
 * checkpointed into it and removed): `createTestDatabase({ migrated: true })` copies it instead of
 * running every migration again for each test app (some 100–150 ms of CPU each, a few hundred times a
 * run). The copy is the file the migrations wrote, byte for byte; test/db/migrate.test.ts and the
 * migration tests still run the migrations themselves, on empty databases.
 */
function migratedSqliteFile(): Promise<string> {
  migratedSqlite ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-template-'))
    const file = path.join(dir, 'attendance.db')
    const { db } = openServiceDatabase({ databaseUrl: `sqlite:${file}` })
    await migrateToLatest(db)
    await db.destroy()
    if (fs.existsSync(`${file}-wal`)) throw new Error(`the migrated SQLite template kept a WAL: ${file}-wal`)
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
    return file
  })()
  return migratedSqlite
}

/**
 * A fresh database for the tests of the enclosing `describe`, made and opened by `open` before them,
 * closed and dropped after them: `const database = useDatabase(open)`, then `database.db` in a test.
 */
export function useDatabase(open: (url: string) => Promise<Db>): { readonly db: Db } {
  let database: TestDatabase | undefined
  let db: Db | undefined
  beforeAll(async () => {
    database = await createTestDatabase()
    db = await open(database.url)
  })
  afterAll(async () => {
    await db?.destroy()
    await database?.drop()
  })
  return {
    get db(): Db {
      if (!db) throw new Error('the database is made in beforeAll: use it inside a test')
      return db
    },
  }
}

/** `useDatabase`, migrated and opened as the service opens it (on SQLite, with group commit). */
export function useMigratedDatabase(): { readonly db: Db } {
  return useDatabase(async (url) => {
    const { db } = openServiceDatabase({ databaseUrl: url })
    await migrateToLatest(db)
    return db
  })
}

/**
 * Holds the database so that the service's queries wait: on SQLite the process's one connection, by a
 * transaction left open; on PostgreSQL an access-exclusive lock on `table`, from another connection.
 * Resolves once held; `release()` ends the transaction.
 */
export async function holdDatabase(db: Db, table: string): Promise<{ release: () => Promise<void> }> {
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  let locked = () => {}
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve
  })
  const holder = db.transaction().execute(async (trx) => {
    if (dialect === 'postgres')
      await sql`lock table ${sql.table(table)} in access exclusive mode`.execute(trx)
    locked()
    await held
  })
  await isLocked
  return {
    release: async () => {
      release()
      await holder
    },
  }
}
