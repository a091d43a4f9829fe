import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Executor, Trx } from '../../db/types.js'
import { changedFields } from '../../lib/changes.js'
import { recordEvent } from '../events/outbox.js'
import { resolveLocation } from '../locations/service.js'
import { resolveReference } from '../shared/references.js'
import {
  createResource,
  listService,
  lockResource,
  type ResourceStore,
  retrieveResource,
  updateResource,
} from '../shared/resources.js'
import {
  type DeviceRow,
  deleteDeviceRow,
  detachDevicesFromLocation,
  findDevice,
  findDevicesByCode,
  insertDevice,
  listDeviceRows,
  toDevice,
  updateDeviceRow,
} from './repository.js'
import type { CreateDeviceBody, Device, UpdateDeviceBody } from './schemas.js'

export type { DeviceRow }

const devices: ResourceStore<DeviceRow, Device> = {
  name: 'device',
  prefix: 'dev',
  find: findDevice,
  insert: insertDevice,
  write: updateDeviceRow,
  toApi: toDevice,
  duplicate: (row) => errors.duplicateDeviceCode(row.code),
}

async function locationIdOf(trx: Trx, auth: AuthContext, id: string | null | undefined) {
  if (id === undefined || id === null) return id
  const location = await resolveLocation(trx, auth, { id })
  return location.id
}

export async function createDevice(trx: Trx, auth: AuthContext, input: CreateDeviceBody): Promise<Device> {
  const fields = {
    code: input.code,
    name: input.name ?? null,
    location_id: (await locationIdOf(trx, auth, input.location_id)) ?? null,
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
        location_id: await locationIdOf(trx, auth, input.location_id),
      }),
    event: 'device.updated',
  })
}

/** Removes the device. Sessions keep its code, so every session that referred to it stays readable. */
export async function deleteDevice(trx: Trx, auth: AuthContext, id: string) {
  const current = await lockResource(trx, auth, devices, id)
  await deleteDeviceRow(trx, id)
  await recordEvent(trx, auth, 'device.deleted', toDevice(current))
  return { object: 'device' as const, id, deleted: true as const }
}

/**
 * Detaches the devices standing at a location that is being deleted, each with its `device.updated`
 * event (`previous_attributes.location_id` the location's id).
 */
export async function detachDevices(trx: Trx, auth: AuthContext, locationId: string): Promise<void> {
  const now = Date.now()
  for (const device of await detachDevicesFromLocation(trx, auth, locationId, now)) {
    const detached = toDevice({ ...device, location_id: null, updated_at: now })
    await recordEvent(trx, auth, 'device.updated', detached, {
      previousAttributes: { location_id: locationId },
    })
  }
}

/** `device_id` of a session or scan request is the device's code. */
export function resolveDevice(db: Executor, auth: AuthContext, code: string): Promise<DeviceRow> {
  return resolveReference(auth, {
    resource: 'device',
    param: 'device_id',
    value: code,
    lookup: (owner) => findDevicesByCode(db, owner, code),
    unknown: errors.unknownDevice,
  })
}
