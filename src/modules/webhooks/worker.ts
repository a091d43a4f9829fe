import { setTimeout as sleep } from 'node:timers/promises'
import {
  webhookDeliveries,
  webhookDeliveryDuration,
  webhookEndpointsAutoDisabled,
} from '../../core/metrics.js'
import { type CommitWatch, watchCommits } from '../../db/commit-signals.js'
import { openConnections, POOL_KEPT } from '../../db/connection.js'
import type { Db } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { groupBy } from '../../lib/group.js'
import { Pause } from '../../lib/pause.js'
import { eventPayloads } from '../events/service.js'
import { BatchedWrites } from './batched-writes.js'
import {
  claimDueDeliveries,
  type DeliveryRow,
  releaseDeliveries,
  updateDeliveryRow,
} from './delivery-repository.js'
import { DEFAULT_MAX_PER_ENDPOINT, EndpointWindows } from './endpoint-windows.js'
import { DISPATCH_BATCH, dispatchEvents } from './outbox-relay.js'
import { type FinishedAttempt, recordFailure, recordSuccesses } from './outcomes.js'
import { isSuccessStatus } from './policy.js'
import { type EndpointRow, endpointsByIds } from './repository.js'
import { DeliverySender } from './sender.js'

export interface WorkerOptions {
  timeoutMs: number
  backoffScale: number
  disableThreshold: number
  allowPrivateUrls: boolean
  /**
   * Idle wait between polls when there was nothing to do. New events and new deliveries wake the
   * worker sooner (see `start`); the polls find what no signal announces.
   */
  pollMs?: number
  /** Deliveries in hand at once (being attempted, or claimed and waiting for their endpoint). */
  maxInFlight?: number
  /** Attempts to one endpoint in flight at once, at most (an endpoint that answers well gets there). */
  maxPerEndpoint?: number
}

interface Logger {
  info(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

/** The outcomes counted at every delivery, bound to their label once. */
const succeeded = webhookDeliveries.labels('succeeded')
const stopped = webhookDeliveries.labels('stopped')

/** Pause between dispatch passes while events keep coming. */
const BUSY_DISPATCH_MS = 25
/**
 * The dispatcher's idle poll while PostgreSQL tells this worker of every commit that recorded events
 * (its LISTEN connection is up): only a safety net then, for a signal that was lost (a process that
 * died between its commit and its NOTIFY, a NOTIFY that failed). A second bounds how late such events
 * are, at a tenth of the idle reads of the 100 ms poll. Without that connection (SQLite, where a
 * `cli worker` beside the API hears nothing of its commits, or PostgreSQL while it reconnects) the
 * dispatcher polls every `pollMs`.
 */
const LISTENING_DISPATCH_POLL_MS = 1000
/**
 * Enough attempts in flight that the round trips to the database (claims, records) overlap with
 * the receivers' answers; a claim is made whenever half of them have finished.
 */
export const DEFAULT_MAX_IN_FLIGHT = 128

interface Job {
  delivery: DeliveryRow
  endpoint: EndpointRow | undefined
  payload: string | undefined
}

/** One endpoint's deliveries in this worker's hands. */
interface Lane {
  active: number
  /** Claimed, waiting for the endpoint's window to open (it shrank after they were claimed). */
  waiting: Job[]
}

/** What the loop does after a fill: claim again at once, wait for room, or poll later. */
type NextStep = 'again' | 'room' | 'idle'

/**
 * Turns new events into deliveries and sends due deliveries, until stopped. Runs inside the API
 * process (WORKER=inline) or alone (`cli worker`); any number may run against one PostgreSQL
 * database. Delivery is at-least-once: state lives only in the database, claims are leases, and an
 * attempt is recorded after it is sent, so a crash between the two re-sends rather than loses.
 *
 * A pipeline, not rounds: up to `maxInFlight` deliveries are in hand, and more are claimed as soon
 * as half have finished, so one slow receiver never holds back the others.
 *
 * Fair between endpoints: each endpoint has a window, the attempts it may have in flight, adapted
 * to how it answers (`EndpointWindows`); a claim takes of each endpoint only what its window can
 * start now, so failing, hanging or throttling receivers never hold back the ones that answer.
 */
export class WebhookWorker {
  private readonly sender: DeliverySender
  private readonly maxInFlight: number
  /**
   * A claimed delivery may wait for its endpoint's slots (at most `maxPerEndpoint` ahead of it,
   * each done within one timeout), then takes one timeout itself; the lease covers both plus time
   * to record, so a live worker's delivery is never claimed by another.
   */
  private readonly leaseMs: number
  private readonly pollMs: number
  private readonly lanes = new Map<string, Lane>()
  private readonly windows: EndpointWindows
  /** Deliveries in hand: active plus waiting, over every lane. */
  private held = 0
  private readonly attempts = new Set<Promise<void>>()
  private running = false
  private loops: Promise<void> | undefined
  /** Where each loop waits when it has nothing to do; a commit signal ends the wait. */
  private readonly dispatchPause = new Pause()
  private readonly sendPause = new Pause()
  private watch: CommitWatch | undefined
  /** Whether the send loop waits for room (then a finished attempt may end its wait). */
  private waitingForRoom = false
  private stopped: Promise<void> | undefined
  /**
   * When each loop last finished a pass, by the process clock: the worker's liveness (`GET /healthz`
   * on the metrics listener of `cli worker`, http/metrics.ts). Each waits at most a second between
   * passes, so a loop that has not finished one for long is stuck in a call that does not return.
   */
  readonly lastPassAt = { dispatch: 0, send: 0 }
  private readonly successes = new BatchedWrites<FinishedAttempt>((batch) =>
    this.db.transaction().execute((trx) => recordSuccesses(trx, batch)),
  )

  constructor(
    private readonly db: Db,
    private readonly options: WorkerOptions,
    private readonly log: Logger,
  ) {
    this.sender = new DeliverySender(options)
    this.maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT
    this.windows = new EndpointWindows(options.maxPerEndpoint ?? DEFAULT_MAX_PER_ENDPOINT, (id) => {
      const lane = this.lanes.get(id)
      return lane ? lane.active + lane.waiting.length : 0
    })
    this.leaseMs = 2 * options.timeoutMs + 30_000
    this.pollMs = options.pollMs ?? 100
  }

  /**
   * Starts both loops, each woken by the commits it waits for (db/commit-signals.ts): the
   * dispatcher by transactions that recorded events, the sender by transactions that inserted
   * deliveries (this worker's dispatcher's, another worker's, a send-test's or a recover's). Through
   * this `db` at once; on PostgreSQL from other handles and processes too, by LISTEN.
   */
  start(): void {
    if (this.running) return
    this.running = true
    this.lastPassAt.dispatch = this.lastPassAt.send = clock.now()
    // The loops use several connections at once (a dispatch, a claim and its two look-ups, a
    // record): opened now rather than by the first burst of events, which would wait for them.
    openConnections(this.db, POOL_KEPT).catch((error: unknown) =>
      this.log.error({ err: error }, 'could not open database connections'),
    )
    this.watch = watchCommits(
      this.db,
      { events: () => this.dispatchPause.end(), webhook_deliveries: () => this.sendPause.end() },
      this.log,
    )
    this.loops = Promise.all([this.dispatchLoop(), this.sendLoop()]).then(() => this.drain())
  }

  /**
   * Stops claiming, waits for the attempts in flight (so none is cut off half-recorded) and gives
   * back the deliveries it had claimed but not started. Idempotent: a second call waits for the
   * first (closing the HTTP agent twice would throw).
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.running = false
      this.dispatchPause.end()
      this.sendPause.end()
      await Promise.all([this.loops, this.watch?.close()])
      await this.sender.close()
    })()
    return this.stopped
  }

  /**
   * The outbox relay, in a loop of its own so that its transactions never hold up the claims (on
   * PostgreSQL the two run on separate connections at once). The deliveries it inserts wake the
   * send loops by their commit.
   */
  private async dispatchLoop(): Promise<void> {
    while (this.running) {
      let dispatched = 0
      try {
        dispatched = await dispatchEvents(this.db)
      } catch (error) {
        this.log.error({ err: error }, 'webhook dispatch failed')
      }
      this.lastPassAt.dispatch = clock.now()
      if (dispatched >= DISPATCH_BATCH || !this.running) continue
      // While events keep coming, come back soon (a full batch: at once), but not in a tight loop:
      // each pass is a write transaction, which on SQLite holds the one connection the API's
      // requests need too. So the commits that signal meanwhile do not cut this pause short (the
      // Pause keeps their wake-up for the idle wait). Otherwise wait for a signal or the poll.
      if (dispatched > 0) await sleep(BUSY_DISPATCH_MS)
      else
        await this.dispatchPause.wait(
          this.watch?.acrossProcesses ? Math.max(this.pollMs, LISTENING_DISPATCH_POLL_MS) : this.pollMs,
        )
    }
  }

  private async sendLoop(): Promise<void> {
    while (this.running) {
      let next: NextStep = 'idle'
      try {
        next = await this.fill()
      } catch (error) {
        this.log.error({ err: error }, 'webhook claim failed')
      }
      this.lastPassAt.send = clock.now()
      if (next === 'again' || !this.running) continue
      this.waitingForRoom = next === 'room'
      await this.sendPause.wait(this.pollMs)
      this.waitingForRoom = false
    }
  }

  /** Claims as many due deliveries as there is room for, and starts them. */
  private async fill(): Promise<NextStep> {
    const room = this.maxInFlight - this.held
    if (room <= 0) return 'room'
    const claimed = await claimDueDeliveries(this.db, {
      now: clock.now(),
      limit: room,
      perEndpoint: this.windows.initial,
      ...this.windows.claimLimits(this.lanes.keys()),
      leaseMs: this.leaseMs,
    })
    if (claimed.length > 0) {
      const [endpointRows, payloads] = await Promise.all([
        endpointsByIds(this.db, [...new Set(claimed.map((d) => d.endpoint_id))]),
        eventPayloads(
          this.db,
          claimed.map((d) => d.event_id),
        ),
      ])
      const endpoints = new Map(endpointRows.map((e) => [e.id, e]))
      for (const delivery of claimed) {
        this.take({
          delivery,
          endpoint: endpoints.get(delivery.endpoint_id),
          payload: payloads.get(delivery.event_id),
        })
      }
    }
    if (claimed.length === room) return 'room'
    // Fewer than there was room for: the due ones are all claimed, or some endpoints' caps cut the
    // claim short and the next one (which skips them) may find others.
    if (claimed.length > 0) return 'again'
    return [...this.lanes.keys()].some((id) => this.windows.free(id) <= 0) ? 'room' : 'idle'
  }

  private take(job: Job) {
    const id = job.delivery.endpoint_id
    let lane = this.lanes.get(id)
    if (!lane) {
      lane = { active: 0, waiting: [] }
      this.lanes.set(id, lane)
    }
    lane.waiting.push(job)
    this.held += 1
    this.startWaiting(id, lane)
  }

  private startWaiting(endpointId: string, lane: Lane) {
    while (this.running && lane.active < this.windows.of(endpointId) && lane.waiting.length > 0) {
      const job = lane.waiting.shift() as Job
      lane.active += 1
      const attempt = this.deliver(job)
        .catch((error: unknown) =>
          // Its lease runs out and the delivery is attempted again: at-least-once holds.
          this.log.error({ err: error, delivery_id: job.delivery.id }, 'webhook attempt not recorded'),
        )
        .finally(() => {
          this.attempts.delete(attempt)
          const wasFull = this.windows.free(endpointId) <= 0
          lane.active -= 1
          this.held -= 1
          if (lane.active === 0 && lane.waiting.length === 0) this.lanes.delete(endpointId)
          else this.startWaiting(endpointId, lane)
          if (this.waitingForRoom && (wasFull || this.held <= this.maxInFlight / 2)) this.sendPause.end()
        })
      this.attempts.add(attempt)
    }
  }

  /** After the loop ends: lets the attempts in flight finish, then releases what never started. */
  private async drain() {
    while (this.attempts.size > 0) await Promise.all(this.attempts)
    const unsent = [...this.lanes.values()].flatMap((lane) => lane.waiting.map((job) => job.delivery))
    this.lanes.clear()
    this.held = 0
    const byLease = groupBy(unsent, (delivery) => delivery.locked_until ?? 0)
    for (const [leasedUntil, deliveries] of byLease) {
      await releaseDeliveries(
        this.db,
        deliveries.map((d) => d.id),
        leasedUntil,
      ).catch((error: unknown) => this.log.error({ err: error }, 'claimed deliveries not released'))
    }
  }

  private async deliver({ delivery, endpoint, payload }: Job) {
    if (endpoint?.status !== 'enabled' || payload === undefined) {
      await this.db.transaction().execute((trx) =>
        updateDeliveryRow(trx, delivery.id, {
          status: 'failed',
          next_attempt_at: null,
          locked_until: null,
          updated_at: clock.now(),
        }),
      )
      stopped.inc()
      return
    }
    const outcome = await this.sender.send(delivery, endpoint, payload)
    webhookDeliveryDuration.observe(outcome.durationMs / 1000)
    this.windows.adapt(endpoint.id, isSuccessStatus(outcome.statusCode))
    const finished = { delivery, endpoint, outcome }
    // Successes (the common case) are written in one batch with those that finished beside them;
    // a failure keeps a transaction of its own, as it may lock its endpoint's row and, on
    // auto-disable, other workers' deliveries: batching those could deadlock two workers.
    // Each outcome is counted once its write committed: an attempt whose record failed is sent
    // again, and counted then.
    if (isSuccessStatus(outcome.statusCode)) {
      await this.successes.add(finished)
      succeeded.inc()
      return
    }
    const recorded = await this.db.transaction().execute((trx) => recordFailure(trx, finished, this.options))
    webhookDeliveries.labels(recorded.outcome).inc()
    if (recorded.disabledAfter !== undefined) {
      webhookEndpointsAutoDisabled.inc()
      this.log.info(
        { endpoint_id: endpoint.id, failures: recorded.disabledAfter },
        'webhook endpoint auto-disabled',
      )
    }
  }
}
