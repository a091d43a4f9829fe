import { type Static, Type } from 'typebox'
import { deletedObject, nullableString, paginationQuery, ref, Timestamp } from '../../core/schemas.js'
import { Location } from '../locations/schemas.js'

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
    paired: Type.Boolean({ description: 'It holds a device key (pairing makes one; unpairing revokes it).' }),
    last_seen_at: Type.Union([Timestamp, Type.Null()], {
      description: "The last request of the device's key, to the minute; null: never seen.",
    }),
    require_pin: Type.Boolean({ description: "Scans at this device need the operator's PIN." }),
    livemode: Type.Boolean(),
    created: Timestamp,
    updated: Timestamp,
  },
  { $id: 'Device', additionalProperties: false, description: 'A scanning terminal, known by its code.' },
)
export type Device = Static<typeof Device>

const requirePin = Type.Boolean({
  description: "Scans at this device need the operator's PIN (default false).",
})

export const CreateDeviceBody = Type.Object(
  {
    code,
    name: Type.Optional(name),
    location_id: Type.Optional(locationId),
    require_pin: Type.Optional(requirePin),
  },
  { additionalProperties: false },
)
export type CreateDeviceBody = Static<typeof CreateDeviceBody>

export const UpdateDeviceBody = Type.Object(
  {
    name: Type.Optional(name),
    location_id: Type.Optional(locationId),
    require_pin: Type.Optional(
      Type.Boolean({ description: "Scans at this device need the operator's PIN." }),
    ),
  },
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

export const DevicePairingCode = Type.Object(
  {
    object: Type.Literal('device_pairing_code'),
    code: Type.String({
      description:
        'Eight characters without 0, O, 1 or I, shown as `XXXX-XXXX`; single use, valid 10 minutes. A new code voids the earlier unused ones.',
    }),
    device_id: Type.String({ description: "The device's code." }),
    expires_at: Timestamp,
    livemode: Type.Boolean(),
  },
  { $id: 'DevicePairingCode', additionalProperties: false, description: 'A code that pairs a device once.' },
)
export type DevicePairingCode = Static<typeof DevicePairingCode>

export const CreateDevicePairingBody = Type.Object(
  { code: Type.String({ maxLength: 64, description: 'The pairing code; the dash is optional.' }) },
  { additionalProperties: false },
)
export type CreateDevicePairingBody = Static<typeof CreateDevicePairingBody>

export const DevicePairing = Type.Object(
  {
    object: Type.Literal('device_pairing'),
    device: ref(Device),
    key: Type.Object(
      {
        id: Type.String({ description: 'Prefix `key_`.' }),
        secret: Type.String({ description: '`dk_test_…` or `dk_live_…`, shown this once.' }),
        livemode: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
  },
  {
    $id: 'DevicePairing',
    additionalProperties: false,
    description: "A paired device and its key (the device's previous key is revoked).",
  },
)
export type DevicePairing = Static<typeof DevicePairing>

/** The public half of the account's PIN key, as a JWK. */
const PinKey = Type.Object(
  {
    kty: Type.Literal('RSA'),
    n: Type.String(),
    e: Type.String(),
    alg: Type.Literal('RSA-OAEP-256'),
    use: Type.Literal('enc'),
    kid: Type.String(),
  },
  {
    additionalProperties: false,
    description:
      'Encrypt a PIN captured offline to this key: RSA-OAEP with SHA-256 over its UTF-8 bytes, sent as `pin_ciphertext` (base64url, no padding).',
  },
)
export type PinKey = Static<typeof PinKey>

export const CurrentDevice = Type.Object(
  {
    object: Type.Literal('current_device'),
    device: ref(Device),
    location: Type.Union([ref(Location), Type.Null()]),
    server_time: Type.String({ format: 'date-time', description: "The service's clock." }),
    require_pin: Type.Boolean(),
    pin_key: PinKey,
  },
  {
    $id: 'CurrentDevice',
    additionalProperties: false,
    description: 'What a device key learns of its own device.',
  },
)
export type CurrentDevice = Static<typeof CurrentDevice>

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [Device, DeletedDevice, DevicePairingCode, DevicePairing, CurrentDevice]
