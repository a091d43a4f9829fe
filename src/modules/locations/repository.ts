import type { Selectable } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { newestFirst } from '../../db/keyset.js'
import type { LocationsTable } from '../../db/schema.js'
import { atSites, type Owner, ownedBy, ownedRowFinder, ownedRowsBy } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import { toIso } from '../../lib/time.js'
import type { Location } from './schemas.js'

export type LocationRow = Selectable<LocationsTable>

export function toLocation(row: LocationRow): Location {
  return {
    object: 'location',
    id: row.id,
    name: row.name,
    timezone: row.timezone,
    locale: row.locale,
    address: row.address,
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    updated: toIso(row.updated_at),
  }
}

function owned(db: Executor, auth: AuthContext) {
  return db
    .selectFrom('locations')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
}

export const findLocation = ownedRowFinder('locations')

const locationsBy = {
  id: ownedRowsBy('locations', 'id', { limit: 2 }),
  name: ownedRowsBy('locations', 'name', { limit: 2 }),
}
const everyLocationNamed = ownedRowsBy('locations', 'name')

/**
 * The locations of an account and mode with this id or name: what a reference names. At most two
 * rows: enough to tell "none", "one" and "ambiguous" (a shared name) apart; with `every`, all of
 * them (a principal held to sites sees some of them only, so two read may both be elsewhere).
 */
export function findLocationsBy(
  db: Executor,
  owner: Owner,
  column: 'id' | 'name',
  value: string,
  every = false,
) {
  return (column === 'name' && every ? everyLocationNamed : locationsBy[column]).rows(db, { ...owner, value })
}

/** The distinct time zones of the caller's locations (a few rows: one per zone, not per location). */
export async function findTimeZonesInUse(db: Executor, auth: AuthContext): Promise<string[]> {
  const rows = await db
    .selectFrom('locations')
    .select('timezone')
    .distinct()
    .where((eb) => eb.and(ownedBy(auth)))
    .execute()
  return rows.map((row) => row.timezone)
}

/** Which of `ids` are locations of the account in the mode (at most as many rows as ids, by primary key). */
export async function findOwnedLocationIds(
  db: Executor,
  owner: Owner,
  ids: readonly string[],
): Promise<string[]> {
  if (ids.length === 0) return []
  const rows = await db
    .selectFrom('locations')
    .select('id')
    .where((eb) => eb.and(owner))
    .where('id', 'in', ids)
    .execute()
  return rows.map((row) => row.id)
}

export async function insertLocation(trx: Trx, row: LocationRow) {
  await trx.insertInto('locations').values(row).execute()
}

export async function updateLocationRow(trx: Trx, id: string, changes: Partial<LocationRow>) {
  await trx.updateTable('locations').set(changes).where('id', '=', id).execute()
}

export async function deleteLocationRow(trx: Trx, id: string) {
  await trx.deleteFrom('locations').where('id', '=', id).execute()
}

export async function listLocationRows(
  db: Executor,
  auth: AuthContext,
  filters: { name?: string },
  beforeId: string | undefined,
  take: number,
) {
  return owned(db, auth)
    .$call(atSites(auth, 'id'))
    .$if(filters.name !== undefined, (q) => q.where('name', '=', filters.name ?? ''))
    .$call(newestFirst(beforeId, take))
    .execute()
}
