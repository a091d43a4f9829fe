import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Executor, Trx } from '../../db/connection.js'
import { isUniqueViolation } from '../../db/connection.js'
import { changedFields, previousAttributes } from '../../lib/changes.js'
import { newId } from '../../lib/ids.js'
import { recordEvent } from '../events/outbox.js'
import { resolveLocation } from '../locations/service.js'
import {
  type DeviceRow,
  deleteDeviceRow,
  deviceCodeExistsInOtherMode,
  findDevice,
  findDeviceByCode,
  insertDevice,
  toDevice,
  updateDeviceRow,
} from './repository.js'
import type { CreateDeviceBody, Device, UpdateDeviceBody } from './schemas.js'

async function locationIdOf(trx: Trx, auth: AuthContext, id: string | null | undefined) {
  if (id === undefined || id === null) return id
  const location = await resolveLocation(trx, auth, { id })
  return location.id
}

export async function createDevice(trx: Trx, auth: AuthContext, input: CreateDeviceBody): Promise<Device> {
  const now = Date.now()
  const row: DeviceRow = {
    id: newId('dev'),
    account_id: auth.accountId,
    livemode: auth.livemode ? 1 : 0,
    code: input.code,
    name: input.name ?? null,
    location_id: (await locationIdOf(trx, auth, input.location_id)) ?? null,
    created_at: now,
    updated_at: now,
  }
  try {
    await insertDevice(trx, row)
  } catch (error) {
    if (isUniqueViolation(error)) throw errors.duplicateDeviceCode(input.code)
    throw error
  }
  const device = toDevice(row)
  await recordEvent(trx, auth, 'device.created', device)
  return device
}

export async function updateDevice(
  trx: Trx,
  auth: AuthContext,
  id: string,
  input: UpdateDeviceBody,
): Promise<Device> {
  const current = await findDevice(trx, auth, id, true)
  if (!current) throw errors.notFound('device', id)
  const changes = changedFields(current, {
    name: input.name,
    location_id: await locationIdOf(trx, auth, input.location_id),
  })
  if (Object.keys(changes).length === 0) return toDevice(current)
  const updated: DeviceRow = { ...current, ...changes, updated_at: Date.now() }
  await updateDeviceRow(trx, id, { ...changes, updated_at: updated.updated_at })
  const device = toDevice(updated)
  await recordEvent(
    trx,
    auth,
    'device.updated',
    device,
    previousAttributes(toDevice(current), Object.keys(changes)),
  )
  return device
}

/** Removes the device. Sessions keep its code, so every session that referred to it stays readable. */
export async function deleteDevice(trx: Trx, auth: AuthContext, id: string) {
  const current = await findDevice(trx, auth, id, true)
  if (!current) throw errors.notFound('device', id)
  await deleteDeviceRow(trx, id)
  await recordEvent(trx, auth, 'device.deleted', toDevice(current))
  return { object: 'device' as const, id, deleted: true as const }
}

/** `device_id` of a session or scan request is the device's code: 422 `unknown_device` or `cross_mode_reference`. */
export async function resolveDevice(db: Executor, auth: AuthContext, code: string, param = 'device_id') {
  const device = await findDeviceByCode(db, auth, code)
  if (device) return device
  if (await deviceCodeExistsInOtherMode(db, auth, code))
    throw errors.crossModeReference(param, 'device', code)
  throw errors.unknownDevice(param, code)
}
