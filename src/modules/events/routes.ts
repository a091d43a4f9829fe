import type { FastifyInstance } from 'fastify'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { Event, ListEventsQuery } from './schemas.js'
import { listEvents, retrieveEvent } from './service.js'

/** The events API: what a receiver that was down reads to catch up. Events are only ever read. */
export async function eventRoutes(app: FastifyInstance): Promise<void> {
  registerResourceRoutes(app, {
    path: '/v1/events',
    name: 'event',
    tag: 'Events',
    scope: 'events',
    sites: 'account-wide',
    schema: Event,
    retrieve: retrieveEvent,
    list: { query: ListEventsQuery, run: listEvents },
  })
}
