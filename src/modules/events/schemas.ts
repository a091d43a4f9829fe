import { type Static, Type } from 'typebox'
import { paginationQuery, Timestamp } from '../../core/schemas.js'
import { API_VERSION } from './types.js'

/**
 * The event envelope, as `GET /v1/events` returns it and as webhooks deliver it. The document's
 * `webhooks` narrow it per event type (`type` a literal, `data.object` the resource's schema).
 */
export const Event = Type.Object(
  {
    object: Type.Literal('event'),
    id: Type.String({ description: 'Prefix `evt_`; de-duplicate on it.' }),
    type: Type.String({ description: 'The event type, e.g. `operator.created`.' }),
    api_version: Type.String({ description: `Date-formatted, currently ${API_VERSION}.` }),
    livemode: Type.Boolean({ description: '`false` for test-mode events, `true` for live.' }),
    created: Timestamp,
    data: Type.Object(
      {
        object: Type.Record(Type.String(), Type.Unknown(), {
          description: 'The resource as the API returns it (with `object` and `id`).',
        }),
        previous_attributes: Type.Optional(
          Type.Record(Type.String(), Type.Unknown(), {
            description: 'On updates: the previous values of the fields that changed.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'Event', additionalProperties: false, description: 'Something that happened to a resource.' },
)
export type Event = Static<typeof Event>

export const ListEventsQuery = Type.Object(
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
export type ListEventsQuery = Static<typeof ListEventsQuery>

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [Event]
