import { type TSchema, Type } from 'typebox'
import { ERROR_CODES, ERROR_TYPES, type ErrorCode } from '../core/errors.js'

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object(
      {
        type: Type.Union(Object.keys(ERROR_TYPES).map((t) => Type.Literal(t))),
        message: Type.String(),
        request_id: Type.String({ description: 'Prefix `req_`; equals the X-Request-Id response header.' }),
        code: Type.Optional(
          Type.Unsafe<ErrorCode>({
            type: 'string',
            enum: Object.keys(ERROR_CODES),
            description: 'Machine-readable code, when applicable.',
          }),
        ),
        param: Type.Optional(Type.String({ description: 'The offending parameter, when applicable.' })),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'ErrorEnvelope', additionalProperties: false, description: 'Every error answer has this body.' },
)

/** The codes an error status can carry, from the table in `core/errors.ts`. */
function codesOf(status: number): string {
  const codes = Object.entries(ERROR_CODES)
    .filter(([, spec]) => spec.status === status)
    .map(([code]) => `\`${code}\``)
  return codes.length === 0 ? '' : ` Codes: ${codes.join(', ')}.`
}

const STATUS_MEANINGS: Record<number, { name: string; meaning: string }> = {
  400: {
    name: 'BadRequest',
    meaning: 'Malformed request: bad JSON, a body that is not an object, a bad cursor.',
  },
  401: {
    name: 'Unauthorized',
    meaning: 'Missing, invalid, revoked or expired key (`authentication_error`).',
  },
  403: { name: 'Forbidden', meaning: 'The key lacks the scope of this route (`insufficient_scope`).' },
  404: { name: 'NotFound', meaning: 'No such resource in this account and mode, or no such route.' },
  405: {
    name: 'MethodNotAllowed',
    meaning: 'The path exists but not with this method; `Allow` lists its methods.',
  },
  409: {
    name: 'Conflict',
    meaning:
      'A uniqueness conflict, a session overlapping another of its operator, a disabled webhook endpoint, or an Idempotency-Key reused with another request or still in flight.',
  },
  413: { name: 'PayloadTooLarge', meaning: 'Body larger than 1 MiB.' },
  415: { name: 'UnsupportedMediaType', meaning: 'A body whose Content-Type is not application/json.' },
  422: {
    name: 'ValidationError',
    meaning:
      'A parameter failed validation (`validation_error`; `code` and `param` say which and why), including a reference that does not resolve.',
  },
  429: { name: 'RateLimited', meaning: 'Too many requests for this key; retry after `Retry-After` seconds.' },
  500: {
    name: 'InternalError',
    meaning: 'Server-side failure (`api_error`); quote `request_id` when reporting it.',
  },
  503: {
    name: 'ServiceUnavailable',
    meaning:
      'The database did not answer in time (`api_error`); nothing is wrong with the request: retry it later (a create with its `Idempotency-Key`).',
  },
}

/** What each error status means, with its codes; the document's shared error responses carry these texts. */
export const ERROR_RESPONSES: Record<number, { name: string; description: string }> = Object.fromEntries(
  Object.entries(STATUS_MEANINGS).map(([status, { name, meaning }]) => [
    status,
    { name, description: `${meaning}${codesOf(Number(status))}` },
  ]),
)

/** An error response for the route's `response` map: the serializer and the document both use it. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(
    [...new Set(statuses)]
      .sort((a, b) => a - b)
      .map((s) => [
        s,
        Type.Unsafe<unknown>({ $ref: 'ErrorEnvelope#', description: ERROR_RESPONSES[s]?.description }),
      ]),
  )
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * The error statuses a route can answer because of its shape, whatever its handler does: every
 * route can get a malformed request (400), a NUL character in its query string (422), the rate
 * limit (429), a failure (500) and a database that does not answer in time (503); a keyed route
 * 401, 403 and 404 (an account not the signed-in person's); a route with an `{id}` 404; a method
 * that reads a body 413 and 415. An onRoute hook
 * (see `http/openapi.ts`) adds them to every documented route, so no route can forget one; routes
 * declare only their own (e.g. 409).
 */
export function shapeErrorStatuses(route: { method: string | string[]; url: string; isPublic: boolean }) {
  const statuses = [400, 422, 429, 500, 503]
  if (!route.isPublic) statuses.push(401, 403)
  // An {id} missing; and on any keyed route, a signed-in person's Attendance-Account not theirs.
  if (!route.isPublic || route.url.includes('/:')) statuses.push(404)
  if ([route.method].flat().some((m) => BODY_METHODS.has(m))) statuses.push(413, 415)
  return statuses.sort((a, b) => a - b)
}
