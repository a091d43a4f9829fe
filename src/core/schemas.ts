import { type Static, type TSchema, type TUnsafe, Type } from 'typebox'

/**
 * Named schemas. A response object schema is declared once, in its module's `schemas.ts`, with a
 * `$id`; `http/openapi.ts` registers it once with `app.addSchema`, and routes and other schemas
 * point at it with `ref(...)`. The serializer resolves the reference (and still drops unknown
 * fields: every object schema has `additionalProperties: false`), the OpenAPI document shows it as
 * `#/components/schemas/<$id>`, and TypeScript sees the referenced schema's static type.
 */
export function ref<T extends TSchema>(schema: T, description?: string): TUnsafe<Static<T>> {
  const id = (schema as { $id?: unknown }).$id
  if (typeof id !== 'string') throw new Error('ref() needs a schema with an $id')
  return Type.Unsafe<Static<T>>({ $ref: `${id}#`, ...(description === undefined ? {} : { description }) })
}

/** A string that may be null (JSON Schema type array, valid OpenAPI 3.1). */
export function nullableString(options: { maxLength: number; minLength?: number; description?: string }) {
  return Type.Unsafe<string | null>({ type: ['string', 'null'], ...options })
}

export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) })

export const Timestamp = Type.String({ format: 'date-time', description: 'UTC, ISO-8601 with milliseconds.' })

/** A calendar date, `YYYY-MM-DD` (a real date: 2026-02-30 is refused). */
export const CalendarDate = (description: string) =>
  Type.String({ format: 'date', maxLength: 10, description: `${description} YYYY-MM-DD.` })

/** The answer of a DELETE that removes an object; `$id` names it in the document (`DeletedDevice`). */
export function deletedObject<Kind extends string>(kind: Kind, $id: string) {
  return Type.Object(
    { object: Type.Literal(kind), id: Type.String(), deleted: Type.Literal(true) },
    { $id, additionalProperties: false, description: `The answer of deleting a ${kind}.` },
  )
}

export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 200

/** Query parameters every list accepts; spread into a route's querystring schema. */
export const paginationQuery = {
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_LIMIT,
      default: DEFAULT_LIMIT,
      description: 'Page size, 1 to 200.',
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      maxLength: 512,
      description: 'The `next_cursor` of the previous page, passed back verbatim.',
    }),
  ),
}

/** The list envelope of every list route; `item` is a `ref(...)` to the resource's named schema. */
export function listEnvelope<T extends TSchema>(item: T, description = 'A page of the list, newest first.') {
  return Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item),
      has_more: Type.Boolean({ description: '`true` when further pages exist.' }),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass as `cursor` for the next page; `null` when `has_more` is `false`.',
      }),
    },
    { additionalProperties: false, description },
  )
}
