import { type Static, Type } from 'typebox'
import { deletedObject, nullableString, paginationQuery, Timestamp } from '../../core/schemas.js'

const name = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'Not unique: two locations may share a name.',
})
const timezone = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'IANA time zone, e.g. Europe/Paris.',
})
const address = nullableString({ maxLength: 500 })
/** RFC 5646 asks implementations to take tags of at least 35 characters; extensions make them longer. */
const locale = Type.String({
  minLength: 1,
  maxLength: 64,
  description:
    'BCP 47 language tag the kiosk formats times and dates with, e.g. fr-FR or en-US (stored canonical: fr-fr becomes fr-FR). Default en-GB.',
})

export const Location = Type.Object(
  {
    object: Type.Literal('location'),
    id: Type.String({ description: 'Prefix `loc_`.' }),
    name: Type.String(),
    timezone: Type.String(),
    locale: Type.String({ description: 'BCP 47 language tag, canonical, e.g. fr-FR.' }),
    address: Type.Union([Type.String(), Type.Null()]),
    livemode: Type.Boolean(),
    created: Timestamp,
    updated: Timestamp,
  },
  { $id: 'Location', additionalProperties: false, description: 'A place where devices stand.' },
)
export type Location = Static<typeof Location>

export const CreateLocationBody = Type.Object(
  {
    name,
    timezone: Type.Optional(timezone),
    locale: Type.Optional(locale),
    address: Type.Optional(address),
  },
  { additionalProperties: false },
)
export type CreateLocationBody = Static<typeof CreateLocationBody>

export const UpdateLocationBody = Type.Object(
  {
    name: Type.Optional(name),
    timezone: Type.Optional(timezone),
    locale: Type.Optional(locale),
    address: Type.Optional(address),
  },
  { additionalProperties: false },
)
export type UpdateLocationBody = Static<typeof UpdateLocationBody>

export const ListLocationsQuery = Type.Object(
  { ...paginationQuery, name: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
)
export type ListLocationsQuery = Static<typeof ListLocationsQuery>

export const DeletedLocation = deletedObject('location', 'DeletedLocation')

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [Location, DeletedLocation]
