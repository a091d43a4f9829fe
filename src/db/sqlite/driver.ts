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
import { SqliteLiteralLimitCompiler } from '../literal-limit-compiler.js'
import type { GuardedConnection } from '../types.js'
import { Checkpointer, type CheckpointerOptions } from './checkpointer.js'
import { type GroupCommit, type GroupCommitStats, groupCommit } from './group-commit.js'
import { Mutex, WriteTurn } from './locks.js'
import { DEFAULT_STATEMENT_CACHE_SIZE, StatementCache } from './statement-cache.js'

export type { GroupCommitStats } from './group-commit.js'

/**
 * The SQLite side of Kysely, written here rather than taken from Kysely, for two reasons:
 *
 * 1. **Prepared statements are kept** (`StatementCache`, statement-cache.ts): Kysely's
 *    `SqliteDriver` prepares every query again and throws the statement away.
 * 2. **Every transaction is `BEGIN IMMEDIATE`.** Every transaction of ours writes; taking the write
 *    lock at the start makes a second process (the CLI beside the server) wait its turn under
 *    busy_timeout instead of failing with SQLITE_BUSY when its read snapshot would have to be
 *    upgraded to a write. Connections of the same process take the write lock in turn before that,
 *    waiting in the event loop (`WriteTurn`, locks.ts), since busy_timeout's wait stops it.
 *
 * Kysely offers no hook for either (its driver's connection is private), hence a driver of our own;
 * it is otherwise Kysely's: one connection, handed to one caller at a time. It also commits in
 * groups (`groupCommit`, group-commit.ts).
 *
 * The dialect also writes LIMITs into the SQL text (`SqliteLiteralLimitCompiler`, ../literal-limit-compiler.ts).
 */

export interface ServiceSqliteDialectConfig {
  database: SQLite.Database
  /** Prepared statements kept, least recently used out; default 500. */
  statementCacheSize?: number
  /**
   * Checkpoints in the background (see checkpointer.ts) instead of in the COMMIT that fills the
   * WAL; for a database file in WAL mode. The driver turns automatic checkpoints off.
   */
  checkpoint?: Omit<CheckpointerOptions, 'holdWrites'>
  /**
   * Group commit: a transaction's COMMIT is put off to the event loop's next turn, so that the
   * transactions of the requests that arrived meanwhile join the same real transaction, each in a
   * savepoint of its own, up to `maxTransactions` (default 1: every transaction commits alone). Each transaction still
   * completes only after the COMMIT that makes it durable; one that fails is rolled back to its
   * savepoint without touching the others, and fails only after that COMMIT too (its error may
   * rest on the others' rows); a statement outside a transaction first commits the group, so it
   * never sees (or joins) uncommitted work.
   */
  groupCommit?: { maxTransactions: number }
}

export class ServiceSqliteDialect extends SqliteDialect {
  /** What its driver's group commit has done: for tests and benchmarks. */
  readonly groupCommits: GroupCommitStats = { commits: 0, transactions: 0 }

  constructor(private readonly serviceConfig: ServiceSqliteDialectConfig) {
    super({ database: serviceConfig.database })
  }

  override createDriver(): Driver {
    return new ServiceSqliteDriver(this.serviceConfig, this.groupCommits)
  }

  override createQueryCompiler(): QueryCompiler {
    return new SqliteLiteralLimitCompiler()
  }
}

export class ServiceSqliteDriver implements Driver {
  private readonly mutex = new Mutex()
  private readonly connection: ServiceSqliteConnection
  /** None when every transaction commits alone. */
  private readonly groups: GroupCommit | undefined
  private readonly writeTurn: WriteTurn
  private checkpointer: Checkpointer | undefined

  constructor(
    private readonly config: ServiceSqliteDialectConfig,
    readonly groupCommits: GroupCommitStats,
  ) {
    this.connection = new ServiceSqliteConnection(
      new StatementCache(config.database, config.statementCacheSize ?? DEFAULT_STATEMENT_CACHE_SIZE),
    )
    this.groups = groupCommit(config.groupCommit, groupCommits, {
      sql: (text) => this.sql(text),
      begin: () => this.begin(),
      stopWriting: () => this.writeTurn.stop(),
      inTransaction: () => config.database.inTransaction,
      handOn: () => this.mutex.unlock(),
      exclusive: (fn) => this.exclusive(fn),
    })
    this.writeTurn = new WriteTurn(config.database)
  }

  async init(): Promise<void> {
    const checkpoint = this.config.checkpoint
    if (checkpoint) {
      this.config.database.pragma('wal_autocheckpoint = 0')
      this.checkpointer = new Checkpointer({ ...checkpoint, holdWrites: (fn) => this.exclusive(fn) })
    }
  }

  /**
   * Runs `fn` between two callers' uses of the connection (no transaction is open); nobody else
   * gets the connection until it settles.
   */
  async exclusive(fn: () => void | Promise<void>): Promise<void> {
    await this.mutex.lock()
    try {
      this.groups?.commitNow()
      await fn()
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
    return new Lease(this)
  }

  /**
   * A statement of a lease; one outside a transaction never joins (or reads) an open group, and if
   * it writes, it takes the file's write lock for the transaction SQLite makes of it.
   */
  run<R>(lease: Lease, query: CompiledQuery): QueryResult<R> | Promise<QueryResult<R>> {
    if (lease.released) throw new Error('the SQLite connection was used after its release')
    if (lease.inTransaction) return this.connection.execute<R>(query)
    this.groups?.commitNow()
    if (!this.writeTurn.shared || this.connection.readsOnly(query)) return this.connection.execute<R>(query)
    return this.writingAlone(query)
  }

  private async writingAlone<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    await this.writeTurn.start()
    try {
      return this.connection.execute<R>(query)
    } finally {
      this.writeTurn.stop()
    }
  }

  private async begin(): Promise<void> {
    await this.writeTurn.start()
    try {
      this.sql('begin immediate')
    } catch (error) {
      this.writeTurn.stop()
      throw error
    }
  }

  stream<R>(lease: Lease, query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (lease.released) throw new Error('the SQLite connection was used after its release')
    if (!lease.inTransaction) this.groups?.commitNow()
    return this.connection.streamQuery<R>(query)
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease
    if (this.groups) await this.groups.begin()
    else await this.begin()
    lease.inTransaction = true
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease
    if (this.groups) {
      await this.groups.commit(lease)
      return
    }
    lease.inTransaction = false
    try {
      this.sql('commit')
    } finally {
      // A COMMIT that failed may leave the transaction open, for the rollback that follows.
      this.writeTurn.stop()
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease
    if (this.groups) {
      await this.groups.rollback(lease)
      return
    }
    if (!lease.inTransaction || lease.released) {
      // A COMMIT that failed may have left the transaction open.
      if (this.config.database.inTransaction) this.sql('rollback')
      this.writeTurn.stop()
      return
    }
    lease.inTransaction = false
    this.sql('rollback')
    this.writeTurn.stop()
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

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease
    if (lease.released) return
    lease.released = true
    this.groups?.connectionReleased()
    this.mutex.unlock()
  }

  async destroy(): Promise<void> {
    // The checkpointer's connection first: the last connection to close checkpoints the WAL into
    // the database file and removes it.
    await this.checkpointer?.stop()
    try {
      this.groups?.commitNow()
    } catch {
      // Reported to the group's members.
    }
    this.connection.statements.clear()
    this.config.database.close()
    this.writeTurn.stop()
    this.writeTurn.connectionClosed()
  }

  private sql(text: string): void {
    this.connection.execute(CompiledQuery.raw(text))
  }

  /** For tests: the statement cache of the one connection. */
  get statements(): StatementCache {
    return this.connection.statements
  }
}

/**
 * One acquisition of the connection: what Kysely holds between acquiring and releasing it. It
 * refuses to run anything once released, so a caller holding it past its transaction (see
 * transaction-connection.ts) fails instead of writing outside that transaction.
 */
export class Lease implements GuardedConnection {
  readonly refusesAfterRelease = true
  inTransaction = false
  released = false

  constructor(private readonly driver: ServiceSqliteDriver) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return Promise.resolve(this.driver.run<R>(this, compiledQuery))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  streamQuery<R>(compiledQuery: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    return this.driver.stream<R>(this, compiledQuery)
  }
}

function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** The one better-sqlite3 connection, with its prepared statements. */
class ServiceSqliteConnection {
  constructor(readonly statements: StatementCache) {}

  /** True for a statement that changes nothing in the database file (a SELECT). */
  readsOnly(compiledQuery: CompiledQuery): boolean {
    return this.statements.get(compiledQuery.sql).readonly
  }

  execute<R>(compiledQuery: CompiledQuery): QueryResult<R> {
    const statement = this.statements.get(compiledQuery.sql)
    const parameters = compiledQuery.parameters as unknown[]
    if (statement.reader) return { rows: statement.all(parameters) as R[] }
    const { changes, lastInsertRowid } = statement.run(parameters)
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] }
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
