import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { toFlag } from '../../db/schema.js'
import type { Executor, Trx } from '../../db/types.js'
import { changedFields } from '../../lib/changes.js'
import { canonicalTimeZone } from '../../lib/time.js'
import { recordEvent } from '../events/outbox.js'
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
import {
  deleteLocationRow,
  findLocation,
  findLocationsBy,
  findOwnedLocationIds,
  findTimeZonesInUse,
  insertLocation,
  type LocationRow,
  listLocationRows,
  toLocation,
  updateLocationRow,
} from './repository.js'
import type { CreateLocationBody, Location, UpdateLocationBody } from './schemas.js'

const locations: ResourceStore<LocationRow, Location> = {
  name: 'location',
  prefix: 'loc',
  // To a principal held to sites, another location does not exist (its writes are account-wide).
  find: atSeenLocations(findLocation, (row) => row.id),
  insert: insertLocation,
  write: updateLocationRow,
  toApi: toLocation,
}

function timezoneOf(value: string): string {
  const zone = canonicalTimeZone(value)
  if (!zone) {
    throw errors.invalidTimezone(value)
  }
  return zone
}

/** What a location's `locale` is when none is given (and what the locations made before it got). */
const DEFAULT_LOCALE = 'en-GB'

/**
 * A BCP 47 tag in its canonical form (`fr-fr` → `fr-FR`), if it is well formed and the date formatter
 * knows its language: the kiosk formats its clock with it, and a tag it cannot use would show the
 * browser's own locale instead, without a word. Refused: 422 `invalid_value`, param `locale`.
 */
function localeOf(value: string): string {
  let canonical: string | undefined
  try {
    canonical = Intl.getCanonicalLocales(value)[0]
  } catch {
    // A malformed tag (`en_US`, `fr--FR`): a RangeError, answered below like an unknown one.
  }
  if (canonical === undefined || Intl.DateTimeFormat.supportedLocalesOf(canonical).length === 0) {
    throw errors.invalidValue('locale', `Unknown BCP 47 locale: '${value}' (e.g. fr-FR or en-US).`)
  }
  return canonical
}

export function createLocation(trx: Trx, auth: AuthContext, input: CreateLocationBody): Promise<Location> {
  const fields = {
    name: input.name,
    timezone: timezoneOf(input.timezone ?? 'UTC'),
    locale: localeOf(input.locale ?? DEFAULT_LOCALE),
    address: input.address ?? null,
  }
  return createResource(trx, auth, locations, fields, 'location.created')
}

export function retrieveLocation(db: Executor, auth: AuthContext, id: string): Promise<Location> {
  return retrieveResource(db, auth, locations, id)
}

export const listLocations = listService(listLocationRows, toLocation)

/**
 * The time zones the caller's locations use; UTC when it has none (a session without a location
 * is dated in UTC, and so is an account that has not placed any).
 */
export async function timeZonesInUse(db: Executor, auth: AuthContext): Promise<string[]> {
  const zones = await findTimeZonesInUse(db, auth)
  return zones.length === 0 ? ['UTC'] : zones
}

export function updateLocation(
  trx: Trx,
  auth: AuthContext,
  id: string,
  input: UpdateLocationBody,
): Promise<Location> {
  return updateResource(trx, auth, locations, id, {
    changes: (current) =>
      changedFields(current, {
        name: input.name,
        timezone: input.timezone === undefined ? undefined : timezoneOf(input.timezone),
        locale: input.locale === undefined ? undefined : localeOf(input.locale),
        address: input.address,
      }),
    event: 'location.updated',
  })
}

/**
 * Removes the location. Sessions keep their `location_id` (they hold no foreign key to it), so every
 * session that referred to it stays readable. Devices standing there are detached first by
 * `detachDevices`, the devices module's step, which the route hands in: devices refer to locations
 * (their service resolves `location_id` here), so this module imports nothing of theirs, and no
 * import cycle joins the two.
 */
export async function deleteLocation(
  trx: Trx,
  auth: AuthContext,
  id: string,
  detachDevices: (trx: Trx, auth: AuthContext, locationId: string) => Promise<void>,
) {
  const current = await lockResource(trx, auth, locations, id)
  await detachDevices(trx, auth, id)
  await deleteLocationRow(trx, id)
  await recordEvent(trx, auth, 'location.deleted', toLocation(current))
  return { object: 'location' as const, id, deleted: true as const }
}

/**
 * The time zone that dates what happens at a location: its own, or UTC without a location or when
 * it was deleted (as for an account without locations, see `timeZonesInUse`).
 */
export async function timeZoneAt(
  db: Executor,
  auth: AuthContext,
  locationId: string | null,
): Promise<string> {
  const location = locationId === null ? undefined : await findLocation(db, auth, locationId)
  return location?.timezone ?? 'UTC'
}

/**
 * Which of `ids` are the account's locations in the mode: what a key's `location_ids` (keys
 * service) must all be.
 */
export function ownedLocationIds(
  db: Executor,
  owner: { accountId: string; livemode: boolean },
  ids: readonly string[],
): Promise<string[]> {
  return findOwnedLocationIds(db, { account_id: owner.accountId, livemode: toFlag(owner.livemode) }, ids)
}

/**
 * The location a body places something at (a device's `location_id`, an operator's
 * `home_location_id`, named by `param`): the caller's location with that id (422
 * `unknown_location`, as for one a principal held to sites cannot see), null and absent kept. A
 * principal held to sites places it at one of its locations (`required`: a create names one), never
 * nowhere, where the thing would be out of its reach: 422 `invalid_value`.
 */
export async function placedAt(
  trx: Trx,
  auth: AuthContext,
  param: 'location_id' | 'home_location_id',
  id: string | null | undefined,
  required: boolean,
): Promise<string | null | undefined> {
  if (id === null || (id === undefined && required)) {
    if (auth.locationIds !== null)
      throw errors.invalidValue(
        param,
        `A key or person held to some locations names one of them: send ${param}.`,
      )
    return id
  }
  if (id === undefined) return id
  return (await resolveLocation(trx, auth, { id, param })).id
}

/**
 * Resolves `location_id` or `location_name` of a request; a name may be shared by several
 * locations (422 `ambiguous_location`), and both given must name the same location.
 */
export function resolveLocation(
  db: Executor,
  auth: AuthContext,
  reference: { id?: string; name?: string; param?: string },
): Promise<LocationRow> {
  const { id, name } = reference
  const byId = id !== undefined
  const value = id ?? name ?? ''
  return resolveReference(auth, {
    resource: 'location',
    param: reference.param ?? (byId ? 'location_id' : 'location_name'),
    value,
    lookup: (owner) => findLocationsBy(db, owner, byId ? 'id' : 'name', value, auth.locationIds !== null),
    unknown: errors.unknownLocation,
    ambiguous: errors.ambiguousLocation,
    locationOf: (row) => row.id,
    check: (row) => {
      if (byId && name !== undefined && row.name !== name) {
        throw errors.conflictingParams(
          'location_name',
          `location_name '${name}' does not name location ${row.id} ('${row.name}'); send one of them.`,
        )
      }
    },
  })
}
