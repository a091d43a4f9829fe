import type { Db } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import {
  eventPayloads,
  hasUndispatchedEvents,
  lockUndispatchedEvents,
  markEventsDispatched,
} from '../events/service.js'
import { type DeliveryRow, insertDeliveries, newDeliveryRow } from './delivery-repository.js'
import { enabledEndpointsOf, subscriberOf } from './repository.js'
import { ENDPOINT_DISABLED_EVENT_TYPE, receives, subjectEndpointIdOf } from './subscription.js'

/** Events dispatched in one transaction at most; a full batch means more may be waiting. */
export const DISPATCH_BATCH = 500
/** Deliveries in one multi-row INSERT (12 parameters a row: far below either dialect's limit). */
const INSERT_BATCH = 500

/**
 * The outbox relay: new events become one delivery per enabled endpoint that receives them (see
 * `receives`), and are marked dispatched in the same transaction. Several dispatchers may share
 * the work on PostgreSQL; the unique (event, endpoint) index makes a double dispatch harmless
 * anyway. Returns how many events it dispatched.
 */
export async function dispatchEvents(db: Db): Promise<number> {
  // Most polls find nothing: a plain read first spares them a write transaction (on SQLite, the
  // database's write lock; on PostgreSQL, two round trips).
  if (!(await hasUndispatchedEvents(db))) return 0
  return db.transaction().execute(async (trx) => {
    const events = await lockUndispatchedEvents(trx, DISPATCH_BATCH)
    if (events.length === 0) return 0
    const endpoints = (await enabledEndpointsOf(trx, [...new Set(events.map((e) => e.account_id))])).map(
      subscriberOf,
    )
    // Only `webhook_endpoint.disabled` needs its payload read (to spare the endpoint it describes).
    const subjects = await eventPayloads(
      trx,
      events.filter((e) => e.type === ENDPOINT_DISABLED_EVENT_TYPE).map((e) => e.id),
    )
    const now = clock.now()
    const deliveries: DeliveryRow[] = []
    for (const event of events) {
      const payload = subjects.get(event.id)
      const subject = { ...event, subjectEndpointId: payload && subjectEndpointIdOf(payload) }
      for (const endpoint of endpoints) {
        if (receives(endpoint, subject)) deliveries.push(newDeliveryRow(event, endpoint.id, now, now))
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
