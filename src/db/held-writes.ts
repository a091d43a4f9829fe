import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'
import { connectionOf, executeInTransaction } from './transaction-connection.js'
import type { Trx } from './types.js'

/**
 * Held writes: on PostgreSQL, INSERTs that follow each other in a transaction sent as one statement.
 *
 * Each statement on PostgreSQL is a round trip unless it is sent behind another without waiting for
 * that one's answer (`pg`'s `pipeline`, on for the pool in connection.ts), and on a loaded machine a
 * round trip costs far more than the statement (docs/performance.md). A create writes its row, its revision and its events one after the other,
 * reading nothing between them. A transaction that calls `holdWrites` keeps such INSERTs (those of
 * `compiledInsert` and `compiledInsertRows`: whole rows, nothing returned) on its connection instead
 * of sending them, and sends them with its next statement, as data-modifying CTEs in front of it:
 * `with "held_0" as (insert …), "held_1" as (insert …) <next statement>`. PostgreSQL runs every
 * data-modifying CTE exactly once and to completion, whatever the statement after them reads, and
 * checks foreign keys when the whole statement ends.
 *
 * What stays true:
 * - Order: the held writes run before or with the next statement, never after it. A statement that
 *   cannot carry them (`commit`, `savepoint`, `set`, …) is preceded by one statement of the held
 *   writes alone. A `rollback` of the whole transaction drops them unsent, as it would undo them.
 * - Visibility: the statement that carries them does not see their rows (one statement, one
 *   snapshot), so a statement that names a held table (as a word of its SQL) never carries them; it
 *   is preceded by them instead.
 * - Failure: a held write that fails, fails the statement that carries it, inside the transaction,
 *   which then rolls back. Its error is raised there, not where the write was asked for, so only
 *   writes whose failure means nothing more than "roll back" (no unique index that a caller turns
 *   into an API error) may be held: the caller of `holdWrites` vouches for that.
 *
 * Writes still held at the COMMIT go as one statement with the COMMIT sent behind it (were they
 * refused, PostgreSQL answers the COMMIT with ROLLBACK). Every transaction's plain BEGIN is held too,
 * until its first statement: sent behind nothing, but with that statement behind it when it is a
 * read (if the BEGIN failed, a read run outside the transaction would change nothing), alone before
 * anything else; a transaction that sent no statement sends no BEGIN, COMMIT or ROLLBACK.
 *
 * A held write's result is not known when it is asked for: it reports no rows and no count.
 * SQLite has no round trips to save (a statement is a function call), so there `holdWrites` does
 * nothing and every write runs when asked.
 *
 * What it earns, measured with every statement prepared (postgres-prepared.ts), `bench:http` on
 * PostgreSQL, 2026-11-28: with held writes 1.52–1.57 ms of the server's CPU a create and creates at
 * 0.151–0.157 of the bare stack; the same commit without them 1.94 ms and 0.141 (one run;
 * docs/performance-log.md, "PostgreSQL: a create's statements").
 */

/** A transaction's connection on PostgreSQL, able to hold writes, and its BEGIN. */
class HoldingConnection implements DatabaseConnection {
  /** True from `holdWrites` until the transaction ends. */
  holding = false
  /** True from the transaction's start until its first statement, which its BEGIN goes with. */
  beginHeld = false
  private held: CompiledQuery[] = []

  constructor(readonly inner: DatabaseConnection) {}

  hold(query: CompiledQuery): void {
    this.held.push(query)
  }

  get holdsWrites(): boolean {
    return this.held.length > 0
  }

  /** The transaction ended: rolled back (the held writes are dropped unsent) or released. */
  reset(): void {
    this.holding = false
    this.beginHeld = false
    this.held = []
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const held = this.held
    this.held = []
    const carried = held.length > 0 ? carry(held, query) : query
    const statements = carried ? [carried] : [...alone(held), query]
    if (!this.beginHeld) return this.inOrder(statements)
    this.beginHeld = false
    // The BEGIN goes with a transaction's reads, never with a write: were it refused, what follows
    // it would run outside the transaction, and a read alone there changes nothing.
    if (statements.every(isRead)) return this.inOrder([BEGIN, ...statements])
    return this.inOrder([BEGIN]).then(() => this.inOrder(statements))
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    const held = this.held
    this.held = []
    await this.inOrder([...(this.beginHeld ? [BEGIN] : []), ...alone(held)])
    this.beginHeld = false
    yield* this.inner.streamQuery<R>(query, chunkSize)
  }

  /**
   * The statements sent one behind the other, each answered in turn; the last one's answer. With the
   * pool's `pipeline` (connection.ts), `pg` writes them all without waiting for an answer between
   * them: one round trip. A statement that fails is the error, wherever it is: PostgreSQL answers
   * every statement after it in the transaction with an error too, and a COMMIT with ROLLBACK.
   */
  private async inOrder<R>(statements: CompiledQuery[]): Promise<QueryResult<R>> {
    if (statements.length === 1) return this.inner.executeQuery(statements[0] as CompiledQuery)
    const answers = await Promise.allSettled(statements.map((s) => this.inner.executeQuery<R>(s)))
    let last: QueryResult<R> = { rows: [] }
    for (const answer of answers) {
      if (answer.status === 'rejected') throw answer.reason
      last = answer.value
    }
    return last
  }
}

const BEGIN = CompiledQuery.raw('begin')
/** A statement that only reads (a SELECT that is not a CTE's carrier). */
const READ = /^\s*select\b/i

function isRead(query: CompiledQuery): boolean {
  return READ.test(query.sql)
}

/** The held writes as one statement, all but the last as CTEs in front of the last; each on its own past PostgreSQL's limit of parameters. */
function alone(held: CompiledQuery[]): CompiledQuery[] {
  const last = held.at(-1)
  if (last === undefined) return []
  const statement = withCtes(held.slice(0, -1), last)
  return statement ? [statement] : held
}

/** PostgreSQL's limit of parameters in one statement. */
const MAX_PARAMETERS = 65_535
/** A statement that may have CTEs in front of it; `with recursive` keeps its own. */
const CARRIER = /^\s*(select|insert|update|delete|with(?!\s+recursive\b))\b/i
const LEADING_WITH = /^\s*with\s+/i
const INSERT_INTO = /^\s*insert\s+into\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/i

/** `query` with the held writes as CTEs in front of it, or undefined when it cannot carry them. */
function carry(held: CompiledQuery[], query: CompiledQuery): CompiledQuery | undefined {
  if (!CARRIER.test(query.sql)) return undefined
  if (held.some((write) => namesTable(query.sql, heldTable(write)))) return undefined
  return withCtes(held, query)
}

/** `main` with `ctes` in front of it, or undefined when together they take too many parameters. */
function withCtes(ctes: CompiledQuery[], main: CompiledQuery): CompiledQuery | undefined {
  if (ctes.length === 0) return main
  const parameters: unknown[] = []
  const definitions: string[] = []
  for (const [i, write] of ctes.entries()) {
    definitions.push(`"held_${i}" as (${renumbered(write.sql, parameters.length)})`)
    parameters.push(...write.parameters)
  }
  if (parameters.length + main.parameters.length > MAX_PARAMETERS) return undefined
  const mainSql = renumbered(main.sql, parameters.length)
  parameters.push(...main.parameters)
  const head = `with ${definitions.join(', ')}`
  const sql = LEADING_WITH.test(mainSql)
    ? `${head}, ${mainSql.replace(LEADING_WITH, '')}`
    : `${head} ${mainSql}`
  return { ...CompiledQuery.raw(sql, parameters), query: main.query }
}

function heldTable(write: CompiledQuery): string {
  const table = INSERT_INTO.exec(write.sql)?.[1]
  if (table === undefined) throw new Error(`held write: not an INSERT: ${write.sql.slice(0, 80)}`)
  return table
}

/** Whether `sql` names `table` as a word (quoted or not): it might read the table. */
function namesTable(sql: string, table: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9_])${table}($|[^A-Za-z0-9_])`).test(sql)
}

/** Quoted strings and identifiers, where a `$n` is text rather than a parameter. */
const QUOTED = /('(?:[^']|'')*'|"(?:[^"]|"")*")/

/** `sql` with each parameter `$n` numbered `$(n + offset)`, quoted text left as it is. */
function renumbered(sql: string, offset: number): string {
  if (offset === 0) return sql
  return sql
    .split(QUOTED)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/\$(\d+)/g, (_, n) => `$${Number(n) + offset}`)))
    .join('')
}

/**
 * From now until `trx` ends, its whole-row INSERTs (`compiledInsert`, `compiledInsertRows`) are held
 * and sent with its next statement (PostgreSQL; nothing on SQLite). The caller vouches that none of
 * them can fail for a reason it would report other than by rolling back (see above).
 */
export async function holdWrites(trx: Trx): Promise<void> {
  const connection = await connectionOf(trx)
  if (connection instanceof HoldingConnection) connection.holding = true
}

/** Runs a whole-row INSERT in `trx`, or holds it when `trx` holds writes. */
export async function writeOrHold<R>(trx: Trx, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  const connection = await connectionOf(trx)
  if (connection instanceof HoldingConnection && connection.holding) {
    connection.hold(query)
    return { rows: [] }
  }
  return executeInTransaction(trx, query)
}

/** `dialect` (PostgreSQL's) with connections that can hold writes. */
export function holdingWritesDialect(dialect: Dialect): Dialect {
  return {
    createDriver: () => new HoldingDriver(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (kysely) => dialect.createIntrospector(kysely),
  }
}

/** The dialect's driver, handing out its connections wrapped; each transaction's end clears them. */
class HoldingDriver implements Driver {
  private readonly wrapped = new WeakMap<DatabaseConnection, HoldingConnection>()
  // Savepoints are statements on the connection, which sends held writes before them.
  readonly savepoint: Driver['savepoint']
  readonly rollbackToSavepoint: Driver['rollbackToSavepoint']
  readonly releaseSavepoint: Driver['releaseSavepoint']

  constructor(private readonly driver: Driver) {
    this.savepoint = driver.savepoint?.bind(driver)
    this.rollbackToSavepoint = driver.rollbackToSavepoint?.bind(driver)
    this.releaseSavepoint = driver.releaseSavepoint?.bind(driver)
  }

  init(): Promise<void> {
    return this.driver.init()
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await this.driver.acquireConnection()
    let connection = this.wrapped.get(inner)
    if (!connection) {
      connection = new HoldingConnection(inner)
      this.wrapped.set(inner, connection)
    }
    return connection
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const held = holding(connection)
    held.reset()
    // A plain BEGIN waits for the transaction's first statement and goes with it (see executeQuery).
    if (settings.isolationLevel === undefined && settings.accessMode === undefined) held.beginHeld = true
    else await this.driver.beginTransaction(connection, settings)
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const held = holding(connection)
    // Nothing sent and nothing to send: nothing to commit. Else held writes go with the COMMIT.
    if (held.beginHeld && !held.holdsWrites) return held.reset()
    try {
      await this.driver.commitTransaction(connection)
    } finally {
      held.reset()
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const held = holding(connection)
    const begun = !held.beginHeld
    held.reset()
    if (begun) await this.driver.rollbackTransaction(connection)
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    const held = holding(connection)
    held.reset()
    // The driver knows its own connection only (PostgreSQL's releases it by a private method).
    return this.driver.releaseConnection(held.inner)
  }

  destroy(): Promise<void> {
    return this.driver.destroy()
  }
}

function holding(connection: DatabaseConnection): HoldingConnection {
  if (!(connection instanceof HoldingConnection))
    throw new Error('held writes: a connection of another driver')
  return connection
}
