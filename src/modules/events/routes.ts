import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { requireAuth } from '../../http/auth.js'
import { errors } from '../../http/errors.js'
import { instantOf } from '../../http/instants.js'
import { listEnvelope, paginationQuery } from '../../http/pagination.js'
import { errorResponses, IdParams, Timestamp } from '../../http/schemas.js'
import { findEvent, listEventRows, toEvent } from './repository.js'

const tags = ['Events']

export const Event = Type.Object(
  {
    object: Type.Literal('event'),
    id: Type.String({ description: 'Prefix `evt_`; de-duplicate on it.' }),
    type: Type.String(),
    api_version: Type.String({ description: 'Date-formatted, e.g. 2026-11-22.' }),
    livemode: Type.Boolean(),
    created: Timestamp,
    data: Type.Object({
      object: Type.Record(Type.String(), Type.Unknown(), {
        description: 'The resource as the API returns it.',
      }),
      previous_attributes: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { additionalProperties: false },
)

const ListEventsQuery = Type.Object(
  {
    ...paginationQuery,
    type: Type.Optional(Type.String({ maxLength: 64 })),
    created_from: Type.Optional(
      Type.String({ maxLength: 64, description: 'Events created at or after this instant.' }),
    ),
    created_to: Type.Optional(
      Type.String({ maxLength: 64, description: 'Events created before this instant.' }),
    ),
  },
  { additionalProperties: false },
)

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
        response: { 200: listEnvelope(Event), ...errorResponses() },
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
        response: { 200: Event, ...errorResponses(404) },
      },
    },
    async (request) => {
      const row = await findEvent(app.db, requireAuth(request), request.params.id)
      if (!row) throw errors.notFound('event', request.params.id)
      return toEvent(row)
    },
  )
}
