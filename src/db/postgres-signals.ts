import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { clock } from '../lib/clock.js'
import type { RemoteSignals, SignalLog, SignalledTable } from './commit-signals.js'

/** One NOTIFY channel per table, shared by every schema of the database (the payload says which). */
const channelOf = (table: SignalledTable) => `attendance.${table}`
/** The first reconnection of a lost LISTEN connection, then twice as long each time up to the last. */
const RECONNECT_FIRST_MS = 100
const RECONNECT_MAX_MS = 5000
/** A connection attempt that has not succeeded by then (an unreachable host) is given up and retried. */
const CONNECT_TIMEOUT_MS = 10_000

/**
 * Commit signals between processes on PostgreSQL (see commit-signals.ts): NOTIFY after a commit,
 * LISTEN on a connection of one's own.
 *
 * **Why NOTIFY after the commit, from here, and not inside the transaction.** A transaction that
 * has notified takes a lock of the whole database at commit and holds it until its commit record is
 * flushed, so that notifications queue in commit order: every transaction that notifies commits one
 * after the other, WAL flush included. With `select pg_notify(...)` in each transaction (or a
 * trigger on `events`) 8 concurrent two-row transactions committed at 520–690/s against
 * 1,570–1,640/s without, and 1,320–1,410/s with the notify sent after the commit as here
 * (docs/performance.md). Sent after the commit, the notify costs the writer nothing: it
 * is not awaited, and at most one per table is in flight per handle, the commits made meanwhile
 * sharing the next one (under load, far fewer notifies than commits). It is a statement of its own
 * with `synchronous_commit` off, as a notification needs no durable commit. The price: a process
 * that dies between its commit and its notify loses that signal, and the events wait for a poll.
 *
 * The payload is `<schema> <origin>`: a listener ignores other schemas' commits (several schemas
 * of one database, as the test suite and the benchmark use) and its own handle's, which its process
 * has signalled already.
 */
export class PostgresSignals implements RemoteSignals {
  /** Which handle sent a notification, so that it can ignore its own. */
  private readonly origin = randomBytes(8).toString('hex')
  /** Per table: a notify in flight, and whether another commit wants one after it. */
  private readonly inFlight = new Map<SignalledTable, { again: boolean }>()
  private readonly sending = new Set<Promise<void>>()
  private readonly listeners = new Set<PostgresListener>()
  private closed = false
  /** Failures are reported once per run of them: a database that is down fails every notify. */
  private failing = false

  constructor(
    private readonly url: string,
    private readonly pool: pg.Pool,
  ) {}

  announce(table: SignalledTable): void {
    if (this.closed) return
    const flight = this.inFlight.get(table)
    if (flight) {
      flight.again = true
      return
    }
    this.inFlight.set(table, { again: false })
    const sent = this.notify(table).finally(() => this.sending.delete(sent))
    this.sending.add(sent)
  }

  listen(
    tables: SignalledTable[],
    handlers: { onSignal(table: SignalledTable): void; onListening(): void },
    log: SignalLog,
  ): PostgresListener {
    const listener = new PostgresListener(this.url, tables, this.origin, handlers, log, () =>
      this.listeners.delete(listener),
    )
    this.listeners.add(listener)
    listener.start()
    return listener
  }

  /** Lets the notifies in flight finish (the pool is closed next) and stops the listeners. */
  async close(): Promise<void> {
    this.closed = true
    await Promise.all([...this.sending, ...[...this.listeners].map((l) => l.close())])
  }

  private async notify(table: SignalledTable): Promise<void> {
    const statement =
      `set local synchronous_commit = off; ` +
      `select pg_notify(${pg.escapeLiteral(channelOf(table))}, ` +
      `coalesce(current_schema(), '') || ' ' || ${pg.escapeLiteral(this.origin)})`
    for (;;) {
      try {
        // No parameters: the simple query protocol, which runs both statements as one transaction.
        await this.pool.query(statement)
        this.failing = false
      } catch (error) {
        if (!this.failing) process.emitWarning(`commit signal not sent (NOTIFY failed): ${String(error)}`)
        this.failing = true
      }
      const flight = this.inFlight.get(table)
      if (!flight?.again || this.closed) break
      flight.again = false
    }
    this.inFlight.delete(table)
  }
}

/**
 * A connection of its own that LISTENs, for one watch: a pooled connection cannot, as notifications
 * arrive on the connection that listens, between queries. When it drops it is opened again, after
 * 100 ms, then twice as long each time up to 5 s; meanwhile `listening` is false, so the watcher
 * polls at its short interval.
 */
class PostgresListener {
  private client: pg.Client | undefined
  /** The connection being opened, if any: a close ends it rather than waiting for it. */
  private connecting: pg.Client | undefined
  private connected = false
  private closed = false
  private delayMs = RECONNECT_FIRST_MS
  private retry: { cancel: () => void; resolve: () => void } | undefined
  private running: Promise<void> | undefined

  constructor(
    private readonly url: string,
    private readonly tables: SignalledTable[],
    private readonly origin: string,
    private readonly handlers: { onSignal(table: SignalledTable): void; onListening(): void },
    private readonly log: SignalLog,
    private readonly onClose: () => void,
  ) {}

  get listening(): boolean {
    return this.connected
  }

  start(): void {
    this.running = this.connect(false)
  }

  async close(): Promise<void> {
    this.closed = true
    this.onClose()
    if (this.retry) {
      this.retry.cancel()
      this.retry.resolve()
    }
    await this.connecting?.end().catch(() => undefined)
    await this.running
    this.connected = false
    await this.client?.end().catch(() => undefined)
  }

  /** Connects and listens, retrying with backoff until it does or the listener is closed. */
  private async connect(afterLoss: boolean): Promise<void> {
    let failures = 0
    while (!this.closed) {
      const client = new pg.Client({
        connectionString: this.url,
        keepAlive: true,
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      })
      this.connecting = client
      // A connection error after the connect is reported here, then 'end'; without a handler it
      // would crash the process.
      let lastError: unknown
      client.on('error', (error) => {
        lastError = error
      })
      try {
        await client.connect()
        const { rows } = await client.query<{ schema: string | null }>('select current_schema() as schema')
        const schema = rows[0]?.schema ?? ''
        client.on('notification', ({ channel, payload }) => this.received(schema, channel, payload))
        await client.query(this.tables.map((t) => `listen ${pg.escapeIdentifier(channelOf(t))}`).join('; '))
      } catch (error) {
        this.connecting = undefined
        await client.end().catch(() => undefined)
        if (this.closed) return
        if (failures++ === 0)
          this.log.error({ err: error }, 'commit signals: cannot LISTEN, polling meanwhile')
        await this.wait()
        continue
      }
      this.connecting = undefined
      if (this.closed) {
        await client.end().catch(() => undefined)
        return
      }
      this.client = client
      this.connected = true
      this.delayMs = RECONNECT_FIRST_MS
      client.once('end', () => this.lost(client, lastError))
      if (afterLoss || failures > 0) this.log.info({}, 'commit signals: listening again')
      this.handlers.onListening()
      return
    }
  }

  private lost(client: pg.Client, error: unknown): void {
    if (this.client !== client || this.closed) return
    this.client = undefined
    this.connected = false
    this.log.error({ err: error }, 'commit signals: LISTEN connection lost, polling until it is back')
    this.running = this.connect(true)
  }

  private received(schema: string, channel: string, payload: string | undefined): void {
    const table = this.tables.find((t) => channelOf(t) === channel)
    const at = payload?.lastIndexOf(' ') ?? -1
    if (!table || payload === undefined || at < 0 || payload.slice(0, at) !== schema) return
    if (payload.slice(at + 1) === this.origin) return
    this.handlers.onSignal(table)
  }

  /**
   * The backoff before the next attempt, on the process's clock (a retry schedule, as the webhook
   * worker's: a test steps it); a close ends it at once.
   */
  private wait(): Promise<void> {
    const ms = this.delayMs
    this.delayMs = Math.min(RECONNECT_MAX_MS, this.delayMs * 2)
    return new Promise((resolve) => {
      this.retry = {
        cancel: clock.schedule(() => {
          this.retry = undefined
          resolve()
        }, ms),
        resolve: () => {
          this.retry = undefined
          resolve()
        },
      }
    })
  }
}
