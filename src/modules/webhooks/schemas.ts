import { type Static, Type } from 'typebox'
import { deletedObject, nullableString, paginationQuery, ref, Timestamp } from '../../core/schemas.js'

const enabledEvents = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: 64,
  description: 'Exact event types, `<resource>.*` wildcards, or `*`.',
})
const url = Type.String({ minLength: 1, maxLength: 2048, description: 'HTTPS URL of a public host.' })
const description = nullableString({ maxLength: 500 })

const endpointFields = {
  object: Type.Literal('webhook_endpoint'),
  id: Type.String({ description: 'Prefix `we_`.' }),
  url: Type.String(),
  enabled_events: Type.Array(Type.String()),
  description: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  livemode: Type.Boolean(),
  created: Timestamp,
  updated: Timestamp,
}

export const WebhookEndpoint = Type.Object(endpointFields, {
  $id: 'WebhookEndpoint',
  additionalProperties: false,
  description: 'A receiver of signed events; its signing secret is shown only on create and rotate-secret.',
})
export type WebhookEndpoint = Static<typeof WebhookEndpoint>

/** Create and rotate-secret answers: the endpoint with its signing secret, shown only there. */
export const WebhookEndpointWithSecret = Type.Object(
  { ...endpointFields, secret: Type.String({ description: '`whsec_…`: shown once.' }) },
  {
    $id: 'WebhookEndpointWithSecret',
    additionalProperties: false,
    description: 'The endpoint with its signing secret: the create and rotate-secret answers only.',
  },
)
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>

export const CreateEndpointBody = Type.Object(
  { url, enabled_events: enabledEvents, description: Type.Optional(description) },
  { additionalProperties: false },
)
export type CreateEndpointBody = Static<typeof CreateEndpointBody>

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(url),
    enabled_events: Type.Optional(enabledEvents),
    description: Type.Optional(description),
    status: Type.Optional(
      Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], {
        description: '`enabled` re-enables an (auto-)disabled endpoint; `disabled` pauses it.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type UpdateEndpointBody = Static<typeof UpdateEndpointBody>

export const ListEndpointsQuery = Type.Object(paginationQuery, { additionalProperties: false })
export type ListEndpointsQuery = Static<typeof ListEndpointsQuery>

export const RotateSecretBody = Type.Object(
  {
    grace_hours: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 168,
        default: 24,
        description: 'How long the previous secret stays valid.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type RotateSecretBody = Static<typeof RotateSecretBody>

const deliveryStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
])

export const WebhookAttempt = Type.Object(
  {
    attempted_at: Timestamp,
    kind: Type.Union([Type.Literal('scheduled'), Type.Literal('resend')]),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    duration_ms: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()]),
    response_excerpt: Type.Union([Type.String(), Type.Null()]),
  },
  {
    $id: 'WebhookAttempt',
    additionalProperties: false,
    description: 'One POST of a delivery to its endpoint.',
  },
)
export type WebhookAttempt = Static<typeof WebhookAttempt>

export const WebhookDelivery = Type.Object(
  {
    object: Type.Literal('webhook_delivery'),
    id: Type.String({
      description: 'Prefix `whd_`; the `X-Service-Id` header, stable across retries and resends.',
    }),
    endpoint_id: Type.String(),
    event_id: Type.String(),
    event_type: Type.String(),
    status: deliveryStatus,
    attempts: Type.Array(ref(WebhookAttempt)),
    next_attempt_at: Type.Union([Timestamp, Type.Null()]),
    livemode: Type.Boolean(),
    created: Timestamp,
    updated: Timestamp,
  },
  {
    $id: 'WebhookDelivery',
    additionalProperties: false,
    description: 'One event sent to one endpoint, with every attempt; its id is the X-Service-Id header.',
  },
)
export type WebhookDelivery = Static<typeof WebhookDelivery>

export const ListDeliveriesQuery = Type.Object(
  {
    ...paginationQuery,
    endpoint_id: Type.Optional(Type.String({ maxLength: 64 })),
    event_id: Type.Optional(Type.String({ maxLength: 64 })),
    status: Type.Optional(deliveryStatus),
    created_from: Type.Optional(
      Type.String({ maxLength: 64, description: 'Deliveries created at or after this instant.' }),
    ),
    created_to: Type.Optional(
      Type.String({ maxLength: 64, description: 'Deliveries created before this instant.' }),
    ),
  },
  { additionalProperties: false },
)
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>

export const RecoverBody = Type.Object(
  {
    since: Type.String({
      maxLength: 64,
      description: 'Start of the window (an instant, at most 14 days ago).',
    }),
    until: Type.Optional(
      Type.String({ maxLength: 64, description: 'End of the window, exclusive (an instant); default now.' }),
    ),
  },
  { additionalProperties: false },
)
export type RecoverBody = Static<typeof RecoverBody>

export const WebhookRecovery = Type.Object(
  {
    object: Type.Literal('webhook_recovery'),
    endpoint_id: Type.String(),
    since: Timestamp,
    until: Timestamp,
    recovered: Type.Integer({
      minimum: 0,
      description: 'Failed deliveries put back to pending, same `whd_` ids, for a new round of attempts.',
    }),
    created: Type.Integer({
      minimum: 0,
      description: 'Deliveries created for events of the window that the endpoint never had one of.',
    }),
  },
  {
    $id: 'WebhookRecovery',
    additionalProperties: false,
    description: "What a recover did to an endpoint's deliveries of a window.",
  },
)
export type WebhookRecovery = Static<typeof WebhookRecovery>

export const DeletedWebhookEndpoint = deletedObject('webhook_endpoint', 'DeletedWebhookEndpoint')

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  DeletedWebhookEndpoint,
  WebhookAttempt,
  WebhookDelivery,
  WebhookRecovery,
]
