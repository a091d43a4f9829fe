import type { Db } from '../../db/connection.js'
import { newId } from '../../lib/ids.js'
import { type DeliveryRow, enabledEndpointsOf, insertDeliveries } from '../webhooks/repository.js'
import { matchesSubscription } from '../webhooks/subscription.js'
import { hasUndispatchedEvents, lockUndispatchedEvents, markEventsDispatched } from './repository.js'

/** Events dispatched in one transaction at most; a full batch means more may be waiting. */
export const DISPATCH_BATCH = 500
/** Deliveries in one multi-row INSERT (12 parameters a row: far below either dialect's limit). */
const INSERT_BATCH = 500

/**
 * The outbox relay: new events become one delivery per matching enabled endpoint of the same
 * account and mode, and are marked dispatched in the same transaction. Several dispatchers may
 * share the work on PostgreSQL; the unique (event, endpoint) index makes a double dispatch harmless
 * anyway. Returns how many events it dispatched.
 */
export async function dispatchEvents(db: Db): Promise<number> {
  // Most polls find nothing: a plain read first spares them a write transaction (on SQLite, the
  // database's write lock; on PostgreSQL, two round trips).
  if (!(await hasUndispatchedEvents(db))) return 0
  return db.transaction().execute(async (trx) => {
    const events = await lockUndispatchedEvents(trx, DISPATCH_BATCH)
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
    for (let i = 0; i < deliveries.length; i += INSERT_BATCH)
      await insertDeliveries(trx, deliveries.slice(i, i + INSERT_BATCH))
    await markEventsDispatched(
      trx,
      events.map((e) => e.id),
      now,
    )
    return events.length
  })
}
