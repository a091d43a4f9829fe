import { randomInt } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { toFlag } from '../../db/schema.js'
import { type Owner, ownedBy } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import { changedFields } from '../../lib/changes.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { toIso } from '../../lib/time.js'
import { recordEvent } from '../events/outbox.js'
import { createDeviceKey, hashSecret, revokeDeviceKeys } from '../keys/service.js'
import { placedAt, retrieveLocation } from '../locations/service.js'
import { resolveReference } from '../shared/references.js'
import {
  atSeenLocations,
  createResource,
  listService,
  lockResource,
  type ResourceStore,
  retrieveResource,
  updateResource,
} from '../shared/resources.js'
import { type DeviceWithZone, findDevicesWithZone } from './device-zone-read-model.js'
import { pinPublicKey } from './pin-key.js'
import {
  type DeviceRow,
  deleteDeviceRow,
  deletePairingCodes,
  detachDevicesFromLocation,
  findDevice,
  findDeviceCodes,
  findDevicesByCode,
  insertDevice,
  insertPairingCode,
  listDeviceRows,
  takePairingCode,
  toDevice,
  touchDeviceSeen,
  updateDeviceRow,
} from './repository.js'
import type {
  CreateDeviceBody,
  CurrentDevice,
  Device,
  DevicePairing,
  DevicePairingCode,
  UpdateDeviceBody,
} from './schemas.js'

export { decryptPin } from './pin-key.js'

export type { DeviceRow, DeviceWithZone }

const devices: ResourceStore<DeviceRow, Device> = {
  name: 'device',
  prefix: 'dev',
  // To a principal held to sites, a device elsewhere (or standing nowhere) does not exist.
  find: atSeenLocations(findDevice, (row) => row.location_id),
  insert: insertDevice,
  write: updateDeviceRow,
  toApi: toDevice,
  duplicate: (row) => errors.duplicateDeviceCode(row.code),
}

export async function createDevice(trx: Trx, auth: AuthContext, input: CreateDeviceBody): Promise<Device> {
  const fields = {
    code: input.code,
    name: input.name ?? null,
    location_id: (await placedAt(trx, auth, 'location_id', input.location_id, true)) ?? null,
    paired: 0 as const,
    last_seen_at: null,
    require_pin: toFlag(input.require_pin ?? false),
  }
  return createResource(trx, auth, devices, fields, 'device.created')
}

export function retrieveDevice(db: Executor, auth: AuthContext, id: string): Promise<Device> {
  return retrieveResource(db, auth, devices, id)
}

export const listDevices = listService(listDeviceRows, toDevice)

export function updateDevice(
  trx: Trx,
  auth: AuthContext,
  id: string,
  input: UpdateDeviceBody,
): Promise<Device> {
  return updateResource(trx, auth, devices, id, {
    changes: async (current) =>
      changedFields(current, {
        name: input.name,
        location_id: await placedAt(trx, auth, 'location_id', input.location_id, false),
        require_pin: input.require_pin === undefined ? undefined : toFlag(input.require_pin),
      }),
    event: 'device.updated',
  })
}

/** Removes the device. Sessions keep its code, so every session that referred to it stays readable. */
export async function deleteDevice(trx: Trx, auth: AuthContext, id: string) {
  const current = await lockResource(trx, auth, devices, id)
  await revokeDeviceKeys(trx, id, clock.now())
  await deletePairingCodes(trx, id)
  await deleteDeviceRow(trx, id)
  await recordEvent(trx, auth, 'device.deleted', toDevice(current))
  return { object: 'device' as const, id, deleted: true as const }
}

/**
 * Detaches the devices standing at a location that is being deleted, each with its `device.updated`
 * event (`previous_attributes.location_id` the location's id).
 */
export async function detachDevices(trx: Trx, auth: AuthContext, locationId: string): Promise<void> {
  const now = clock.now()
  for (const device of await detachDevicesFromLocation(trx, auth, locationId, now)) {
    const detached = toDevice({ ...device, location_id: null, updated_at: now })
    await recordEvent(trx, auth, 'device.updated', detached, {
      previousAttributes: { location_id: locationId },
    })
  }
}

/**
 * The device a scan names by its code: for a device key, its own device, and another code is
 * `device_mismatch` (403) whether or not a device has it; otherwise any device of the caller's.
 */
export async function resolveScanDevice(db: Executor, auth: AuthContext, code: string): Promise<DeviceRow> {
  if (auth.deviceId === undefined) return resolveDevice(db, auth, code)
  const own = await findDevice(db, auth, auth.deviceId)
  if (!own || own.code !== code) throw errors.deviceMismatch(code)
  return own
}

/** 32 characters a person reads back without doubt: no 0/O, no 1/I. */
const PAIRING_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ'
const PAIRING_CODE_LENGTH = 8
export const PAIRING_CODE_TTL_MS = 10 * 60 * 1000

/** A code as typed back, without its dash and in capitals; undefined when it cannot be one. */
function normalizePairingCode(text: string): string | undefined {
  const code = text.replaceAll('-', '').trim().toUpperCase()
  if (code.length !== PAIRING_CODE_LENGTH) return undefined
  return [...code].every((c) => PAIRING_ALPHABET.includes(c)) ? code : undefined
}

/**
 * POST /v1/devices/{id}/pairing-codes: a new single-use code, valid 10 minutes, that voids the
 * device's earlier ones. Only its SHA-256 is stored: 32^8 codes (40 bits) and a limit of 10
 * pairings a minute per address make guessing one a matter of centuries, so a fast hash is enough.
 */
export async function createPairingCode(trx: Trx, auth: AuthContext, id: string): Promise<DevicePairingCode> {
  const device = await lockResource(trx, auth, devices, id)
  await deletePairingCodes(trx, device.id)
  const chars = Array.from(
    { length: PAIRING_CODE_LENGTH },
    () => PAIRING_ALPHABET[randomInt(PAIRING_ALPHABET.length)],
  )
  const code = chars.join('')
  const now = clock.now()
  const expiresAt = now + PAIRING_CODE_TTL_MS
  await insertPairingCode(trx, {
    id: newId('dpc'),
    ...ownedBy(auth),
    device_id: device.id,
    code_hash: hashSecret(code),
    expires_at: expiresAt,
    created_at: now,
  })
  return {
    object: 'device_pairing_code',
    code: `${code.slice(0, 4)}-${code.slice(4)}`,
    device_id: device.code,
    expires_at: toIso(expiresAt),
    livemode: auth.livemode,
  }
}

/**
 * POST /v1/device-pairings: the code, taken once, pairs its device: the device's previous keys are
 * revoked and a new one is answered, this once. An unknown, used or expired code (or one whose
 * device is gone) is the same refusal, so an answer tells a guesser nothing.
 */
export async function pairDevice(trx: Trx, text: string): Promise<DevicePairing> {
  const code = normalizePairingCode(text)
  const taken = code === undefined ? undefined : await takePairingCode(trx, hashSecret(code))
  const now = clock.now()
  if (!taken || taken.expires_at <= now) throw errors.invalidPairingCode()
  const owner = { accountId: taken.account_id, livemode: taken.livemode === 1 }
  const current = await findDevice(
    trx,
    { principalId: '', locationIds: null, ...owner },
    taken.device_id,
    true,
  )
  if (!current) throw errors.invalidPairingCode()
  await revokeDeviceKeys(trx, current.id, now)
  const key = await createDeviceKey(trx, owner, current.id)
  // The pairing acts as the new key: the event and anything it writes name that key.
  const auth: AuthContext = { principalId: key.id, locationIds: null, ...owner }
  const device = await markPaired(trx, auth, current, true, now)
  return { object: 'device_pairing', device, key }
}

/** POST /v1/devices/{id}/unpair: revokes the device's key (refused within the key cache's 5 s). */
export async function unpairDevice(trx: Trx, auth: AuthContext, id: string): Promise<Device> {
  const current = await lockResource(trx, auth, devices, id)
  const now = clock.now()
  await revokeDeviceKeys(trx, current.id, now)
  if (current.paired === 0) return toDevice(current)
  return markPaired(trx, auth, current, false, now)
}

/** Writes `paired` with its `device.updated` event (pairing again is an event too: a new key). */
async function markPaired(trx: Trx, auth: AuthContext, current: DeviceRow, paired: boolean, now: number) {
  const changes = { paired: toFlag(paired), updated_at: now }
  await updateDeviceRow(trx, current.id, changes)
  const device = toDevice({ ...current, ...changes })
  await recordEvent(trx, auth, 'device.updated', device, {
    previousAttributes: { paired: current.paired === 1, updated: toIso(current.updated_at) },
  })
  return device
}

/** GET /v1/devices/current: what a device key learns of its device and the service. */
export async function currentDevice(db: Executor, auth: AuthContext): Promise<CurrentDevice> {
  const row = auth.deviceId === undefined ? undefined : await findDevice(db, auth, auth.deviceId)
  if (!row) throw errors.deviceKeyRequired()
  return {
    object: 'current_device',
    device: toDevice(row),
    location: row.location_id === null ? null : await retrieveLocation(db, auth, row.location_id),
    server_time: toIso(clock.now()),
    require_pin: row.require_pin === 1,
    pin_key: await pinPublicKey(db, auth),
  }
}

/** How often at most a device's `last_seen_at` is written. */
export const LAST_SEEN_EVERY_MS = 60_000

/**
 * Records that a device key was used, at most once a minute per device: remembered here so most
 * requests write nothing, and checked in the update so processes side by side write it once too.
 */
export class DeviceSightings {
  private readonly written = new LRUCache<string, number>({ max: 10_000 })

  constructor(private readonly db: Executor) {}

  async seen(deviceId: string): Promise<void> {
    const now = clock.now()
    const last = this.written.get(deviceId)
    if (last !== undefined && now - last < LAST_SEEN_EVERY_MS) return
    this.written.set(deviceId, now)
    await touchDeviceSeen(this.db, deviceId, now, LAST_SEEN_EVERY_MS)
  }
}

/** `device_id` of a session or scan request is the device's code. */
export function resolveDevice(db: Executor, auth: AuthContext, code: string): Promise<DeviceRow> {
  return resolveDeviceBy(auth, code, (owner) => findDevicesByCode(db, owner, code))
}

/**
 * `device_id` of a session's create: the device, with its location's time zone read in the same
 * statement (device-zone-read-model.ts), where `resolveDevice` and then `timeZoneAt` would be two
 * round trips on PostgreSQL.
 */
export function resolveDeviceWithZone(
  db: Executor,
  auth: AuthContext,
  code: string,
): Promise<DeviceWithZone> {
  return resolveDeviceBy(auth, code, (owner) => findDevicesWithZone(db, owner, code))
}

/** `device_id` resolved as `resolveDevice` does, through a lookup that may read more with the device. */
function resolveDeviceBy<Row extends DeviceRow>(
  auth: AuthContext,
  code: string,
  lookup: (owner: Owner) => Promise<Row[]>,
): Promise<Row> {
  return resolveReference(auth, {
    resource: 'device',
    param: 'device_id',
    value: code,
    lookup,
    unknown: errors.unknownDevice,
    locationOf: (row) => row.location_id,
  })
}

/**
 * The codes of these devices of the account, by id (a deleted device is absent): what a change made
 * with a device's key shows as its actor's name. One statement for any number of ids.
 */
export async function deviceCodes(
  db: Executor,
  accountId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  return new Map((await findDeviceCodes(db, accountId, ids)).map((row) => [row.id, row.code]))
}
