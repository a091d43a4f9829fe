import type { Selectable } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { newestFirst } from '../../db/keyset.js'
import type { DevicePairingCodesTable, DevicesTable, PinKeysTable } from '../../db/schema.js'
import { atSites, type Owner, ownedBy, ownedRowFinder, ownedRowsBy } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import { toIso, toIsoOrNull } from '../../lib/time.js'
import type { Device, ListDevicesQuery } from './schemas.js'

export type DeviceRow = Selectable<DevicesTable>

export function toDevice(row: DeviceRow): Device {
  return {
    object: 'device',
    id: row.id,
    code: row.code,
    name: row.name,
    location_id: row.location_id,
    paired: row.paired === 1,
    last_seen_at: toIsoOrNull(row.last_seen_at),
    require_pin: row.require_pin === 1,
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    updated: toIso(row.updated_at),
  }
}

function owned(db: Executor, auth: AuthContext) {
  return db
    .selectFrom('devices')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
}

export const findDevice = ownedRowFinder('devices')

const devicesByCode = ownedRowsBy('devices', 'code')

/** The device of an account and mode with this code (unique there), as a list: what a reference names. */
export function findDevicesByCode(db: Executor, owner: Owner, code: string) {
  return devicesByCode.rows(db, { ...owner, value: code })
}

/** The codes of these devices of an account (either mode; a deleted device is absent). */
export async function findDeviceCodes(db: Executor, accountId: string, ids: readonly string[]) {
  return db
    .selectFrom('devices')
    .select(['id', 'code'])
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute()
}

export async function insertDevice(trx: Trx, row: DeviceRow) {
  await trx.insertInto('devices').values(row).execute()
}

export async function updateDeviceRow(trx: Trx, id: string, changes: Partial<DeviceRow>) {
  await trx.updateTable('devices').set(changes).where('id', '=', id).execute()
}

export async function deleteDeviceRow(trx: Trx, id: string) {
  await trx.deleteFrom('devices').where('id', '=', id).execute()
}

export async function listDeviceRows(
  db: Executor,
  auth: AuthContext,
  filters: Pick<ListDevicesQuery, 'code' | 'location_id'>,
  beforeId: string | undefined,
  take: number,
) {
  return owned(db, auth)
    .$call(atSites(auth, 'location_id'))
    .$if(filters.code !== undefined, (q) => q.where('code', '=', filters.code ?? ''))
    .$if(filters.location_id !== undefined, (q) => q.where('location_id', '=', filters.location_id ?? ''))
    .$call(newestFirst(beforeId, take))
    .execute()
}

/** Detaches every device of a deleted location in one statement; returns them as they were. */
export async function detachDevicesFromLocation(
  trx: Trx,
  auth: AuthContext,
  locationId: string,
  now: number,
) {
  const devices = await owned(trx, auth).where('location_id', '=', locationId).execute()
  if (devices.length === 0) return devices
  await trx
    .updateTable('devices')
    .set({ location_id: null, updated_at: now })
    .where((eb) => eb.and(ownedBy(auth)))
    .where('location_id', '=', locationId)
    .execute()
  return devices
}

/** Voids the device's pairing codes (a new one replaces them; a deleted device needs none). */
export async function deletePairingCodes(trx: Trx, deviceId: string) {
  await trx.deleteFrom('device_pairing_codes').where('device_id', '=', deviceId).execute()
}

export async function insertPairingCode(trx: Trx, row: Selectable<DevicePairingCodesTable>) {
  await trx.insertInto('device_pairing_codes').values(row).execute()
}

/**
 * Takes the code with this hash, whatever its state: deleted here, so two pairings racing on one
 * code cannot both have it. The caller checks its expiry.
 */
export async function takePairingCode(trx: Trx, codeHash: string) {
  return trx
    .deleteFrom('device_pairing_codes')
    .where('code_hash', '=', codeHash)
    .returningAll()
    .executeTakeFirst()
}

/** `last_seen_at`, written only when the stored one is a minute old (or none): another process may have. */
export async function touchDeviceSeen(db: Executor, id: string, now: number, everyMs: number) {
  await db
    .updateTable('devices')
    .set({ last_seen_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_seen_at', 'is', null), eb('last_seen_at', '<=', now - everyMs)]))
    .execute()
}

export type PinKeyRow = Selectable<PinKeysTable>

export function findPinKey(db: Executor, owner: Owner) {
  return db
    .selectFrom('pin_keys')
    .selectAll()
    .where('account_id', '=', owner.account_id)
    .where('livemode', '=', owner.livemode)
    .executeTakeFirst()
}

/** Stores a new key pair unless another request stored one first (the caller reads the winner). */
export async function insertPinKey(db: Executor, row: PinKeyRow) {
  await db
    .insertInto('pin_keys')
    .values(row)
    .onConflict((oc) => oc.columns(['account_id', 'livemode']).doNothing())
    .execute()
}
