import fs from 'node:fs'
import path from 'node:path'
import { PostgresAdapter, PostgresDialect, type QueryCompiler, sql } from 'kysely'
import pg from 'pg'
import { signallingKysely } from './commit-signals.js'
import { holdingWritesDialect } from './held-writes.js'
import { PostgresLiteralLimitCompiler } from './literal-limit-compiler.js'
import { namingPreparedStatements } from './postgres-prepared.js'
import { PostgresSignals } from './postgres-signals.js'
import { SQLite } from './sqlite/addon.js'
import { type GroupCommitStats, ServiceSqliteDialect } from './sqlite/driver.js'
import type { Db, Executor } from './types.js'

export interface DatabaseHandle {
  db: Db
  /** SQLite: the real COMMITs of groups and the transactions they carried (tests, benchmarks). */
  groupCommits?: GroupCommitStats
}

const PG_INT8_OID = 20
/**
 * Transactions a SQLite COMMIT may carry. Under load a create's 25–30 WAL pages (the session, its
 * indexes, a revision, two events) are mostly the same hot pages as the next create's, so k creates
 * in one COMMIT write far fewer pages than k COMMITs; a transaction waits at most for the others of
 * its group, which were already queued for the connection.
 */
const GROUP_COMMIT_MAX = 16

export interface OpenOptions {
  /**
   * SQLite: commit transactions in groups (see sqlite/driver.ts). A group holds the file's write
   * lock until the event loop's next turn; the other connections of the process wait for it in
   * the event loop (the driver's per-file write lock), other processes under busy_timeout.
   */
  groupCommit?: boolean
  /**
   * PostgreSQL: the longest a statement may run (`statement_timeout`, lock waits included) and a
   * wait for a pooled connection may last; past it the caller gets an error that
   * `isDatabaseTimeout` recognises. Unset: no bound (the tests' own handles).
   */
  statementTimeoutMs?: number | undefined
}

/**
 * The service's database, opened from its config as every part of the service opens it: the
 * server, the worker, the CLI and the tests' app. On SQLite its transactions commit in groups.
 */
export function openServiceDatabase(config: {
  readonly databaseUrl: string
  readonly databaseStatementTimeoutMs?: number
}): DatabaseHandle {
  return openDatabase(config.databaseUrl, {
    groupCommit: true,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
  })
}

/**
 * Opens the database named by a normalised DATABASE_URL (see config.ts). Its commits carry signals
 * (commit-signals.ts): within the process on both dialects, and between processes on PostgreSQL.
 */
export function openDatabase(url: string, options: OpenOptions = {}): DatabaseHandle {
  if (url.startsWith('sqlite:')) {
    const dialect = sqliteDialect(url, options)
    return { db: signallingKysely(dialect), groupCommits: dialect.groupCommits }
  }
  const pool = postgresPool(url, options.statementTimeoutMs)
  // Connections that can hold a transaction's writes for its next statement (held-writes.ts).
  const dialect = holdingWritesDialect(
    new PostgresLiteralLimitDialect({ pool: namingPreparedStatements(pool) }),
  )
  return { db: signallingKysely(dialect, new PostgresSignals(url, pool)) }
}

function sqliteDialect(url: string, options: OpenOptions): ServiceSqliteDialect {
  const file = url.slice('sqlite:'.length)
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
  const sqlite = new SQLite(file)
  // WAL lets readers (the CLI, a second process) work beside the writer; busy_timeout makes a
  // writer wait for the lock instead of failing at once.
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('busy_timeout = 5000')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  // After a checkpoint lets the WAL start over, a WAL file that grew larger than this is truncated.
  sqlite.pragma('journal_size_limit = 134217728')
  // Savepoint and statement journals in memory, not in temporary files. Group commit runs every
  // transaction in a savepoint of the group's one transaction, and a savepoint journals the
  // original of each page it changes that existed when it began: some 50 pages a create, which
  // SQLite spills to a temporary file past 64 KiB. Measured on a create's own statements
  // (docs/performance.md): 351 → 195 µs of CPU a create, a third of the system calls. The journal
  // of a savepoint is only needed to roll that savepoint back; what is committed is in the WAL,
  // so durability is unchanged. It is at most a group's worth of pages (a few MB).
  sqlite.pragma('temp_store = MEMORY')
  // Transactions are `BEGIN IMMEDIATE` and commit in groups, statements are prepared once, and
  // checkpoints run in the background: see sqlite/driver.ts and sqlite/checkpointer.ts.
  return new ServiceSqliteDialect({
    database: sqlite,
    groupCommit: { maxTransactions: options.groupCommit ? GROUP_COMMIT_MAX : 1 },
    checkpoint:
      file === ':memory:'
        ? undefined
        : { file, onError: (error) => process.emitWarning(`SQLite checkpoint: ${String(error)}`) },
  })
}

/** PostgreSQL's dialect with LIMITs written into the SQL (literal-limit-compiler.ts says why). */
class PostgresLiteralLimitDialect extends PostgresDialect {
  override createQueryCompiler(): QueryCompiler {
    return new PostgresLiteralLimitCompiler()
  }
}

/**
 * How much longer than the statement timeout the client waits for an answer before it gives the
 * connection up: the server's timeout cancels a statement that runs or waits for a lock, but a
 * server that does not answer at all (stopped, or a network that drops packets) only the client
 * can notice.
 */
const CLIENT_TIMEOUT_MARGIN_MS = 2000

function postgresPool(url: string, statementTimeoutMs: number | undefined): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(statementTimeoutMs === undefined
      ? {}
      : {
          statement_timeout: statementTimeoutMs,
          query_timeout: statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
          // Both a new connection and a wait in the pool's queue for a free one.
          connectionTimeoutMillis: statementTimeoutMs,
        }),
    // Beyond these, a connection idle for 10 s is closed. These stay: a new one costs ~40 ms
    // (fork, authentication, then the backend's catalog caches filled by its first statements),
    // paid otherwise at the start of every burst that follows a quiet spell.
    min: POOL_KEPT,
    // `pg` writes a statement without waiting for the answer to the one before, where we send
    // several together: a transaction's BEGIN with its first read, held writes with their COMMIT
    // (held-writes.ts). Statements sent one at a time, as every other caller does, are unchanged.
    pipeline: true,
    // Epoch-millisecond columns are bigint; they fit a JS number exactly until the year 287396.
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === PG_INT8_OID
          ? Number
          : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  })
  // An idle connection the server cuts (a restart, pg_terminate_backend) is reported here, already
  // out of the pool, which opens another when one is needed. Unheard, the event would end the
  // process; readiness (GET /readyz) says whether the database answers again.
  pool.on('error', (error) =>
    process.emitWarning(`PostgreSQL: an idle pooled connection was lost: ${error.message}`),
  )
  // The pool listens to a connection only while it is idle. One lost while lent out (the server
  // restarted, or the client gave up on an answer: `query_timeout`) fails the statements sent on it,
  // which their callers hear, and the pool drops it when it comes back; its error event, unheard,
  // would end the process.
  pool.on('connect', (client) => client.on('error', () => undefined))
  return pool
}

/** Pooled PostgreSQL connections kept open however idle (see postgresPool). */
export const POOL_KEPT = 4

/**
 * Opens up to `count` pooled connections now (PostgreSQL; nothing on SQLite), so that the first
 * burst of work does not wait for them.
 */
export async function openConnections(db: Db, count: number): Promise<void> {
  if (!supportsRowLocks(db)) return
  await Promise.all(Array.from({ length: count }, () => sql`select 1`.execute(db)))
}

/**
 * True for an error that says the database did not answer in time: PostgreSQL cancelled a
 * statement past `statement_timeout` (57014), the client gave up on an answer (`query_timeout`) or
 * on a pooled connection (`connectionTimeoutMillis`), or SQLite's write lock stayed taken past its
 * busy timeout.
 */
export function isDatabaseTimeout(error: unknown): boolean {
  const code = errorCode(error)
  if (code === '57014' || code === 'SQLITE_BUSY') return true
  const message = error instanceof Error ? error.message : ''
  return (
    message === 'Query read timeout' ||
    message === 'timeout exceeded when trying to connect' ||
    message === 'Connection terminated due to connection timeout'
  )
}

/**
 * True for an error that says the database cannot be reached now but may be later: the connection
 * refused, cut or timed out (`isDatabaseTimeout` included), the server starting or shutting down, or
 * out of connections (PostgreSQL's class 08, 57P01–57P03, 53300). A wrong password or a missing
 * database is not.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (isDatabaseTimeout(error)) return true
  const code = errorCode(error) ?? ''
  if (UNREACHABLE_CODES.has(code) || code.startsWith('08')) return true
  // pg's own errors have no code: the connection ended, or a statement (a transaction's ROLLBACK,
  // whose error Kysely passes on in place of the first) sent on a connection already lost.
  const message = error instanceof Error ? error.message : ''
  return message.startsWith('Connection terminated') || message.endsWith('and is not queryable')
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53300',
])

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : undefined
}

/** True for a unique-constraint violation on either dialect. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const code = (error as { code?: unknown }).code
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}

/**
 * A constant that a partial index's condition names (`status = 'pending'`), written into the SQL
 * rather than bound. SQLite uses a partial index only when it can tell from the statement that the
 * index's condition holds: with the value bound, it reads the bound value to decide, and so marks
 * the statement to be prepared again each time that parameter is bound, that is at every run
 * (measured: a small select 4.6 µs bound against 0.9 µs written; the webhook claim about 1 ms a run).
 * Written, it costs nothing on either dialect.
 */
export function indexedConstant<T extends string>(value: T) {
  return sql.lit(value)
}

/**
 * PostgreSQL takes a row lock with `FOR UPDATE`; SQLite has no such clause and needs none, since
 * its write transactions already run one at a time.
 */
export function supportsRowLocks(db: Executor): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}
