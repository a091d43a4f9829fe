import { setTimeout as sleep } from 'node:timers/promises'
import {
  type DatabaseIntrospector,
  DEFAULT_MIGRATION_TABLE,
  type Migration,
  type MigrationProvider,
  Migrator,
  sql,
} from 'kysely'
import { withoutPassword } from '../lib/url.js'
import { isDatabaseUnreachable, supportsRowLocks } from './connection.js'
import * as m001 from './migrations/001_foundation.js'
import * as m002 from './migrations/002_attendance.js'
import * as m003 from './migrations/003_webhooks.js'
import * as m004 from './migrations/004_outbox_tuning.js'
import * as m005 from './migrations/005_webhook_operations.js'
import * as m006 from './migrations/006_integrity.js'
import * as m007 from './migrations/007_review_and_pay_periods.js'
import * as m008 from './migrations/008_open_sessions_index.js'
import * as m009 from './migrations/009_api_key_labels.js'
import * as m010 from './migrations/010_pay_rules.js'
import * as m011 from './migrations/011_session_breaks.js'
import * as m012 from './migrations/012_closed_timesheets.js'
import * as m013 from './migrations/013_metrics_indexes.js'
import * as m014 from './migrations/014_retention.js'
import * as m015 from './migrations/015_time_clock.js'
import * as m016 from './migrations/016_location_locale.js'
import * as m017 from './migrations/017_people.js'
import * as m018 from './migrations/018_audit_filters.js'
import type { Db } from './types.js'

// Migrations are imported statically so the built service and tsx runs need no file-system scan.
const migrations: Record<string, Migration> = {
  '001_foundation': m001,
  '002_attendance': m002,
  '003_webhooks': m003,
  '004_outbox_tuning': m004,
  '005_webhook_operations': m005,
  '006_integrity': m006,
  '007_review_and_pay_periods': m007,
  '008_open_sessions_index': m008,
  '009_api_key_labels': m009,
  '010_pay_rules': m010,
  '011_session_breaks': m011,
  '012_closed_timesheets': m012,
  '013_metrics_indexes': m013,
  '014_retention': m014,
  '015_time_clock': m015,
  '016_location_locale': m016,
  '017_people': m017,
  '018_audit_filters': m018,
}

/**
 * This release's migrations, and a stand-in for each migration the database ran that this release
 * does not know: a newer release's, in a rolling upgrade or after a rollback (docs/operations.md,
 * "Upgrades and rollbacks"). Kysely refuses to migrate when a migration it ran is missing from its
 * list ("corrupted migrations"), which made every older process that restarted fail to start. A
 * newer release's migrations only expand the schema (the contract), so this release works beside
 * them; a stand-in is never run (the database ran it), and refuses if it ever were.
 */
function withNewerReleases(ran: readonly string[]): MigrationProvider {
  const newer = ran.filter((name) => !(name in migrations))
  const standIns = Object.fromEntries(
    newer.map((name): [string, Migration] => [
      name,
      {
        up: async () => {
          throw new Error(`migration ${name} is a newer release's: this release cannot run it`)
        },
      },
    ]),
  )
  return { getMigrations: async () => ({ ...migrations, ...standIns }) }
}

/** The migrations the database has run, by name; none when it has no migration table yet. */
async function ranMigrations(db: Db): Promise<string[]> {
  // Unqualified: on PostgreSQL the table is in the connection's own schema, the first of its
  // search_path (migrateToLatest pins it there).
  const read = async () =>
    (
      await sql<{ name: string }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)}`.execute(db)
    ).rows.map((row) => row.name)
  try {
    return await read()
  } catch (error) {
    if (!(await hasMigrationTable(db))) return []
    // Processes started together on an empty database: another one created the table since.
    return read().catch(() => {
      throw error
    })
  }
}

async function hasMigrationTable(db: Db): Promise<boolean> {
  const tables = await db.introspection.getTables()
  return tables.some((table) => table.name === DEFAULT_MIGRATION_TABLE)
}

/** Kysely's refusal when the database ran a migration its list lacks. */
const MISSING_MIGRATION = /^corrupted migrations: previously executed migration .+ is missing$/

/** Brings the schema up to date; safe to run from several processes (Kysely takes a lock). */
export async function migrateToLatest(db: Db): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in every schema it can see; on PostgreSQL they are
  // pinned to the connection's own schema, or a second app (or schema) in the database would make
  // this one skip creating its own.
  const migrationTableSchema = supportsRowLocks(db)
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
    : undefined
  const migrationDb = migrationTableSchema ? withIntrospectionOf(db, migrationTableSchema) : db
  // The names are read before Kysely takes its lock: a newer process that migrates in between makes
  // the run fail as "missing", and it is tried again with that name known.
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateWith(
        migrationDb,
        withNewerReleases(await ranMigrations(migrationDb)),
        migrationTableSchema,
      )
    } catch (error) {
      if (attempt >= 3 || !(error instanceof Error) || !MISSING_MIGRATION.test(error.message)) throw error
    }
  }
}

/** The start's first wait before it tries an unreachable database again; each wait doubles, up to the second. */
const FIRST_RETRY_MS = 250
const LONGEST_RETRY_MS = 5000

/** The database stayed unreachable for the whole start-up bound; the message names DATABASE_URL. */
export class DatabaseUnreachableError extends Error {
  /** An error of the environment, not a bug: the CLI prints its message alone. */
  readonly code = 'DATABASE_UNREACHABLE'
}

export interface StartupRetry {
  /** The database URL, named (without its password) in the error. */
  url: string
  /** How long to keep trying (DATABASE_STARTUP_TIMEOUT_MS); 0 tries once. */
  timeoutMs: number
  /** Each failed attempt, before the wait for the next one. */
  onFailure(failure: { error: unknown; attempt: number; retryInMs: number }): void | Promise<void>
}

/**
 * `migrateToLatest` at start-up, tried again while the database cannot be reached
 * (`isDatabaseUnreachable`: refused, cut, timed out, starting up), waiting 250 ms, then twice as long
 * each time up to 5 s, for at most `timeoutMs`. A process started before its database (a host's
 * boot, a container beside PostgreSQL's) waits for it rather than exiting at once, which would have
 * its supervisor restart it in a loop. Any other failure (a wrong password, a failed migration) is
 * thrown at once.
 */
export async function migrateWhenReachable(db: Db, retry: StartupRetry): Promise<string[]> {
  const deadline = new AbortController()
  const timer = retry.timeoutMs > 0 ? setTimeout(() => deadline.abort(), retry.timeoutMs) : undefined
  if (timer === undefined) deadline.abort()
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await migrateToLatest(db)
      } catch (error) {
        if (!isDatabaseUnreachable(error)) throw error
        if (deadline.signal.aborted)
          throw new DatabaseUnreachableError(
            `DATABASE_URL (${withoutPassword(retry.url)}) could not be reached${retry.timeoutMs > 0 ? ` within ${retry.timeoutMs} ms` : ''} (DATABASE_STARTUP_TIMEOUT_MS=${retry.timeoutMs}): ${errorInOneLine(error)}`,
            { cause: error },
          )
        const retryInMs = Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), LONGEST_RETRY_MS)
        await retry.onFailure({ error, attempt, retryInMs })
        // Cut short by the deadline: one last attempt, then the error.
        await sleep(retryInMs, undefined, { signal: deadline.signal }).catch(() => undefined)
      }
    }
  } finally {
    clearTimeout(timer)
  }
}

/** An error in one line: a connection to `localhost` that failed on each address is an AggregateError with no message of its own. */
export function errorInOneLine(error: unknown): string {
  if (error instanceof AggregateError && !error.message) return error.errors.map(errorInOneLine).join('; ')
  return error instanceof Error ? error.message : String(error)
}

async function migrateWith(
  db: Db,
  provider: MigrationProvider,
  migrationTableSchema: string | undefined,
): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider,
    // Branches add migrations side by side (005 and 006 touch different tables): a database that ran
    // one must still accept the other, whichever number it has.
    allowUnorderedMigrations: true,
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/**
 * `db` whose introspector lists the tables of `schema` alone. Kysely's migrator asks whether its two
 * bookkeeping tables exist by listing every column of every table of every schema the connection can
 * see (PostgresIntrospector.getTables), twice a run, and reads only the tables' names and schemas.
 * In a database holding many schemas (a host's tenants, or the test suite's hundreds) that listing
 * grows with all of them: a fresh schema's migration took 0.4 s beside a few schemas and 0.8 s beside
 * 60, most of it there. The rest of `db` is the real instance (its methods bound to it, since Kysely
 * keeps its state in private fields that a proxy cannot reach).
 */
function withIntrospectionOf(db: Db, schema: string): Db {
  const introspection: DatabaseIntrospector = {
    getSchemas: () => db.introspection.getSchemas(),
    getTables: async () => {
      const { rows } = await sql<{ name: string; type: string }>`
        select table_name as name, table_type as type from information_schema.tables
        where table_schema = ${schema}`.execute(db)
      return rows.map((row) => ({ name: row.name, schema, isView: row.type === 'VIEW', columns: [] }))
    },
    getMetadata: async (options) => ({ tables: await introspection.getTables(options) }),
  }
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/**
 * The migrations of this version that the database has not run: none when its schema is at the
 * latest. One small query, cheap enough for every readiness probe, and it fails as any query does
 * when the database does not answer. A migration the database has and this version lacks (a newer
 * release ran) is not counted: migrations only add, so this version still works on that schema.
 */
export async function missingMigrations(db: Db): Promise<string[]> {
  // Unqualified: on PostgreSQL the table is in the connection's own schema, the first of its
  // search_path (migrateToLatest pins it there).
  const { rows } = await sql<{
    name: string
  }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)}`.execute(db)
  const done = new Set(rows.map((row) => row.name))
  return Object.keys(migrations).filter((name) => !done.has(name))
}
