import type { Db, Trx } from '../../db/types.js'
import { clock, systemClock } from '../../lib/clock.js'
import { Pause } from '../../lib/pause.js'
import { Repeating } from '../../lib/repeating.js'
import { deleteEvents, lockRelayedEventsBefore } from './repository.js'

/**
 * Rows deleted per transaction: each batch is a short write (on SQLite the one write lock is held
 * for a batch, never for a whole pass), and a delivery's attempts go in the same transaction.
 */
export const RETENTION_BATCH = 300
/** The pause between two batches of a pass, so the API's writes get the database in between. */
export const RETENTION_BATCH_PAUSE_MS = 50

const DAY_MS = 86_400_000

/** EVENT_RETENTION_DAYS as the window retention keeps. */
export const retentionWindowMs = (days: number) => days * DAY_MS

/** A row's place in (created_at, id) order: where the next batch of a pass starts. */
export interface RowKey {
  created_at: number
  id: string
}

/**
 * What retention needs of the webhooks module: its service offers it (`deliveryRetention`) and
 * app.ts hands it in, since the webhooks module reads the outbox and events may not import it back.
 */
export interface DeliveryRetention {
  /**
   * Deletes, with their attempts, the finished deliveries among the next `limit` deliveries created
   * before `before` after `after`; `read` says how many it looked at, `last` the last of them.
   */
  deleteFinishedBefore(
    trx: Trx,
    before: number,
    after: RowKey | undefined,
    limit: number,
  ): Promise<{ read: number; last: RowKey | undefined; deliveries: number; attempts: number }>
  /** Those of the given events that still have a delivery. */
  eventsWithDeliveries(trx: Trx, eventIds: string[]): Promise<Set<string>>
}

export interface RetentionOptions {
  /** How old a row may grow: EVENT_RETENTION_DAYS in production, seconds in tests. */
  windowMs: number
  /** Time between passes. */
  intervalMs: number
  batchSize?: number
  pauseMs?: number
}

/** What one pass deleted, and in how many transactions. */
export interface RetentionPass {
  events: number
  deliveries: number
  attempts: number
  transactions: number
  /** The most rows (events or deliveries) one transaction deleted. */
  largestBatch: number
}

interface Logger {
  error(obj: object, msg?: string): void
}

/**
 * Deletes events and webhook deliveries (with their attempts) older than the window, so the two
 * tables stop growing with the service's age. Runs wherever the webhook worker runs (the API with
 * WORKER=inline, `cli worker`). Nothing else is ever deleted: sessions, scans, revisions, operators
 * and pay periods are records.
 *
 * What is kept past the window, and why:
 * - an event not yet relayed (`dispatched_at` null): its deliveries are still to be made;
 * - a pending delivery, and so its event: it is still to be sent (its payload is the event's), and
 *   goes at the first pass after it succeeds or fails;
 * - an event while any delivery of it is kept: a delivery never outlives its event (resend reads
 *   the payload from it). Deliveries are made after their events, so in practice an event goes
 *   with its deliveries, in the same pass.
 *
 * A pass walks each table in (created_at, id) order, a batch per short transaction with a pause
 * between; the walk moves past the rows it keeps, so they never stall it. Any number of passes may
 * run at once against one PostgreSQL database (one per worker process): each batch locks its rows
 * with SKIP LOCKED, so two passes delete disjoint rows and never wait on each other. The window is
 * at least 15 days (config.ts) so that a recover, which reaches 14 days back, never requeues a
 * delivery or relays an event that a pass is deleting.
 */
export class EventRetention {
  private readonly batchSize: number
  private readonly pauseMs: number
  /** Passes on the service's schedule, in the process clock's time. */
  private readonly loop: Repeating
  /** Between the batches of a pass: pacing for the database's sake, in real time. */
  private readonly nextBatch = new Pause(systemClock)
  private stopping = false

  constructor(
    private readonly db: Db,
    private readonly deliveries: DeliveryRetention,
    private readonly options: RetentionOptions,
    log: Logger,
  ) {
    this.batchSize = options.batchSize ?? RETENTION_BATCH
    this.pauseMs = options.pauseMs ?? RETENTION_BATCH_PAUSE_MS
    this.loop = new Repeating(
      async () => {
        await this.purge()
        return 'again'
      },
      options.intervalMs,
      (error) => log.error({ err: error }, 'retention of old events and deliveries failed'),
    )
  }

  start(): void {
    this.loop.start()
  }

  /** Ends the loop, and a pass in progress after its current batch. */
  async stop(): Promise<void> {
    this.stopping = true
    this.nextBatch.end()
    await this.loop.stop()
  }

  /** One pass: deletes every row past the window now, batch after batch. */
  async purge(): Promise<RetentionPass> {
    const before = clock.now() - this.options.windowMs
    const pass: RetentionPass = { events: 0, deliveries: 0, attempts: 0, transactions: 0, largestBatch: 0 }
    // Deliveries first: their events can then go in the same pass.
    await this.walk(pass, async (trx, after) => {
      const batch = await this.deliveries.deleteFinishedBefore(trx, before, after, this.batchSize)
      pass.deliveries += batch.deliveries
      pass.attempts += batch.attempts
      return { read: batch.read, last: batch.last, deleted: batch.deliveries }
    })
    await this.walk(pass, async (trx, after) => {
      const candidates = await lockRelayedEventsBefore(trx, before, after, this.batchSize)
      const kept = await this.deliveries.eventsWithDeliveries(
        trx,
        candidates.map((e) => e.id),
      )
      const deleted = await deleteEvents(
        trx,
        candidates.filter((e) => !kept.has(e.id)).map((e) => e.id),
      )
      pass.events += deleted
      return { read: candidates.length, last: candidates.at(-1), deleted }
    })
    return pass
  }

  /** Runs `batch` in a transaction of its own until a batch reads less than a full one. */
  private async walk(
    pass: RetentionPass,
    batch: (
      trx: Trx,
      after: RowKey | undefined,
    ) => Promise<{ read: number; last: RowKey | undefined; deleted: number }>,
  ): Promise<void> {
    let after: RowKey | undefined
    for (;;) {
      const result = await this.db.transaction().execute((trx) => batch(trx, after))
      pass.transactions += 1
      pass.largestBatch = Math.max(pass.largestBatch, result.deleted)
      if (result.read < this.batchSize || this.stopping) return
      after = result.last
      await this.nextBatch.wait(this.pauseMs)
    }
  }
}
