import {
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  type QueryCompiler,
  type TransactionSettings,
} from 'kysely'
import type { Database } from './schema.js'
import { connectionOf } from './transaction-connection.js'
import type { Db, Trx } from './types.js'

/**
 * Commit signals: "rows of table T were committed", a hint to whoever waits for such rows (the
 * webhook worker waits for new events and for new due deliveries) to look now instead of at its next
 * poll.
 *
 * A writer calls `signalOnCommit(trx, table)` inside its transaction. The signal goes out once that
 * transaction has committed, never before (a reader woken earlier would find nothing and go back to
 * sleep), never for one rolled back, and once per transaction however many rows it wrote.
 * - In the process: the watches of the same database handle (`watchCommits`) are called right after
 *   the commit.
 * - Across processes, on PostgreSQL only: the commit is also announced with NOTIFY to the watches of
 *   other handles and processes, each of which LISTENs on a connection of its own
 *   (postgres-signals.ts). SQLite has no channel between processes: there a watch hears its own
 *   handle's commits only (`acrossProcesses` stays false) and must keep polling for the others'.
 *
 * Signals are hints. One may be lost (a process that dies between its commit and its NOTIFY, a LISTEN
 * connection that is down) or spurious (a savepoint rolled back after the signal was asked for): the
 * database stays the source of truth and a watcher keeps polling, only less often.
 */
export type SignalledTable = keyof Database

/**
 * What each connection's open transaction asked to signal. Kept beside the connection rather than in
 * the transaction because the driver, which sees the commit, sees only the connection.
 */
const pending = new WeakMap<DatabaseConnection, Set<SignalledTable>>()

/** Signals `table` once the transaction `trx` commits (once however often it is called). */
export async function signalOnCommit(trx: Trx, table: SignalledTable): Promise<void> {
  // No statement: the transaction's own connection is where the driver will look at commit.
  const connection = await connectionOf(trx)
  const tables = pending.get(connection)
  if (tables) tables.add(table)
  else pending.set(connection, new Set([table]))
}

export interface SignalLog {
  info(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

/** What a watch is called on: a function per table it waits for. */
export type CommitHandlers = Partial<Record<SignalledTable, () => void>>

export interface CommitWatch {
  /**
   * True while commits made through other handles and processes wake this watch too (PostgreSQL,
   * while its LISTEN connection is up); false on SQLite and while that connection is down.
   */
  readonly acrossProcesses: boolean
  close(): Promise<void>
}

/** The channel between processes: NOTIFY after a commit, LISTEN for the others'. */
export interface RemoteSignals {
  announce(table: SignalledTable): void
  /** Calls `onSignal` for the others' commits, and `onListening` each time listening (re)starts. */
  listen(
    tables: SignalledTable[],
    handlers: { onSignal(table: SignalledTable): void; onListening(): void },
    log: SignalLog,
  ): { readonly listening: boolean; close(): Promise<void> }
  close(): Promise<void>
}

interface Watcher {
  handlers: CommitHandlers
  log: SignalLog
}

/** The signals of one database handle. */
class CommitSignals {
  private readonly watchers = new Set<Watcher>()

  constructor(private readonly remote: RemoteSignals | undefined) {}

  /** After a commit (called by the driver): this handle's watches at once, the others by NOTIFY. */
  committed(tables: Set<SignalledTable>): void {
    for (const table of tables) {
      for (const watcher of this.watchers) call(watcher, table)
      this.remote?.announce(table)
    }
  }

  watch(handlers: CommitHandlers, log: SignalLog): CommitWatch {
    const watcher = { handlers, log }
    this.watchers.add(watcher)
    const tables = Object.keys(handlers) as SignalledTable[]
    const remote = this.remote?.listen(
      tables,
      {
        onSignal: (table) => call(watcher, table),
        // Commits made while nobody listened were not heard: look once for all of them.
        onListening: () => {
          for (const table of tables) call(watcher, table)
        },
      },
      log,
    )
    return {
      get acrossProcesses() {
        return remote?.listening ?? false
      },
      close: async () => {
        this.watchers.delete(watcher)
        await remote?.close()
      },
    }
  }

  close(): Promise<void> {
    return this.remote?.close() ?? Promise.resolve()
  }
}

/** A handler that throws must not turn a committed transaction into a failed one. */
function call(watcher: Watcher, table: SignalledTable): void {
  try {
    watcher.handlers[table]?.()
  } catch (error) {
    watcher.log.error({ err: error, table }, 'commit signal handler failed')
  }
}

const signalsByDb = new WeakMap<Db, CommitSignals>()

/**
 * A Kysely instance whose commits signal what their transactions asked for, to this process's
 * watches and, with `remote`, to other processes'.
 */
export function signallingKysely(dialect: Dialect, remote?: RemoteSignals): Db {
  const signals = new CommitSignals(remote)
  const db = new Kysely<Database>({
    dialect: {
      createDriver: () => new SignallingDriver(dialect.createDriver(), signals),
      createQueryCompiler: () => dialect.createQueryCompiler(),
      createAdapter: () => dialect.createAdapter(),
      createIntrospector: (kysely) => dialect.createIntrospector(kysely),
    },
  })
  signalsByDb.set(db, signals)
  return db
}

/**
 * Calls `handlers[table]` after each commit that signalled `table`: at once for commits through
 * `db`, and on PostgreSQL for other handles' and processes' too while `acrossProcesses`. A handle not
 * opened with signals (none in the service) gives a watch that hears nothing.
 */
export function watchCommits(db: Db, handlers: CommitHandlers, log: SignalLog): CommitWatch {
  return signalsByDb.get(db)?.watch(handlers, log) ?? { acrossProcesses: false, close: async () => {} }
}

/** The dialect's own driver, plus: after a commit, the signals its transaction asked for. */
class SignallingDriver implements Driver {
  constructor(
    private readonly driver: Driver,
    private readonly signals: CommitSignals,
  ) {}

  init(): Promise<void> {
    return this.driver.init()
  }

  acquireConnection(): Promise<DatabaseConnection> {
    return this.driver.acquireConnection()
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    pending.delete(connection)
    return this.driver.beginTransaction(connection, settings)
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const tables = pending.get(connection)
    pending.delete(connection)
    await this.driver.commitTransaction(connection)
    if (tables) this.signals.committed(tables)
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    pending.delete(connection)
    return this.driver.rollbackTransaction(connection)
  }

  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.supported('savepoint').call(this.driver, connection, name, compile)
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.supported('rollbackToSavepoint').call(this.driver, connection, name, compile)
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.supported('releaseSavepoint').call(this.driver, connection, name, compile)
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    pending.delete(connection)
    return this.driver.releaseConnection(connection)
  }

  async destroy(): Promise<void> {
    await this.signals.close()
    await this.driver.destroy()
  }

  private supported<M extends 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint'>(
    method: M,
  ): NonNullable<Driver[M]> {
    const fn = this.driver[method]
    if (!fn) throw new Error(`The \`${method}\` method is not supported by this driver`)
    return fn as NonNullable<Driver[M]>
  }
}
