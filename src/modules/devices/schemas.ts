import { type Static, Type } from 'typebox'
import { deletedObject, nullableString, paginationQuery, Timestamp } from '../../core/schemas.js'

const code = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^\\S(.*\\S)?$',
  description: 'Unique per account and mode; what `device_id` means in session and scan requests.',
})
const name = nullableString({ maxLength: 200 })
const locationId = nullableString({ maxLength: 64, description: 'The location the device stands at.' })

export const Device = Type.Object(
  {
    object: Type.Literal('device'),
    id: Type.String({ description: 'Prefix `dev_`.' }),
    code: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    location_id: Type.Union([Type.String(), Type.Null()]),
    livemode: Type.Boolean(),
    created: Timestamp,
    updated: Timestamp,
  },
  { $id: 'Device', additionalProperties: false, description: 'A scanning terminal, known by its code.' },
)
export type Device = Static<typeof Device>

export const CreateDeviceBody = Type.Object(
  { code, name: Type.Optional(name), location_id: Type.Optional(locationId) },
  { additionalProperties: false },
)
export type CreateDeviceBody = Static<typeof CreateDeviceBody>

export const UpdateDeviceBody = Type.Object(
  { name: Type.Optional(name), location_id: Type.Optional(locationId) },
  { additionalProperties: false },
)
export type UpdateDeviceBody = Static<typeof UpdateDeviceBody>

export const ListDevicesQuery = Type.Object(
  {
    ...paginationQuery,
    code: Type.Optional(Type.String({ maxLength: 64 })),
    location_id: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
)
export type ListDevicesQuery = Static<typeof ListDevicesQuery>

export const DeletedDevice = deletedObject('device', 'DeletedDevice')

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [Device, DeletedDevice]
