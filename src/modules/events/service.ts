import type { AuthContext } from '../../core/identity.js'
import { instantOf } from '../../core/instants.js'
import type { Executor } from '../../db/types.js'
import { retrieveResource } from '../shared/resources.js'
import type { EventEnvelope } from './outbox.js'
import { findEvent, listEventRows, toEvent } from './repository.js'
import type { ListEventsQuery } from './schemas.js'

// The outbox as the webhooks module reads it (its relay, its sends and its recover) and the
// metrics gauge counts it, from the repository that holds every query of the events table.
export {
  countUndispatchedEvents,
  eventPayloads,
  eventsBetween,
  hasUndispatchedEvents,
  lockUndispatchedEvents,
  markEventsDispatched,
} from './repository.js'

export function retrieveEvent(db: Executor, auth: AuthContext, id: string): Promise<EventEnvelope> {
  return retrieveResource(db, auth, { name: 'event', find: findEvent, toApi: toEvent }, id)
}

export async function listEvents(
  db: Executor,
  auth: AuthContext,
  query: ListEventsQuery,
  beforeId: string | undefined,
  take: number,
): Promise<EventEnvelope[]> {
  const filters = {
    type: query.type,
    createdFrom: query.created_from === undefined ? undefined : instantOf(query.created_from, 'created_from'),
    createdTo: query.created_to === undefined ? undefined : instantOf(query.created_to, 'created_to'),
  }
  return (await listEventRows(db, auth, filters, beforeId, take)).map(toEvent)
}
