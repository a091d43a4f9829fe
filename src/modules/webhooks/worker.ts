import type { Agent } from 'undici'
import type { Db, Trx } from '../../db/connection.js'
import { supportsRowLocks } from '../../db/connection.js'
import { newId } from '../../lib/ids.js'
import {
  type AttemptOutcome,
  type AttemptRequest,
  isSuccess,
  MAX_SCHEDULED_ATTEMPTS,
  nextDelayMs,
  sendAttempt,
} from './attempt.js'
import {
  claimDueDeliveries,
  countExhaustedDelivery,
  type DeliveryRow,
  type EndpointRow,
  enabledEndpointsOf,
  endpointsByIds,
  failPendingDeliveries,
  insertAttempt,
  insertAttempts,
  insertDeliveries,
  lockEndpoint,
  markDeliveriesSucceeded,
  resetConsecutiveFailures,
  updateDeliveryRow,
  updateEndpointRow,
  updatePendingDelivery,
} from './repository.js'
import { signingSecrets } from './service.js'
import { matchesSubscription } from './subscription.js'
import { createSafeDispatcher } from './url-policy.js'

export interface WorkerOptions {
  timeoutMs: number
  backoffScale: number
  disableThreshold: number
  allowPrivateUrls: boolean
  /** Idle wait between polls when there was nothing to do. */
  pollMs?: number
  /** Deliveries claimed and sent concurrently per round (default DEFAULT_BATCH_SIZE). */
  batchSize?: number
}

interface Logger {
  info(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

const DISPATCH_BATCH = 500
/**
 * 128 rather than 64: each round pays a fixed cost (dispatch, claim, two look-ups, a commit or two),
 * and halving the rounds raised a lone worker's drain rate by about a third on PostgreSQL
 * (docs/performance.md, "Webhook delivery"). A round still waits for its slowest attempt.
 */
export const DEFAULT_BATCH_SIZE = 128
/** Attempts written in one group-commit transaction at most. */
const MAX_RECORD_GROUP = 500

interface Finished {
  delivery: DeliveryRow
  endpoint: EndpointRow
  outcome: AttemptOutcome
}

/**
 * Turns new events into deliveries and sends due deliveries, until stopped. Runs inside the API
 * process (WORKER=inline) or alone (`cli worker`); any number may run against one PostgreSQL
 * database. Delivery is at-least-once: state lives only in the database, claims are leases, and an
 * attempt is recorded after it is sent, so a crash between the two re-sends rather than loses.
 */
export class WebhookWorker {
  private readonly dispatcher: Agent
  private running = false
  private loop: Promise<void> | undefined
  private wake: (() => void) | undefined
  private stopped: Promise<void> | undefined
  private readonly successes = new GroupCommit<Finished>((group) =>
    this.db.transaction().execute((trx) => this.recordSuccesses(trx, group)),
  )

  constructor(
    private readonly db: Db,
    private readonly options: WorkerOptions,
    private readonly log: Logger,
  ) {
    this.dispatcher = createSafeDispatcher({
      allowPrivate: options.allowPrivateUrls,
      timeoutMs: options.timeoutMs,
    })
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.loop = this.run()
  }

  /**
   * Stops polling and waits for the round in progress, so no attempt is cut off half-recorded.
   * Idempotent: a second call waits for the first (closing the HTTP agent twice would throw).
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.running = false
      this.wake?.()
      await this.loop
      await this.dispatcher.close()
    })()
    return this.stopped
  }

  private async run(): Promise<void> {
    while (this.running) {
      let worked = 0
      try {
        worked = await this.runOnce()
      } catch (error) {
        this.log.error({ err: error }, 'webhook worker round failed')
      }
      if (worked === 0 && this.running) await this.sleep(this.options.pollMs ?? 100)
    }
  }

  /** One round: dispatch new events, then send what is due. Returns how much it did. */
  async runOnce(): Promise<number> {
    const dispatched = await dispatchEvents(this.db)
    const leaseMs = this.options.timeoutMs + 30_000
    const claimed = await claimDueDeliveries(
      this.db,
      Date.now(),
      this.options.batchSize ?? DEFAULT_BATCH_SIZE,
      leaseMs,
    )
    if (claimed.length > 0) {
      const endpoints = new Map(
        (await endpointsByIds(this.db, [...new Set(claimed.map((d) => d.endpoint_id))])).map((e) => [
          e.id,
          e,
        ]),
      )
      const payloads = await eventPayloads(
        this.db,
        claimed.map((d) => d.event_id),
      )
      await Promise.all(
        claimed.map((delivery) =>
          this.deliver(delivery, endpoints.get(delivery.endpoint_id), payloads.get(delivery.event_id)),
        ),
      )
    }
    return dispatched + claimed.length
  }

  private async deliver(
    delivery: DeliveryRow,
    endpoint: EndpointRow | undefined,
    payload: string | undefined,
  ) {
    if (endpoint?.status !== 'enabled' || payload === undefined) {
      await this.db.transaction().execute((trx) =>
        updateDeliveryRow(trx, delivery.id, {
          status: 'failed',
          next_attempt_at: null,
          locked_until: null,
          updated_at: Date.now(),
        }),
      )
      return
    }
    const outcome = await sendAttempt(
      this.dispatcher,
      attemptRequest(delivery, endpoint, payload),
      this.options.timeoutMs,
    )
    const finished = { delivery, endpoint, outcome }
    // Successes (the common case) are committed together with those that finished beside them;
    // a failure keeps a transaction of its own, as it may lock its endpoint's row and, on
    // auto-disable, other workers' deliveries: grouping those could deadlock two workers.
    if (isSuccess(outcome)) await this.successes.add(finished)
    else await this.db.transaction().execute((trx) => this.recordFailure(trx, finished))
  }

  /**
   * Records succeeded scheduled attempts in a few multi-row statements: the attempts, the
   * deliveries (one UPDATE per attempt number) and the reset of their endpoints' failure runs.
   */
  private async recordSuccesses(trx: Trx, succeeded: Finished[]) {
    const now = Date.now()
    await insertAttempts(
      trx,
      succeeded.map((f) => attemptRow(f.delivery.id, 'scheduled', f.outcome)),
    )
    const byAttempts = new Map<number, string[]>()
    for (const { delivery } of succeeded) {
      const attempts = delivery.scheduled_attempts + 1
      const ids = byAttempts.get(attempts)
      if (ids) ids.push(delivery.id)
      else byAttempts.set(attempts, [delivery.id])
    }
    // Endpoints before deliveries: the lock order every endpoint-and-delivery transaction keeps.
    await resetConsecutiveFailures(trx, [...new Set(succeeded.map((f) => f.endpoint.id))].sort())
    for (const [attempts, ids] of byAttempts) await markDeliveriesSucceeded(trx, ids, attempts, now)
  }

  /** A failed scheduled attempt: retry later, or give up (and maybe auto-disable the endpoint). */
  private async recordFailure(trx: Trx, { delivery, endpoint, outcome }: Finished) {
    await lockEndpoint(trx, endpoint.id)
    await insertAttempt(trx, attemptRow(delivery.id, 'scheduled', outcome))
    const now = Date.now()
    const attempts = delivery.scheduled_attempts + 1
    // 410 Gone: the receiver says this endpoint is gone; never retried.
    if (outcome.statusCode === 410 || attempts >= MAX_SCHEDULED_ATTEMPTS) {
      const stillPending = await updatePendingDelivery(trx, delivery.id, {
        status: 'failed',
        scheduled_attempts: attempts,
        next_attempt_at: null,
        locked_until: null,
        updated_at: now,
      })
      // A delivery stopped while this attempt was in flight (endpoint disabled or deleted) does
      // not count against the endpoint again.
      if (!stillPending) return
      const failures = await countExhaustedDelivery(trx, endpoint.id)
      if (failures !== undefined && failures >= this.options.disableThreshold) {
        await updateEndpointRow(trx, endpoint.id, {
          status: 'disabled',
          disabled_reason: `${failures} consecutive deliveries failed`,
          updated_at: now,
        })
        await failPendingDeliveries(trx, endpoint.id, now)
        this.log.info({ endpoint_id: endpoint.id, failures }, 'webhook endpoint auto-disabled')
      }
      return
    }
    const delay = nextDelayMs(attempts, this.options.backoffScale, outcome.retryAfterMs)
    await updatePendingDelivery(trx, delivery.id, {
      scheduled_attempts: attempts,
      next_attempt_at: now + delay,
      locked_until: null,
      updated_at: now,
    })
  }

  /**
   * resend: one attempt of the same delivery, now, outside the schedule. A success marks the
   * delivery succeeded (and counts as a 2xx for the endpoint); a failure changes nothing else and
   * does not count towards auto-disable.
   */
  async resend(delivery: DeliveryRow, endpoint: EndpointRow, payload: string): Promise<void> {
    const outcome = await sendAttempt(
      this.dispatcher,
      attemptRequest(delivery, endpoint, payload),
      this.options.timeoutMs,
    )
    await this.db.transaction().execute(async (trx) => {
      await insertAttempt(trx, attemptRow(delivery.id, 'resend', outcome))
      const now = Date.now()
      if (!isSuccess(outcome)) {
        await updateDeliveryRow(trx, delivery.id, { updated_at: now })
        return
      }
      await updateDeliveryRow(trx, delivery.id, {
        status: 'succeeded',
        next_attempt_at: null,
        updated_at: now,
      })
      await updateEndpointRow(trx, endpoint.id, { consecutive_failures: 0 })
    })
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }
}

/**
 * Group commit: items added while a write is in progress wait for it and then go into the next
 * write together, so a round of concurrent successes costs one to a few transactions (one commit,
 * one WAL flush each) instead of one per attempt, while each is still recorded as soon as the
 * database can take it: a slow receiver does not hold back the others' records. A write that fails
 * rejects every item of its group (those deliveries are re-sent once their lease runs out, as
 * after a crash).
 */
class GroupCommit<T> {
  private pending: Array<{ item: T; resolve: () => void; reject: (error: unknown) => void }> = []
  private writing = false

  constructor(private readonly write: (items: T[]) => Promise<void>) {}

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject })
      if (!this.writing) void this.drain()
    })
  }

  private async drain(): Promise<void> {
    this.writing = true
    // Let the other responses read in this same turn of the event loop join the first group.
    await new Promise((resolve) => setImmediate(resolve))
    while (this.pending.length > 0) {
      const group = this.pending.splice(0, MAX_RECORD_GROUP)
      try {
        await this.write(group.map((g) => g.item))
        for (const g of group) g.resolve()
      } catch (error) {
        for (const g of group) g.reject(error)
      }
    }
    this.writing = false
  }
}

function attemptRequest(delivery: DeliveryRow, endpoint: EndpointRow, payload: string): AttemptRequest {
  return {
    url: endpoint.url,
    deliveryId: delivery.id,
    eventType: delivery.event_type,
    body: payload,
    secrets: signingSecrets(endpoint, Date.now()),
  }
}

function attemptRow(deliveryId: string, kind: 'scheduled' | 'resend', outcome: AttemptOutcome) {
  return {
    id: newId('wha'),
    delivery_id: deliveryId,
    kind,
    attempted_at: outcome.attemptedAt,
    status_code: outcome.statusCode,
    duration_ms: outcome.durationMs,
    error: outcome.error,
    response_excerpt: outcome.responseExcerpt,
  }
}

export async function eventPayloads(db: Db, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .selectFrom('events')
    .select(['id', 'payload'])
    .where('id', 'in', [...new Set(ids)])
    .execute()
  return new Map(rows.map((r) => [r.id, r.payload]))
}

/**
 * The outbox relay: new events become one delivery per matching enabled endpoint of the same
 * account and mode, and are marked dispatched in the same transaction. `SKIP LOCKED` lets several
 * dispatchers share the work on PostgreSQL; the unique (event, endpoint) index makes a double
 * dispatch harmless anyway.
 */
export async function dispatchEvents(db: Db): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const events = await trx
      .selectFrom('events')
      .select(['id', 'account_id', 'livemode', 'type', 'created_at'])
      .where('dispatched_at', 'is', null)
      .orderBy('id')
      .limit(DISPATCH_BATCH)
      .$if(supportsRowLocks(trx), (q) => q.forUpdate().skipLocked())
      .execute()
    if (events.length === 0) return 0
    const endpoints = await enabledEndpointsOf(trx, [...new Set(events.map((e) => e.account_id))])
    const patterns = new Map(endpoints.map((e) => [e.id, JSON.parse(e.enabled_events) as string[]]))
    const now = Date.now()
    const deliveries: DeliveryRow[] = []
    for (const event of events) {
      for (const endpoint of endpoints) {
        if (endpoint.account_id !== event.account_id || endpoint.livemode !== event.livemode) continue
        if (!matchesSubscription(patterns.get(endpoint.id) ?? [], event.type)) continue
        deliveries.push({
          id: newId('whd'),
          account_id: event.account_id,
          livemode: event.livemode,
          endpoint_id: endpoint.id,
          event_id: event.id,
          event_type: event.type,
          status: 'pending',
          scheduled_attempts: 0,
          next_attempt_at: now,
          locked_until: null,
          created_at: now,
          updated_at: now,
        })
      }
    }
    for (let i = 0; i < deliveries.length; i += 500) await insertDeliveries(trx, deliveries.slice(i, i + 500))
    await trx
      .updateTable('events')
      .set({ dispatched_at: now })
      .where(
        'id',
        'in',
        events.map((e) => e.id),
      )
      .execute()
    return events.length
  })
}
