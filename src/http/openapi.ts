import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { type TSchema, Type } from 'typebox'
import * as actors from '../modules/actors/schemas.js'
import * as auth from '../modules/auth/schemas.js'
import * as devices from '../modules/devices/schemas.js'
import * as events from '../modules/events/schemas.js'
import { API_VERSION, EVENT_TYPES_BY_RESOURCE, type EventResource } from '../modules/events/types.js'
import * as keys from '../modules/keys/schemas.js'
import * as locations from '../modules/locations/schemas.js'
import * as operators from '../modules/operators/schemas.js'
import * as payPeriods from '../modules/pay-periods/schemas.js'
import * as payRules from '../modules/pay-rules/schemas.js'
import * as scans from '../modules/scans/schemas.js'
import * as sessions from '../modules/sessions/schemas.js'
import * as timesheets from '../modules/timesheets/schemas.js'
import * as users from '../modules/users/schemas.js'
import { RESPONSE_EXCERPT_BYTES } from '../modules/webhooks/attempt.js'
import {
  FIRST_RETRY_DELAY_MS,
  GONE_STATUS,
  LAST_RETRY_DELAY_MS,
  MAX_SCHEDULED_ATTEMPTS,
  RETRY_AFTER_STATUSES,
} from '../modules/webhooks/policy.js'
import * as webhooks from '../modules/webhooks/schemas.js'
import { ENDPOINT_DISABLED_EVENT_TYPE, TEST_EVENT_TYPE } from '../modules/webhooks/subscription.js'
import { ERROR_RESPONSES, ErrorEnvelope, errorResponses, shapeErrorStatuses } from './schemas.js'

declare module 'fastify' {
  interface FastifySchema {
    /**
     * The route is a POST that runs through `app.creates.run`: the document gives it the optional
     * `Idempotency-Key` parameter, the `Idempotent-Replayed` response header and the 409 of a key
     * conflict. (An `x-` key, so it would be a valid OpenAPI extension; the transform removes it.)
     */
    'x-idempotent'?: true
  }
}

/**
 * The modules that declare named schemas. Each lists its own in its `schemas.ts`
 * (`COMPONENT_SCHEMAS`), so a new resource means no edit here; test/openapi.test.ts fails on a
 * schema with a `$id` that a module exports but the document lacks.
 */
const MODULE_SCHEMAS: Array<{ COMPONENT_SCHEMAS: TSchema[] }> = [
  operators,
  locations,
  devices,
  sessions,
  scans,
  payPeriods,
  payRules,
  timesheets,
  events,
  webhooks,
  keys,
  actors,
  auth,
  users,
]

/** Every named schema, registered once; the document lists them under `components.schemas`. */
export const COMPONENT_SCHEMAS: TSchema[] = [
  ErrorEnvelope,
  ...MODULE_SCHEMAS.flatMap((module) => module.COMPONENT_SCHEMAS),
]

/** `data.object` of each event type, by the resource its type starts with. */
const EVENT_OBJECTS: Record<EventResource | 'webhook_endpoint', TSchema> = {
  session: sessions.Session,
  operator: operators.Operator,
  device: devices.Device,
  location: locations.Location,
  scan: scans.Scan,
  pay_period: payPeriods.PayPeriod,
  pay_rule: payRules.PayRule,
  webhook_endpoint: webhooks.WebhookEndpoint,
}

const TAGS = [
  { name: 'Operators', description: 'Workers: created, renamed, relinked, deactivated and reactivated.' },
  { name: 'Locations', description: 'Places; names are not unique.' },
  { name: 'Devices', description: 'Scanning terminals, known by their code (`device_id` in requests).' },
  {
    name: 'Sessions',
    description: 'Attendance records. Sessions created or edited through the API are flagged for review.',
  },
  { name: 'Scans', description: 'Badge scans at devices: each checks an operator in or out, or is flagged.' },
  {
    name: 'Pay periods',
    description:
      'Ranges of work dates that payroll closes once every session in them is reviewed; a closed period freezes its sessions.',
  },
  {
    name: 'Pay rules',
    description:
      'How timesheets round check-ins and check-outs, deduct required breaks and split overtime; an operator has its own rule, else the default.',
  },
  {
    name: 'Timesheets',
    description: 'Hours per operator and work date (or week), by review status, as JSON or CSV for payroll.',
  },
  { name: 'Events', description: 'Everything that happened, newest first; what webhooks deliver.' },
  {
    name: 'Webhooks',
    description:
      'Endpoints that receive signed events, and the delivery log. The events themselves are under `webhooks`.',
  },
  { name: 'Account', description: 'The account and mode the calling key works in.' },
  {
    name: 'Auth',
    description:
      "People's sign-in: the session cookie (no key), passwords and their reset, accepting an invitation.",
  },
  {
    name: 'API keys',
    description:
      "The account's keys for integrations, made and revoked by its owners (never a secret but once).",
  },
  {
    name: 'Users',
    description:
      'The people of the account (their memberships): invited, changed, deactivated and reactivated by its owners.',
  },
  { name: 'Audit log', description: 'Who did what to people and keys; owners read it.' },
  { name: 'Meta', description: 'This document.' },
]

const DESCRIPTION = `Records worker attendance: operators check in and out at devices (scans), which makes sessions; sessions can also be created and edited through the API to backfill history. Changes are pushed as signed webhook events.

**Authentication.** Every \`/v1\` request carries \`Authorization: Bearer <API key>\` (\`sk_test_…\` or \`sk_live_…\`). A missing, invalid, revoked or expired key gets 401 \`authentication_error\`; a key without the route's scope (\`<resource>:read\` or \`<resource>:write\`; write implies read; approving and rejecting sessions, and closing and reopening pay periods, also need \`sessions:approve\`, which no other scope implies) gets 403 \`insufficient_scope\`. Only this document (and the \`/docs\` reference) is public.

**Modes.** A key works in test mode or live mode. Test objects and live objects are separate: a key sees only its own account's objects of its own mode (other objects answer 404), and a body that references an object of the other mode gets 422 \`cross_mode_reference\`. Every object carries \`livemode\`.

**Errors.** Every error answer is the \`ErrorEnvelope\`: \`error.type\` (\`bad_request\`, \`authentication_error\`, \`insufficient_scope\`, \`not_found\`, \`conflict\`, \`validation_error\`, \`rate_limited\`, \`api_error\`), \`error.message\`, \`error.request_id\` (equal to the \`X-Request-Id\` header of every answer), and when applicable \`error.code\` and \`error.param\`. A method a path does not have answers 405 with \`Allow\`; an unknown path 404 \`route_not_found\`.

**Pagination.** Lists answer \`{object: "list", data, has_more, next_cursor}\`, newest first. Pass \`limit\` (1 to 200, default 50) and the previous page's \`next_cursor\` as \`cursor\`, verbatim, while \`has_more\` is true. A malformed cursor, or one of another list, gets 400 \`invalid_cursor\`.

**Idempotency.** POSTs that create something (and rotate-secret, send-test) accept an \`Idempotency-Key\` header (1 to 255 characters). Replaying the same key with the same method, path and body within 24 hours returns the stored answer with \`Idempotent-Replayed: true\` and creates nothing; the same key with another request gets 409 \`idempotency_key_reuse\`, and one still being processed 409 \`idempotency_key_in_use\`.

**Rate limits.** Per key (per client address without a valid key). Answers carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`; over the limit: 429 \`rate_limited\` with \`Retry-After\` in seconds.

**Versioning.** Paths start with \`/v1\`; events carry \`api_version\` (${API_VERSION}).`

const schemaRef = (schema: TSchema) => ({ $ref: `#/components/schemas/${(schema as { $id: string }).$id}` })
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` })
const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` })

const HEADERS = {
  'X-Request-Id': {
    description: 'The request id (`req_…`), also in an error body as `request_id`.',
    required: true,
    schema: { type: 'string', pattern: '^req_' },
  },
  'X-RateLimit-Limit': {
    description: 'Requests allowed per window for this key.',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the current window ends.',
    schema: { type: 'integer' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer' },
  },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', const: 'true' },
  },
  Allow: { description: 'The methods of this path.', required: true, schema: { type: 'string' } },
}

/** The headers every answer carries (the rate-limit ones unless the counter store is unreachable). */
const COMMON_HEADERS = ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']

const PARAMETERS = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes the request safe to retry: the same key with the same request within 24 hours replays the first answer. 1 to 255 characters (otherwise 422, param `Idempotency-Key`).',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  },
  XServiceSignature: {
    name: 'X-Service-Signature',
    in: 'header',
    required: true,
    description:
      '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by the signing secret>`; during a secret rotation a second `v1=` signed with the previous secret. Accept when any `v1` matches (constant-time compare) and `t` is within 5 minutes.',
    schema: { type: 'string', pattern: '^t=\\d+(,v1=[0-9a-f]{64})+$' },
  },
  XServiceId: {
    name: 'X-Service-Id',
    in: 'header',
    required: true,
    description:
      'The delivery id (`whd_…`), stable across retries and resends: de-duplicate on it or on the body `id`.',
    schema: { type: 'string', pattern: '^whd_' },
  },
  XServiceEvent: {
    name: 'X-Service-Event',
    in: 'header',
    required: true,
    description: 'The event type, equal to the body `type`.',
    schema: { type: 'string' },
  },
}

/** One shared response per error status: the envelope, its meaning and its headers. */
function errorComponents() {
  return Object.fromEntries(
    Object.entries(ERROR_RESPONSES).map(([status, { name, description }]) => {
      const extra =
        status === '429'
          ? ['Retry-After']
          : status === '405'
            ? ['Allow']
            : status === '404' || status === '409'
              ? ['Idempotent-Replayed']
              : []
      const headers = Object.fromEntries([...COMMON_HEADERS, ...extra].map((h) => [h, headerRef(h)]))
      return [
        name,
        { description, headers, content: { 'application/json': { schema: schemaRef(ErrorEnvelope) } } },
      ]
    }),
  )
}

/** A delay of the retry policy in words: whole hours, else whole minutes (both ends of the schedule are). */
function inWords(ms: number): string {
  const [count, unit] = ms % 3_600_000 === 0 ? [ms / 3_600_000, 'hour'] : [ms / 60_000, 'minute']
  return `${count} ${unit}${count === 1 ? '' : 's'}`
}

/** What a receiver's answer does to a delivery, in the numbers of the retry policy. */
const RECEIVER_RESPONSES = {
  '2XX': {
    description: `Received: any 2xx ends the delivery as succeeded. The body is ignored (its first ${RESPONSE_EXCERPT_BYTES / 1024} KiB are kept in the delivery log).`,
  },
  [GONE_STATUS]: {
    description: 'Gone: the delivery fails at once and is never retried.',
  },
  default: {
    description: `Any other status, a redirect, a timeout or a connection error is a failed attempt: retried with exponential backoff (about ${inWords(FIRST_RETRY_DELAY_MS)} up to ${inWords(LAST_RETRY_DELAY_MS)}, at most ${MAX_SCHEDULED_ATTEMPTS} attempts; a longer \`Retry-After\` on ${RETRY_AFTER_STATUSES.join(' or ')} is honoured). Endpoints that keep failing are disabled automatically; re-enable with PATCH \`{"status": "enabled"}\`.`,
  },
}

/**
 * One `webhooks` entry per event type, generated from EVENT_TYPES_BY_RESOURCE plus the send-test
 * type: the envelope (the `Event` component) narrowed to the type's literal and its resource.
 */
function webhookDocuments() {
  const types: string[] = [...Object.values(EVENT_TYPES_BY_RESOURCE).flat(), TEST_EVENT_TYPE]
  return Object.fromEntries(
    types.map((type) => {
      const resource = type.slice(0, type.indexOf('.')) as keyof typeof EVENT_OBJECTS
      const object = EVENT_OBJECTS[resource]
      const about =
        type === TEST_EVENT_TYPE
          ? 'Sent only by `POST /v1/webhook-endpoints/{id}/send-test`, to that endpoint alone; `data.object` is the endpoint.'
          : `Sent to every enabled endpoint whose \`enabled_events\` match \`${type}\` (exactly, as \`${resource}.*\`, or \`*\`) and that existed when it happened; \`data.object\` is the ${resource} after the change.${type === ENDPOINT_DISABLED_EVENT_TYPE ? ' Emitted once when the service auto-disables an endpoint (without its secret); never sent to that endpoint.' : ''}`
      return [
        type,
        {
          post: {
            tags: ['Webhooks'],
            summary: `The ${type} event`,
            description: `${about} Signed with the endpoint's signing secret (see \`X-Service-Signature\`). A delivery may arrive more than once.`,
            security: [],
            parameters: [
              parameterRef('XServiceSignature'),
              parameterRef('XServiceId'),
              parameterRef('XServiceEvent'),
            ],
            requestBody: {
              required: true,
              description: `The event envelope, with \`type\` \`${type}\`.`,
              content: {
                'application/json': {
                  schema: {
                    allOf: [
                      schemaRef(events.Event),
                      {
                        type: 'object',
                        required: ['type', 'data'],
                        properties: {
                          type: { const: type },
                          data: {
                            type: 'object',
                            required: ['object'],
                            properties: { object: schemaRef(object) },
                          },
                        },
                      },
                    ],
                  },
                },
              },
            },
            responses: RECEIVER_RESPONSES,
          },
        },
      ]
    }),
  )
}

interface ResponseObject {
  $ref?: string
  description?: string
  headers?: Record<string, unknown>
  content?: Record<string, { schema?: { $ref?: string } }>
}
interface Operation {
  parameters?: unknown[]
  responses?: Record<string, ResponseObject>
  'x-idempotent'?: true
}

/**
 * What @fastify/swagger cannot express from route schemas: error responses become references to
 * the shared ones, every response lists its headers by reference, idempotent POSTs get the
 * Idempotency-Key parameter, and the `webhooks` (plain OpenAPI objects that reference the
 * components directly) are added.
 */
function finishDocument(document: Record<string, unknown>): Record<string, unknown> {
  const envelopeRef = schemaRef(ErrorEnvelope).$ref
  const paths = (document.paths ?? {}) as Record<string, Record<string, Operation>>
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const idempotent = operation['x-idempotent'] === true
      delete operation['x-idempotent']
      if (idempotent) operation.parameters = [...(operation.parameters ?? []), parameterRef('IdempotencyKey')]
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const shared = ERROR_RESPONSES[Number(status)]
        if (shared && response.content?.['application/json']?.schema?.$ref === envelopeRef) {
          ;(operation.responses as Record<string, ResponseObject>)[status] = {
            $ref: `#/components/responses/${shared.name}`,
          }
          continue
        }
        const names = [...COMMON_HEADERS, ...(idempotent ? ['Idempotent-Replayed'] : [])]
        response.headers = { ...response.headers, ...Object.fromEntries(names.map((h) => [h, headerRef(h)])) }
      }
    }
  }
  const components = (document.components ?? {}) as Record<string, unknown>
  document.components = {
    ...components,
    responses: errorComponents(),
    parameters: PARAMETERS,
    headers: HEADERS,
  }
  document.webhooks = webhookDocuments()
  return document
}

/**
 * The API contract: named schemas, the OpenAPI 3.1 document at GET /v1/openapi.json and the
 * interactive reference at /docs. Registered before the routes (@fastify/swagger collects routes
 * as they are added).
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  for (const schema of COMPONENT_SCHEMAS) app.addSchema(schema)

  // Completes every documented /v1 route's responses with the errors its shape can give, so the
  // serializer, the document and the answers agree without each route listing them.
  app.addHook('onRoute', (route) => {
    const schema = route.schema
    if (!schema || schema.hide || !route.url.startsWith('/v1/')) return
    const statuses = shapeErrorStatuses({
      method: route.method,
      url: route.url,
      isPublic: route.config?.public === true,
    })
    if (schema['x-idempotent']) statuses.push(409)
    schema.response = { ...errorResponses(...statuses), ...(schema.response as object | undefined) }
  })

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Workforce Attendance API', version: API_VERSION, description: DESCRIPTION },
      tags: TAGS,
      // Relative: the document is served by the API it describes, whatever host that is.
      servers: [{ url: '/', description: 'The service that serves this document.' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key: `Authorization: Bearer sk_test_…` (test mode) or `sk_live_…` (live mode).',
          },
          cookieAuth: {
            type: 'apiKey',
            in: 'cookie',
            name: 'att_session',
            description:
              "A signed-in person's session cookie (`POST /v1/auth/sign-in`; `__Host-att_session` when the service is served over https), with the headers `Attendance-Mode` (`test` or `live`), `Attendance-Account` (when the person has several accounts) and, on every POST, PATCH or DELETE, `X-CSRF-Token`. A request with a key is judged by the key.",
          },
        },
      },
      // Either one: a key, or a signed-in person's cookie.
      security: [{ bearerAuth: [] }, { cookieAuth: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (documentObject) =>
      'openapiObject' in documentObject
        ? finishDocument(documentObject.openapiObject as Record<string, unknown>)
        : documentObject.swaggerObject,
  })

  app.get(
    '/v1/openapi.json',
    {
      config: { public: true },
      schema: {
        tags: ['Meta'],
        summary: 'This OpenAPI 3.1 document (no key needed)',
        security: [],
        response: {
          200: Type.Unsafe<Record<string, unknown>>({
            type: 'object',
            additionalProperties: true,
            description: 'The OpenAPI 3.1 document of this API.',
          }),
        },
      },
    },
    async () => app.swagger(),
  )

  // Static files come from the package itself (no network). Outside /v1/, so public by design.
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } })
}
