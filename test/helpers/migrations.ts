import { readdirSync } from 'node:fs'
import path from 'node:path'
import { type Migration, Migrator, sql } from 'kysely'
import { openDatabase } from '../../src/db/connection.js'
import type { Db } from '../../src/db/types.js'
import { dialect, useDatabase } from './database.js'
import { ROOT } from './process.js'

const MIGRATIONS = path.join(ROOT, 'src', 'db', 'migrations')

/**
 * The service's migrations up to `last` included, found by reading src/db/migrations/ (no second
 * list to keep beside src/db/migrate.ts's).
 */
async function migrationsUpTo(last: string): Promise<Record<string, Migration>> {
  const names = readdirSync(MIGRATIONS)
    .filter((file) => /^\d{3}_\w+\.ts$/.test(file))
    .map((file) => file.slice(0, -'.ts'.length))
    .filter((name) => name <= last)
  if (!names.includes(last)) throw new Error(`no migration ${last} in src/db/migrations`)
  const migrations: Record<string, Migration> = {}
  for (const name of names) migrations[name] = await import(path.join(MIGRATIONS, `${name}.ts`))
  return migrations
}

/**
 * A fresh database at the schema of migration `last`, as a database that last ran that release has
 * it, for the tests of the enclosing `describe` (made before them, closed and dropped after them):
 * a test fills the old schema, then runs `migrateToLatest` to see what the later migrations make of
 * those rows.
 */
export function useDatabaseMigratedTo(last: string): { readonly db: Db } {
  return useDatabase(async (url) => {
    const { db } = openDatabase(url)
    // On PostgreSQL, the bookkeeping tables in the connection's own schema, where migrateToLatest
    // looks for them: otherwise it would not see the migrations run here.
    const schema =
      dialect === 'postgres'
        ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
        : undefined
    const migrations = await migrationsUpTo(last)
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => migrations },
      ...(schema ? { migrationTableSchema: schema } : {}),
    })
    const { error } = await migrator.migrateToLatest()
    if (error) throw error
    return db
  })
}
