import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { errors } from '../../core/errors.js'
import { instantOf } from '../../core/instants.js'
import { IdParams, listEnvelope, ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { findEvent, listEventRows, toEvent } from './repository.js'
import { Event, ListEventsQuery } from './schemas.js'

const tags = ['Events']

/** The events API: what a receiver that was down reads to catch up. */
export async function eventRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/v1/events',
    {
      config: { scope: 'events:read' },
      schema: {
        tags,
        summary: 'List events, newest first',
        querystring: ListEventsQuery,
        response: { 200: listEnvelope(ref(Event), 'A page of events.') },
      },
    },
    (request) => {
      const auth = requireAuth(request)
      const q = request.query
      const filters = {
        type: q.type,
        createdFrom: q.created_from === undefined ? undefined : instantOf(q.created_from, 'created_from'),
        createdTo: q.created_to === undefined ? undefined : instantOf(q.created_to, 'created_to'),
      }
      return app.paginator.page(
        'event',
        auth,
        q,
        (beforeId, take) => listEventRows(app.db, auth, filters, beforeId, take),
        toEvent,
      )
    },
  )

  app.get(
    '/v1/events/:id',
    {
      config: { scope: 'events:read' },
      schema: {
        tags,
        summary: 'Retrieve an event',
        params: IdParams,
        response: { 200: ref(Event, 'The event.') },
      },
    },
    async (request) => {
      const row = await findEvent(app.db, requireAuth(request), request.params.id)
      if (!row) throw errors.notFound('event', request.params.id)
      return toEvent(row)
    },
  )
}
