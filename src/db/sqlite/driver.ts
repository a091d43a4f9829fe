import path from 'node:path'
import type SQLite from 'better-sqlite3'
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type LimitNode,
  type QueryCompiler,
  type QueryResult,
  SelectQueryNode,
  SqliteDialect,
  SqliteQueryCompiler,
  ValueNode,
} from 'kysely'
import type { GuardedConnection } from '../types.js'
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
 *    upgraded to a write. Connections of the same process take the write lock in turn before that,
 *    waiting in the event loop (`FileWriteLock`), since busy_timeout's wait stops it.
 *
 * Kysely offers no hook for either (its driver's connection is private), hence a driver of our own;
 * it is otherwise Kysely's: one connection, handed to one caller at a time. It also commits in
 * groups (`groupCommit`, below).
 *
 * The dialect also writes LIMITs into the SQL text (`LiteralLimitCompiler`).
 */
export class StatementCache {
  private readonly statements = new Map<string, { statement: SQLite.Statement; used: number }>()
  /** Counts uses: an entry's `used` is the count at its last use. */
  private clock = 0
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
      // A hit only stamps the entry; the order is worked out at an eviction, which is rare (a
      // dozen statements hit per create; re-inserting into the Map on each was 1.4 % of its time).
      cached.used = ++this.clock
      return cached.statement
    }
    this.misses++
    // Prepared before anything is evicted: SQL that fails to prepare changes nothing.
    const statement = this.database.prepare(sql)
    if (this.statements.size >= this.capacity) this.evictLeastRecentlyUsed()
    this.statements.set(sql, { statement, used: ++this.clock })
    return statement
  }

  private evictLeastRecentlyUsed(): void {
    let oldest: string | undefined
    let oldestUse = Number.POSITIVE_INFINITY
    for (const [sql, entry] of this.statements) {
      if (entry.used < oldestUse) {
        oldest = sql
        oldestUse = entry.used
      }
    }
    if (oldest !== undefined) this.statements.delete(oldest)
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

export const DEFAULT_STATEMENT_CACHE_SIZE = 500

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
    return new LiteralLimitCompiler()
  }
}

/**
 * Writes an integer LIMIT into the SQL (`limit 51`) instead of binding it (`limit ?`).
 *
 * SQLite (3.46 and later) reads a bound LIMIT's value while planning, and so marks the statement to
 * be prepared again whenever that parameter is bound, even to the same value: every run of a
 * cached statement with `limit ?` re-parsed and re-planned it. Measured on the service's own
 * statements inside a transaction: the pay-period check 8.8 µs with `limit ?`, 1.1 µs with
 * `limit 1`; the overlap check 11.1 µs against 1.5 µs. A literal costs one statement text per
 * distinct limit (a page size plus one: at most a few hundred), which the statement cache holds.
 */
export class LiteralLimitCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    const limit = node.limit
    if (ValueNode.is(limit) && Number.isSafeInteger(limit.value)) {
      this.append(`limit ${limit.value as number}`)
      return
    }
    super.visitLimit(node)
  }
}

/** The savepoint each transaction of a group runs in. */
const MEMBER = 'group_commit_member'

/** Transactions sharing one real transaction: their COMMIT, and what each waits for. */
interface Group {
  members: number
  done: Promise<void>
  resolve: () => void
  reject: (error: unknown) => void
}

export interface GroupCommitStats {
  /** Real COMMITs of groups, and the transactions they committed. */
  commits: number
  transactions: number
}

export class ServiceSqliteDriver implements Driver {
  private readonly mutex = new Mutex()
  private readonly connection: ServiceSqliteConnection
  private readonly maxGroup: number
  /** The file's write lock among this process's connections (none for an in-memory database). */
  private readonly writeLock: FileWriteLock | undefined
  /** True from this connection's BEGIN (or write outside a transaction) to the end of it. */
  private writing = false
  /** How long SQLite waits for another process's write lock; the same for this process's. */
  private readonly busyTimeoutMs: number
  private checkpointer: Checkpointer | undefined
  /** The real transaction open on the connection, if any. */
  private group: Group | undefined
  private commitScheduled = false

  constructor(
    private readonly config: ServiceSqliteDialectConfig,
    readonly groupCommits: GroupCommitStats,
  ) {
    this.connection = new ServiceSqliteConnection(
      new StatementCache(config.database, config.statementCacheSize ?? DEFAULT_STATEMENT_CACHE_SIZE),
    )
    this.maxGroup = config.groupCommit?.maxTransactions ?? 1
    if (!Number.isInteger(this.maxGroup) || this.maxGroup < 1) {
      throw new Error('groupCommit.maxTransactions must be a positive integer')
    }
    this.writeLock = config.database.memory ? undefined : FileWriteLock.of(config.database.name)
    this.busyTimeoutMs = config.database.pragma('busy_timeout', { simple: true }) as number
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
      this.commitGroup()
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
    this.commitGroup()
    if (this.writeLock === undefined || this.connection.readsOnly(query))
      return this.connection.execute<R>(query)
    return this.writingAlone(query)
  }

  private async writingAlone<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    await this.startWriting()
    try {
      return this.connection.execute<R>(query)
    } finally {
      this.stopWriting()
    }
  }

  /**
   * Waits for this process's other connections to the file to finish writing, then writes; gives
   * up as SQLite would have, after busy_timeout, with its error.
   */
  private async startWriting(): Promise<void> {
    await this.writeLock?.lock({
      ms: this.busyTimeoutMs,
      error: () =>
        Object.assign(new Error('database is locked (by another connection of this process)'), {
          code: 'SQLITE_BUSY',
        }),
    })
    this.writing = true
  }

  /** After a COMMIT or ROLLBACK: the process's next connection may write, once SQLite agrees. */
  private stopWriting(): void {
    if (!this.writing || this.config.database.inTransaction) return
    this.writing = false
    this.writeLock?.unlock()
  }

  private async begin(): Promise<void> {
    await this.startWriting()
    try {
      this.sql('begin immediate')
    } catch (error) {
      this.stopWriting()
      throw error
    }
  }

  stream<R>(lease: Lease, query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (lease.released) throw new Error('the SQLite connection was used after its release')
    if (!lease.inTransaction) this.commitGroup()
    return this.connection.streamQuery<R>(query)
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease
    if (this.maxGroup === 1) {
      await this.begin()
      lease.inTransaction = true
      return
    }
    if (!this.group) {
      await this.begin()
      let resolve = () => {}
      let reject: (error: unknown) => void = () => {}
      const done = new Promise<void>((res, rej) => {
        resolve = res
        reject = rej
      })
      // Nobody may be waiting when the group fails as a whole; the members' commits report it.
      done.catch(() => {})
      this.group = { members: 0, done, resolve, reject }
    }
    this.sql(`savepoint ${MEMBER}`)
    lease.inTransaction = true
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease
    if (this.maxGroup === 1) {
      lease.inTransaction = false
      try {
        this.sql('commit')
      } finally {
        // A COMMIT that failed may leave the transaction open, for the rollback that follows.
        this.stopWriting()
      }
      return
    }
    const group = this.group
    if (!group || !lease.inTransaction) throw new Error('no transaction to commit')
    this.sql(`release ${MEMBER}`)
    lease.inTransaction = false
    group.members++
    if (group.members >= this.maxGroup) {
      this.commitGroup()
      return
    }
    // The COMMIT waits for the event loop's next turn, so that the requests whose data has arrived
    // meanwhile run their transactions in this one (a transaction here runs without yielding to
    // other requests: its statements are synchronous). This one is answered only once that COMMIT
    // is done.
    await this.afterGroupCommit(lease, group)
  }

  /**
   * Hands the connection on (Kysely's release of this lease then changes nothing) and waits for the
   * group's COMMIT, on the event loop's next turn; fails if it fails.
   */
  private async afterGroupCommit(lease: Lease, group: Group): Promise<void> {
    lease.released = true
    this.mutex.unlock()
    this.scheduleGroupCommit()
    await group.done
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease
    // Not in a transaction any more: its group's COMMIT failed, and the group is rolled back.
    if (!lease.inTransaction || lease.released) {
      // A COMMIT that failed may have left the transaction open.
      if (this.maxGroup === 1 && this.config.database.inTransaction) this.sql('rollback')
      this.stopWriting()
      return
    }
    if (this.maxGroup === 1) {
      lease.inTransaction = false
      this.sql('rollback')
      this.stopWriting()
      return
    }
    // Only this transaction's work is undone; the group's other members keep theirs.
    const group = this.group
    this.sql(`rollback to ${MEMBER}`)
    this.sql(`release ${MEMBER}`)
    lease.inTransaction = false
    // Why it failed may rest on what the group's earlier members wrote, not committed yet (a 409
    // naming another request's session): it is answered once that is committed, and fails with it.
    if (group !== undefined && group.members > 0) await this.afterGroupCommit(lease, group)
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
    // A group left open (by a transaction rolled back alone) is committed in its turn.
    if (this.group) this.scheduleGroupCommit()
    this.mutex.unlock()
  }

  async destroy(): Promise<void> {
    // The checkpointer's connection first: the last connection to close checkpoints the WAL into
    // the database file and removes it.
    await this.checkpointer?.stop()
    try {
      this.commitGroup()
    } catch {
      // Reported to the group's members.
    }
    this.connection.statements.clear()
    this.config.database.close()
    this.stopWriting()
    this.writeLock?.connectionClosed()
  }

  /** COMMITs the open group on the event loop's next turn, after whoever holds the connection. */
  private scheduleGroupCommit(): void {
    if (this.commitScheduled) return
    this.commitScheduled = true
    setImmediate(() => {
      this.commitScheduled = false
      this.exclusive(() => {}).catch(() => {
        // Reported to the group's members, whose commits fail with it.
      })
    })
  }

  /** COMMITs the open group, if any; its members' commits resolve, or fail with the error. */
  private commitGroup(): void {
    const group = this.group
    if (!group) return
    this.group = undefined
    try {
      this.sql('commit')
    } catch (error) {
      // A failed COMMIT can leave the transaction open: end it, so the connection is clean.
      if (this.config.database.inTransaction) this.sql('rollback')
      group.reject(error)
      throw error
    } finally {
      this.stopWriting()
    }
    this.groupCommits.commits++
    this.groupCommits.transactions += group.members
    group.resolve()
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

/** A lock handed to waiters in turn (first come, first served). */
class Mutex {
  private locked = false
  /** Each waiter takes the lock and says so, or says it gave up waiting. */
  private readonly waiters: Array<() => boolean> = []

  /** Resolves once the lock is the caller's; with `timeout`, rejects with its error after its ms. */
  lock(timeout?: { ms: number; error: () => Error }): Promise<void> {
    if (!this.locked) {
      this.locked = true
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => {
      let waiting = true
      const timer =
        timeout === undefined
          ? undefined
          : setTimeout(() => {
              waiting = false
              reject(timeout.error())
            }, timeout.ms)
      this.waiters.push(() => {
        if (!waiting) return false
        clearTimeout(timer)
        resolve()
        return true
      })
    })
  }

  unlock(): void {
    while (this.waiters.length > 0) if (this.waiters.shift()?.()) return
    this.locked = false
  }
}

/**
 * The write lock of one database file among the connections of this process, taken before SQLite's
 * own. SQLite's lock is made for processes: a connection that finds it taken waits in busy_timeout,
 * synchronously, so a connection of the same process waiting there would stop the event loop, and
 * with it the COMMIT that would free the lock (a group commits on the loop's next turn): both would
 * stall for the whole timeout, then fail with SQLITE_BUSY. So the connections of one process (two
 * apps on one file, as tests run two API processes; a test's own handle beside the app's) wait for
 * one another here, in the event loop, and busy_timeout only ever waits for other processes.
 */
class FileWriteLock extends Mutex {
  private static readonly byFile = new Map<string, FileWriteLock>()
  private connections = 0

  private constructor(private readonly file: string) {
    super()
  }

  /** The lock of `file` (as better-sqlite3 was given it), shared by every connection that uses it. */
  static of(name: string): FileWriteLock {
    const file = path.resolve(name)
    let lock = FileWriteLock.byFile.get(file)
    if (!lock) {
      lock = new FileWriteLock(file)
      FileWriteLock.byFile.set(file, lock)
    }
    lock.connections++
    return lock
  }

  /** A connection closed: once none is left, the file's lock is forgotten. */
  connectionClosed(): void {
    if (--this.connections === 0) FileWriteLock.byFile.delete(this.file)
  }
}
