import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Executor, Trx } from '../../db/connection.js'
import { changedFields, previousAttributes } from '../../lib/changes.js'
import { newId } from '../../lib/ids.js'
import { canonicalTimeZone } from '../../lib/time.js'
import { detachDevicesFromLocation, toDevice } from '../devices/repository.js'
import { recordEvent } from '../events/outbox.js'
import {
  deleteLocationRow,
  findLocation,
  findLocationsByName,
  insertLocation,
  type LocationRow,
  locationExistsInOtherMode,
  toLocation,
  updateLocationRow,
} from './repository.js'
import type { CreateLocationBody, Location, UpdateLocationBody } from './schemas.js'

function timezoneOf(value: string): string {
  const zone = canonicalTimeZone(value)
  if (!zone) {
    throw errors.invalidTimezone(value)
  }
  return zone
}

export async function createLocation(
  trx: Trx,
  auth: AuthContext,
  input: CreateLocationBody,
): Promise<Location> {
  const now = Date.now()
  const row: LocationRow = {
    id: newId('loc'),
    account_id: auth.accountId,
    livemode: auth.livemode ? 1 : 0,
    name: input.name,
    timezone: timezoneOf(input.timezone ?? 'UTC'),
    address: input.address ?? null,
    created_at: now,
    updated_at: now,
  }
  await insertLocation(trx, row)
  const location = toLocation(row)
  await recordEvent(trx, auth, 'location.created', location)
  return location
}

export async function updateLocation(
  trx: Trx,
  auth: AuthContext,
  id: string,
  input: UpdateLocationBody,
): Promise<Location> {
  const current = await findLocation(trx, auth, id, true)
  if (!current) throw errors.notFound('location', id)
  const changes = changedFields(current, {
    name: input.name,
    timezone: input.timezone === undefined ? undefined : timezoneOf(input.timezone),
    address: input.address,
  })
  if (Object.keys(changes).length === 0) return toLocation(current)
  const updated: LocationRow = { ...current, ...changes, updated_at: Date.now() }
  await updateLocationRow(trx, id, { ...changes, updated_at: updated.updated_at })
  const location = toLocation(updated)
  await recordEvent(
    trx,
    auth,
    'location.updated',
    location,
    previousAttributes(toLocation(current), Object.keys(changes)),
  )
  return location
}

/**
 * Removes the location. Sessions keep their `location_id` (they hold no foreign key to it), so every
 * session that referred to it stays readable. Devices standing there are detached, each with its
 * `device.updated` event.
 */
export async function deleteLocation(trx: Trx, auth: AuthContext, id: string) {
  const current = await findLocation(trx, auth, id, true)
  if (!current) throw errors.notFound('location', id)
  const now = Date.now()
  for (const device of await detachDevicesFromLocation(trx, auth, id, now)) {
    const detached = toDevice({ ...device, location_id: null, updated_at: now })
    await recordEvent(trx, auth, 'device.updated', detached, { location_id: id })
  }
  await deleteLocationRow(trx, id)
  await recordEvent(trx, auth, 'location.deleted', toLocation(current))
  return { object: 'location' as const, id, deleted: true as const }
}

/**
 * Resolves `location_id` or `location_name` of a request, as the spec's reference table says:
 * 422 `unknown_location`, `ambiguous_location` (a name shared by several locations) or
 * `cross_mode_reference` (it exists only in the other mode of this account).
 */
export async function resolveLocation(
  db: Executor,
  auth: AuthContext,
  ref: { id?: string; name?: string },
  params: { id: string; name: string } = { id: 'location_id', name: 'location_name' },
): Promise<LocationRow> {
  const param = ref.id !== undefined ? params.id : params.name
  const value = ref.id ?? ref.name ?? ''
  const found =
    ref.id !== undefined
      ? [await findLocation(db, auth, ref.id)].filter((row) => row !== undefined)
      : await findLocationsByName(db, auth, value)
  const [first, second] = found
  if (first && second) {
    throw errors.ambiguousLocation(param, value)
  }
  if (first && ref.id !== undefined && ref.name !== undefined && first.name !== ref.name) {
    throw errors.conflictingParams(
      params.name,
      `${params.name} '${ref.name}' does not name location ${first.id} ('${first.name}'); send one of them.`,
    )
  }
  if (first) return first
  if (await locationExistsInOtherMode(db, auth, ref))
    throw errors.crossModeReference(param, 'location', value)
  throw errors.unknownLocation(param, value)
}
