import { type Selectable, sql } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { signalOnCommit } from '../../db/commit-signals.js'
import { indexedConstant, supportsRowLocks } from '../../db/connection.js'
import { createdWithin, newestFirst } from '../../db/keyset.js'
import type { WebhookAttemptsTable, WebhookDeliveriesTable } from '../../db/schema.js'
import { ownedBy, ownedRowFinder } from '../../db/scope.js'
import type { Db, Executor, Trx } from '../../db/types.js'
import { newId } from '../../lib/ids.js'
import { toIso, toIsoOrNull } from '../../lib/time.js'
import type { WebhookAttempt, WebhookDelivery } from './schemas.js'

/**
 * The delivery queue's SQL (`webhook_deliveries`, `webhook_attempts`): deliveries made, read by the
 * API, claimed under a lease, their attempts and outcomes written, failed ones requeued by a recover,
 * and the backlog the metrics read. An endpoint's own row is `repository.ts`'s.
 */

export type DeliveryRow = Selectable<WebhookDeliveriesTable>

export type AttemptRow = Selectable<WebhookAttemptsTable>

export function toAttempt(row: AttemptRow): WebhookAttempt {
  return {
    attempted_at: toIso(row.attempted_at),
    kind: row.kind,
    status_code: row.status_code,
    duration_ms: row.duration_ms,
    error: row.error,
    response_excerpt: row.response_excerpt,
  }
}

export function toDelivery(row: DeliveryRow, attempts: AttemptRow[]): WebhookDelivery {
  return {
    object: 'webhook_delivery',
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: attempts.map(toAttempt),
    next_attempt_at: toIsoOrNull(row.next_attempt_at),
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    updated: toIso(row.updated_at),
  }
}

// ---- deliveries

/** A new pending delivery of an event to an endpoint, due at `dueAt`. */
export function newDeliveryRow(
  event: { id: string; account_id: string; livemode: DeliveryRow['livemode']; type: string },
  endpointId: string,
  now: number,
  dueAt: number,
): DeliveryRow {
  return {
    id: newId('whd'),
    account_id: event.account_id,
    livemode: event.livemode,
    endpoint_id: endpointId,
    event_id: event.id,
    event_type: event.type,
    status: 'pending',
    scheduled_attempts: 0,
    next_attempt_at: dueAt,
    locked_until: null,
    created_at: now,
    updated_at: now,
  }
}

/**
 * Inserts the deliveries that do not exist yet and returns how many it inserted. The unique
 * (event_id, endpoint_id) index, not a prior check, is what keeps one delivery per pair when a
 * second dispatcher or a recover races on the same events. When it inserted any, the commit wakes
 * the workers' senders (none when every row existed already: nothing new to claim).
 */
export async function insertDeliveries(trx: Trx, rows: DeliveryRow[]): Promise<number> {
  if (rows.length === 0) return 0
  const result = await trx
    .insertInto('webhook_deliveries')
    .values(rows)
    .onConflict((oc) => oc.columns(['event_id', 'endpoint_id']).doNothing())
    .executeTakeFirst()
  const inserted = Number(result.numInsertedOrUpdatedRows ?? 0n)
  if (inserted > 0) await signalOnCommit(trx, 'webhook_deliveries')
  return inserted
}

export const findDelivery = ownedRowFinder('webhook_deliveries')

export async function listDeliveryRows(
  db: Executor,
  auth: AuthContext,
  f: {
    endpoint_id?: string | undefined
    event_id?: string | undefined
    status?: DeliveryRow['status'] | undefined
    createdFrom?: number | undefined
    createdTo?: number | undefined
  },
  beforeId: string | undefined,
  take: number,
) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
    .$if(f.endpoint_id !== undefined, (q) => q.where('endpoint_id', '=', f.endpoint_id ?? ''))
    .$if(f.event_id !== undefined, (q) => q.where('event_id', '=', f.event_id ?? ''))
    .$if(f.status !== undefined, (q) => q.where('status', '=', f.status ?? 'pending'))
    .$call(createdWithin(f))
    .$call(newestFirst(beforeId, take))
    .execute()
}

/** The attempts of several deliveries in one query (no N+1 on list pages), oldest first. */
export async function attemptsOf(db: Executor, deliveryIds: string[]): Promise<Map<string, AttemptRow[]>> {
  const byDelivery = new Map<string, AttemptRow[]>(deliveryIds.map((id) => [id, []]))
  if (deliveryIds.length === 0) return byDelivery
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('id')
    .execute()
  for (const row of rows) byDelivery.get(row.delivery_id)?.push(row)
  return byDelivery
}

// ---- claims, attempts and outcomes (worker.ts, outcomes.ts)

export interface ClaimRequest {
  now: number
  /** Deliveries to lease at most. */
  limit: number
  /** Deliveries of any one endpoint to lease at most, unless `endpointCaps` says otherwise. */
  perEndpoint: number
  /** Endpoints to leave alone: this worker has no room for more of theirs. */
  skipEndpoints: string[]
  /** Endpoints that can use fewer (or more) than `perEndpoint` deliveries now. */
  endpointCaps: ReadonlyMap<string, number>
  leaseMs: number
}

/** How many due rows a claim looks at per delivery it may lease, so capped endpoints leave room. */
const CLAIM_SCAN_FACTOR = 4

/**
 * Leases the most overdue pending deliveries for this worker: at most `limit`, of each endpoint at
 * most its cap (`endpointCaps`, else `perEndpoint`), none of `skipEndpoints`. On PostgreSQL `FOR UPDATE SKIP
 * LOCKED` lets several workers claim disjoint sets without waiting on each other; a lease that runs
 * out (the worker died mid-attempt) makes the delivery claimable again, so nothing is stranded.
 */
export async function claimDueDeliveries(db: Db, claim: ClaimRequest) {
  const { now } = claim
  const due = db
    .selectFrom('webhook_deliveries')
    .select(['id', 'endpoint_id', 'next_attempt_at'])
    .where('status', '=', indexedConstant('pending'))
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .$if(claim.skipEndpoints.length > 0, (q) => q.where('endpoint_id', 'not in', claim.skipEndpoints))
    .orderBy('next_attempt_at')
    .limit(claim.limit * CLAIM_SCAN_FACTOR)
    .$if(supportsRowLocks(db), (q) => q.forUpdate().skipLocked())
  const caps = [...claim.endpointCaps]
  // A CASE over a few dozen endpoints at most (those with deliveries in hand or an adapted window);
  // CAST, because PostgreSQL would otherwise type the bare parameters as text.
  const cap =
    caps.length === 0
      ? sql<number>`cast(${claim.perEndpoint} as integer)`
      : sql<number>`case ${sql.ref('endpoint_id')} ${sql.join(
          caps.map(([id, n]) => sql`when ${id} then cast(${n} as integer)`),
          sql` `,
        )} else cast(${claim.perEndpoint} as integer) end`
  const ranked = db.selectFrom(due.as('due')).select((eb) => [
    'id',
    'next_attempt_at',
    cap.as('endpoint_cap'),
    eb.fn
      .agg<number>('row_number')
      .over((ob) => ob.partitionBy('endpoint_id').orderBy('next_attempt_at'))
      .as('endpoint_rank'),
  ])
  const chosen = db
    .selectFrom(ranked.as('ranked'))
    .select('id')
    .where((eb) => eb('endpoint_rank', '<=', eb.ref('endpoint_cap')))
    .orderBy('next_attempt_at')
    .limit(claim.limit)
  // One statement, so atomic on its own: no BEGIN/COMMIT round trips around it.
  return db
    .updateTable('webhook_deliveries')
    .set({ locked_until: now + claim.leaseMs })
    .where('id', 'in', chosen)
    .returningAll()
    .execute()
}

/**
 * Gives up this worker's lease on deliveries: those claimed but never attempted (it is stopping),
 * or one stopped while its attempt was in flight (a recover must find it claimable at once, not
 * when the lease runs out). Only rows still under the given lease: one that ran out may already be
 * another worker's.
 */
export async function releaseDeliveries(db: Executor, ids: string[], leasedUntil: number) {
  if (ids.length === 0) return
  await db
    .updateTable('webhook_deliveries')
    .set({ locked_until: null })
    .where('id', 'in', ids)
    .where('locked_until', '=', leasedUntil)
    .execute()
}

export async function insertAttempt(trx: Trx, row: AttemptRow) {
  await trx.insertInto('webhook_attempts').values(row).execute()
}

/** Several attempts in multi-row INSERTs (8 parameters a row: far below either dialect's limit). */
export async function insertAttempts(trx: Trx, rows: AttemptRow[]) {
  for (let i = 0; i < rows.length; i += 500)
    await trx
      .insertInto('webhook_attempts')
      .values(rows.slice(i, i + 500))
      .execute()
}

/**
 * Marks deliveries succeeded after their `scheduledAttempts`-th scheduled attempt, in one UPDATE
 * (the worker groups them by that number).
 */
export async function markDeliveriesSucceeded(
  trx: Trx,
  ids: string[],
  scheduledAttempts: number,
  now: number,
) {
  for (let i = 0; i < ids.length; i += 500)
    await trx
      .updateTable('webhook_deliveries')
      .set({
        status: 'succeeded',
        scheduled_attempts: scheduledAttempts,
        next_attempt_at: null,
        locked_until: null,
        updated_at: now,
      })
      .where('id', 'in', ids.slice(i, i + 500))
      .execute()
}

export async function updateDeliveryRow(trx: Trx, id: string, changes: Partial<DeliveryRow>) {
  await trx.updateTable('webhook_deliveries').set(changes).where('id', '=', id).execute()
}

/**
 * Moves a delivery on only while it is still pending: if its endpoint was disabled or deleted while
 * the attempt was in flight, the delivery was stopped meanwhile and stays stopped. The attempt
 * itself is still recorded. Returns whether the delivery was still pending.
 */
export async function updatePendingDelivery(
  trx: Trx,
  id: string,
  changes: Partial<DeliveryRow>,
): Promise<boolean> {
  const result = await trx
    .updateTable('webhook_deliveries')
    .set(changes)
    .where('id', '=', id)
    .where('status', '=', indexedConstant('pending'))
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * Stops every pending delivery of an endpoint (auto-disable, disable, delete). The lease stays: a
 * delivery whose attempt is still in flight, if a recover puts it back to pending, is not claimed
 * again before that attempt is recorded (a success then marks it succeeded, never sent twice); the
 * attempt's record gives the lease back.
 */
export async function failPendingDeliveries(trx: Trx, endpointId: string, now: number) {
  await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null, updated_at: now })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', indexedConstant('pending'))
    .execute()
}

// ---- recover

/** The next batch of an endpoint's failed deliveries created in [from, to), after `afterId`. */
export async function failedDeliveryIds(
  db: Executor,
  endpointId: string,
  window: { from: number; to: number },
  afterId: string,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', indexedConstant('failed'))
    .where('id', '>', afterId)
    .where('created_at', '>=', window.from)
    .where('created_at', '<', window.to)
    .orderBy('id')
    .limit(limit)
    .execute()
  return rows.map((r) => r.id)
}

/**
 * Puts failed deliveries back to pending for a new round of scheduled attempts, due at `dueAt`.
 * Only rows still failed change (the condition is in the UPDATE, not a prior read): a delivery a
 * resend or an in-flight attempt marked succeeded meanwhile stays succeeded. Returns how many; the
 * commit wakes the workers' senders when there were any.
 */
export async function requeueFailedDeliveries(
  trx: Trx,
  ids: string[],
  dueAt: number,
  now: number,
): Promise<number> {
  if (ids.length === 0) return 0
  const result = await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', scheduled_attempts: 0, next_attempt_at: dueAt, updated_at: now })
    .where('id', 'in', ids)
    .where('status', '=', indexedConstant('failed'))
    .executeTakeFirst()
  const requeued = Number(result.numUpdatedRows)
  if (requeued > 0) await signalOnCommit(trx, 'webhook_deliveries')
  return requeued
}

// ---- metrics

/**
 * How many deliveries are pending and when the oldest was created, for the metrics gauges: both
 * from the partial index of pending deliveries by creation time (013), read alone.
 */
export async function pendingDeliveryBacklog(
  db: Executor,
): Promise<{ count: number; oldestCreatedAt: number | undefined }> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => [eb.fn.countAll<number | string>().as('count'), eb.fn.min('created_at').as('oldest')])
    .where('status', '=', indexedConstant('pending'))
    .executeTakeFirstOrThrow()
  return {
    count: Number(row.count),
    oldestCreatedAt: row.oldest === null ? undefined : Number(row.oldest),
  }
}
