import { type TSchema, Type } from 'typebox'
import { ERROR_TYPES } from './errors.js'

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object(
      {
        type: Type.Union(Object.keys(ERROR_TYPES).map((t) => Type.Literal(t))),
        message: Type.String(),
        request_id: Type.String({ description: 'Equals the X-Request-Id response header.' }),
        code: Type.Optional(Type.String()),
        param: Type.Optional(Type.String()),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'ErrorEnvelope', additionalProperties: false },
)

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed request (bad JSON, bad cursor).',
  401: 'Missing, invalid, revoked or expired key.',
  403: 'The key lacks the scope of this route.',
  404: 'No such resource.',
  405: 'Method not allowed on this path.',
  409: 'Uniqueness or idempotency conflict.',
  413: 'Body larger than 1 MiB.',
  415: 'Content-Type is not application/json.',
  422: 'A field failed validation.',
  429: 'Too many requests; see Retry-After.',
  500: 'Server-side failure.',
}

const errorResponse = (status: number) =>
  Type.Unsafe<unknown>({ $ref: 'ErrorEnvelope#', description: ERROR_DESCRIPTIONS[status] })

/** The error responses every authenticated route can give, plus the route's own. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const all = [400, 401, 403, 429, 500, ...statuses]
  return Object.fromEntries([...new Set(all)].sort().map((s) => [s, errorResponse(s)]))
}

/** A string that may be null (JSON Schema type array, valid OpenAPI 3.1). */
export function nullableString(options: { maxLength: number; minLength?: number; description?: string }) {
  return Type.Unsafe<string | null>({ type: ['string', 'null'], ...options })
}

export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) })

export const Timestamp = Type.String({ format: 'date-time', description: 'UTC, ISO-8601 with milliseconds.' })

/** The answer of a DELETE that removes an object. */
export function deletedObject(kind: string) {
  return Type.Object(
    { object: Type.Literal(kind), id: Type.String(), deleted: Type.Literal(true) },
    { additionalProperties: false },
  )
}
