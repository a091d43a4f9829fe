import type { AuthContext } from '../../core/identity.js'
import { supportsRowLocks } from '../../db/connection.js'
import { createdWithin, newestFirst } from '../../db/keyset.js'
import { lockRetentionBatch, type RetentionKey } from '../../db/retention-batch.js'
import { ownedBy } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import type { EventEnvelope } from './outbox.js'

export interface EventRow {
  id: string
  payload: string
}

export function toEvent(row: EventRow): EventEnvelope {
  return JSON.parse(row.payload) as EventEnvelope
}

export async function findEvent(db: Executor, auth: AuthContext, id: string) {
  return db
    .selectFrom('events')
    .select(['id', 'payload'])
    .where((eb) => eb.and(ownedBy(auth)))
    .where('id', '=', id)
    .executeTakeFirst()
}

export async function listEventRows(
  db: Executor,
  auth: AuthContext,
  f: { type?: string; createdFrom?: number; createdTo?: number },
  beforeId: string | undefined,
  take: number,
) {
  return db
    .selectFrom('events')
    .select(['id', 'payload'])
    .where((eb) => eb.and(ownedBy(auth)))
    .$if(f.type !== undefined, (q) => q.where('type', '=', f.type ?? ''))
    .$call(createdWithin(f))
    .$call(newestFirst(beforeId, take))
    .execute()
}

/** The stored envelopes of the given events, by id: the exact bytes a delivery signs and sends. */
export async function eventPayloads(db: Executor, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .selectFrom('events')
    .select(['id', 'payload'])
    .where('id', 'in', [...new Set(ids)])
    .execute()
  return new Map(rows.map((r) => [r.id, r.payload]))
}

export async function hasUndispatchedEvents(db: Executor): Promise<boolean> {
  const row = await db
    .selectFrom('events')
    .select('id')
    .where('dispatched_at', 'is', null)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/**
 * The oldest events not yet dispatched, locked for this transaction; `SKIP LOCKED` lets several
 * dispatchers share the work on PostgreSQL.
 */
export async function lockUndispatchedEvents(trx: Trx, limit: number) {
  return trx
    .selectFrom('events')
    .select(['id', 'account_id', 'livemode', 'type', 'created_at'])
    .where('dispatched_at', 'is', null)
    .orderBy('id')
    .limit(limit)
    .$if(supportsRowLocks(trx), (q) => q.forUpdate().skipLocked())
    .execute()
}

export async function markEventsDispatched(trx: Trx, ids: string[], now: number) {
  await trx.updateTable('events').set({ dispatched_at: now }).where('id', 'in', ids).execute()
}

export interface WindowEventRow {
  id: string
  account_id: string
  livemode: 0 | 1
  type: string
  created_at: number
}

/**
 * The next batch of one account and mode's events created in [from, to), in (created_at, id)
 * order after `after` (the last row of the previous batch): a keyset walk along the (account,
 * mode, created_at) index, so each batch costs the same however far in it is.
 */
export async function eventsBetween(
  db: Executor,
  scope: { account_id: string; livemode: 0 | 1 },
  window: { from: number; to: number },
  after: { created_at: number; id: string } | undefined,
  limit: number,
): Promise<WindowEventRow[]> {
  return db
    .selectFrom('events')
    .select(['id', 'account_id', 'livemode', 'type', 'created_at'])
    .where('account_id', '=', scope.account_id)
    .where('livemode', '=', scope.livemode)
    .where('created_at', '>=', window.from)
    .where('created_at', '<', window.to)
    .$if(after !== undefined, (q) =>
      q.where((eb) =>
        eb.or([
          eb('created_at', '>', after?.created_at ?? 0),
          eb.and([eb('created_at', '=', after?.created_at ?? 0), eb('id', '>', after?.id ?? '')]),
        ]),
      ),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute()
}

/** Events not yet relayed to webhook deliveries, for the metrics gauge: the partial index `events_undispatched` alone. */
export async function countUndispatchedEvents(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('dispatched_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.count)
}

/**
 * Retention: the next `limit` events created before `before` and already relayed (an event not yet
 * turned into deliveries is never deleted), in (created_at, id) order after `after`, along the
 * `events_created` index, locked as `lockRetentionBatch` says.
 */
export async function lockRelayedEventsBefore(
  trx: Trx,
  before: number,
  after: RetentionKey | undefined,
  limit: number,
) {
  return lockRetentionBatch(
    trx,
    trx.selectFrom('events').select(['id', 'created_at']).where('dispatched_at', 'is not', null),
    { before, after, limit },
  )
}

export async function deleteEvents(trx: Trx, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0
  const result = await trx.deleteFrom('events').where('id', 'in', ids).executeTakeFirst()
  return Number(result.numDeletedRows)
}
