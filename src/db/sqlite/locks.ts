import path from 'node:path'
import type SQLite from 'better-sqlite3'

/**
 * The locks of the SQLite driver, all waited for in the event loop: the one connection handed to
 * one caller at a time (`Mutex`), and the write lock of a database file taken in turn by the
 * connections of this process (`FileWriteLock`, held through a connection's `WriteTurn`). They are
 * here because SQLite's own lock, made for processes, waits synchronously and would stop the loop.
 */

/** A lock handed to waiters in turn (first come, first served). */
export class Mutex {
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

/** One connection's turns at its file's write lock: from its BEGIN (or write alone) to the end of it. */
export class WriteTurn {
  /** The file's write lock among this process's connections (none for an in-memory database). */
  private readonly lock: FileWriteLock | undefined
  /** True from this connection's BEGIN (or write outside a transaction) to the end of it. */
  private writing = false
  /** How long SQLite waits for another process's write lock; the same for this process's. */
  private readonly busyTimeoutMs: number

  constructor(private readonly database: SQLite.Database) {
    this.lock = database.memory ? undefined : FileWriteLock.of(database.name)
    this.busyTimeoutMs = database.pragma('busy_timeout', { simple: true }) as number
  }

  /** Whether other connections of this process may share the file (never for one in memory). */
  get shared(): boolean {
    return this.lock !== undefined
  }

  /**
   * Waits for this process's other connections to the file to finish writing, then writes; gives
   * up as SQLite would have, after busy_timeout, with its error.
   */
  async start(): Promise<void> {
    await this.lock?.lock({
      ms: this.busyTimeoutMs,
      error: () =>
        Object.assign(new Error('database is locked (by another connection of this process)'), {
          code: 'SQLITE_BUSY',
        }),
    })
    this.writing = true
  }

  /** After a COMMIT or ROLLBACK: the process's next connection may write, once SQLite agrees. */
  stop(): void {
    if (!this.writing || this.database.inTransaction) return
    this.writing = false
    this.lock?.unlock()
  }

  /** The connection closed. */
  connectionClosed(): void {
    this.lock?.connectionClosed()
  }
}
