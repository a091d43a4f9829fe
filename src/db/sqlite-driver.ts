import type SQLite from 'better-sqlite3'
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  SelectQueryNode,
  SqliteDialect,
} from 'kysely'
import { Checkpointer, type CheckpointerOptions } from './checkpointer.js'

/**
 * The SQLite side of Kysely, written here rather than taken from Kysely, for two reasons:
 *
 * 1. **Prepared statements are kept.** Kysely's `SqliteDriver` calls `db.prepare(sql)` for every
 *    query and throws the statement away: preparing (parsing and planning the SQL) was 10.8 % of the
 *    service's CPU on `POST /v1/sessions` and 5.1 % on `GET /v1/sessions` (docs/performance.md).
 *    The service runs a few dozen distinct statements, so a small cache keyed by SQL text prepares
 *    each once. It is bounded (least recently used out) because SQL built from optional filters or
 *    lists of values (`in (?, ?, …)`) makes new texts; SQLite re-prepares a cached statement by
 *    itself if the schema changed (a migration) since it was prepared.
 * 2. **Every transaction is `BEGIN IMMEDIATE`.** Every transaction of ours writes; taking the write
 *    lock at the start makes a second process (the CLI beside the server) wait its turn under
 *    busy_timeout instead of failing with SQLITE_BUSY when its read snapshot would have to be
 *    upgraded to a write.
 *
 * Kysely offers no hook for either (its driver's connection is private), hence a driver of our own;
 * it is otherwise Kysely's: one connection, handed to one caller at a time.
 */
export class StatementCache {
  private readonly statements = new Map<string, SQLite.Statement>()
  hits = 0
  misses = 0

  constructor(
    private readonly database: SQLite.Database,
    readonly capacity: number,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error('capacity must be a positive integer')
  }

  get size(): number {
    return this.statements.size
  }

  /** The prepared statement for `sql`, prepared now if it is not cached. */
  get(sql: string): SQLite.Statement {
    const cached = this.statements.get(sql)
    if (cached !== undefined) {
      this.hits++
      // A Map iterates in insertion order: re-inserting makes this the most recently used.
      this.statements.delete(sql)
      this.statements.set(sql, cached)
      return cached
    }
    this.misses++
    // Prepared before anything is evicted: SQL that fails to prepare changes nothing.
    const statement = this.database.prepare(sql)
    if (this.statements.size >= this.capacity) {
      const oldest = this.statements.keys().next()
      if (!oldest.done) this.statements.delete(oldest.value)
    }
    this.statements.set(sql, statement)
    return statement
  }

  /** A statement of its own, not cached (for a caller that keeps it busy, such as an iteration). */
  uncached(sql: string): SQLite.Statement {
    return this.database.prepare(sql)
  }

  has(sql: string): boolean {
    return this.statements.has(sql)
  }

  clear(): void {
    this.statements.clear()
  }
}

export interface ServiceSqliteDialectConfig {
  database: SQLite.Database
  /** Prepared statements kept, least recently used out; default 500. */
  statementCacheSize?: number
  /**
   * Checkpoints in the background (see checkpointer.ts) instead of in the COMMIT that fills the
   * WAL; for a database file in WAL mode. The driver turns automatic checkpoints off.
   */
  checkpoint?: Omit<CheckpointerOptions, 'finishOnMainThread'>
}

export const DEFAULT_STATEMENT_CACHE_SIZE = 500

export class ServiceSqliteDialect extends SqliteDialect {
  constructor(private readonly serviceConfig: ServiceSqliteDialectConfig) {
    super({ database: serviceConfig.database })
  }

  override createDriver(): Driver {
    return new ServiceSqliteDriver(this.serviceConfig)
  }
}

export class ServiceSqliteDriver implements Driver {
  private readonly mutex = new ConnectionMutex()
  private readonly connection: ServiceSqliteConnection
  private checkpointer: Checkpointer | undefined

  constructor(private readonly config: ServiceSqliteDialectConfig) {
    this.connection = new ServiceSqliteConnection(
      new StatementCache(config.database, config.statementCacheSize ?? DEFAULT_STATEMENT_CACHE_SIZE),
    )
  }

  async init(): Promise<void> {
    const checkpoint = this.config.checkpoint
    if (checkpoint) {
      this.config.database.pragma('wal_autocheckpoint = 0')
      this.checkpointer = new Checkpointer({
        ...checkpoint,
        finishOnMainThread: () =>
          this.exclusive(() => {
            this.connection.statements.get('PRAGMA wal_checkpoint(PASSIVE)').get()
          }),
      })
    }
  }

  /** Runs `fn` on the connection between two callers' uses of it (no transaction is open). */
  async exclusive(fn: () => void): Promise<void> {
    await this.mutex.lock()
    try {
      fn()
    } finally {
      this.mutex.unlock()
    }
  }

  /** For tests: what the background checkpointer has done, if there is one. */
  get checkpoints() {
    return this.checkpointer?.stats
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    // SQLite has one connection: callers wait until the one before has released it.
    await this.mutex.lock()
    return this.connection
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'))
  }

  async savepoint(connection: DatabaseConnection, name: string, _compile: QueryCompiler['compileQuery']) {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${quoteName(name)}`))
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    _compile: QueryCompiler['compileQuery'],
  ) {
    await connection.executeQuery(CompiledQuery.raw(`rollback to ${quoteName(name)}`))
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    _compile: QueryCompiler['compileQuery'],
  ) {
    await connection.executeQuery(CompiledQuery.raw(`release ${quoteName(name)}`))
  }

  async releaseConnection(): Promise<void> {
    this.mutex.unlock()
  }

  async destroy(): Promise<void> {
    // The checkpointer's connection first: the last connection to close checkpoints the WAL into
    // the database file and removes it.
    await this.checkpointer?.stop()
    this.connection.statements.clear()
    this.config.database.close()
  }

  /** For tests: the statement cache of the one connection. */
  get statements(): StatementCache {
    return this.connection.statements
  }
}

function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

class ServiceSqliteConnection implements DatabaseConnection {
  constructor(readonly statements: StatementCache) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const statement = this.statements.get(compiledQuery.sql)
    const parameters = compiledQuery.parameters as unknown[]
    if (statement.reader) return Promise.resolve({ rows: statement.all(parameters) as R[] })
    const { changes, lastInsertRowid } = statement.run(parameters)
    return Promise.resolve({
      numAffectedRows: BigInt(changes),
      insertId: BigInt(lastInsertRowid),
      rows: [],
    })
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiledQuery.query)) {
      throw new Error('the SQLite driver streams only select queries')
    }
    // A statement being iterated cannot run anything else until the iteration ends, so a stream
    // gets a statement of its own, never a cached one.
    const statement = this.statements.uncached(compiledQuery.sql)
    for (const row of statement.iterate(compiledQuery.parameters as unknown[])) {
      yield { rows: [row as R] }
    }
  }
}

class ConnectionMutex {
  private promise: Promise<void> | undefined
  private resolve: (() => void) | undefined

  async lock(): Promise<void> {
    while (this.promise) await this.promise
    this.promise = new Promise((resolve) => {
      this.resolve = resolve
    })
  }

  unlock(): void {
    const resolve = this.resolve
    this.promise = undefined
    this.resolve = undefined
    resolve?.()
  }
}
