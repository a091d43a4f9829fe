import { lockRetentionBatch, type RetentionBatch } from '../../db/retention-batch.js'
import type { Executor, Trx } from '../../db/types.js'

/**
 * Retention's SQL on deliveries (modules/events/retention.ts, through `deliveryRetention` in
 * service.ts): finished deliveries past the window, deleted with their attempts in batches, and
 * which events still have a delivery (an event never goes before its deliveries).
 */

/**
 * The next `limit` deliveries created before `before` that are finished (succeeded or failed), in
 * (created_at, id) order after `after`, along the `webhook_deliveries_created` index, locked as
 * `lockRetentionBatch` says. A pending one is skipped whatever its age: it is still to be sent.
 */
export async function lockFinishedDeliveriesBefore(trx: Trx, batch: RetentionBatch) {
  return lockRetentionBatch(
    trx,
    trx.selectFrom('webhook_deliveries').select(['id', 'created_at']).where('status', '!=', 'pending'),
    batch,
  )
}

/** Deletes the deliveries and every attempt of theirs; returns how many of each. */
export async function deleteDeliveries(
  trx: Trx,
  ids: string[],
): Promise<{ deliveries: number; attempts: number }> {
  if (ids.length === 0) return { deliveries: 0, attempts: 0 }
  const attempts = await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).executeTakeFirst()
  const deliveries = await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).executeTakeFirst()
  return { deliveries: Number(deliveries.numDeletedRows), attempts: Number(attempts.numDeletedRows) }
}

/** Those of the given events that have a delivery (through the unique (event, endpoint) index). */
export async function eventIdsWithDeliveries(db: Executor, eventIds: string[]): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set()
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('event_id')
    .distinct()
    .where('event_id', 'in', eventIds)
    .execute()
  return new Set(rows.map((r) => r.event_id))
}
