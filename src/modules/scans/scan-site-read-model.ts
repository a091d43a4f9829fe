import type { Selectable, SelectQueryBuilder } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import type { Database, ScansTable } from '../../db/schema.js'
import { ownedBy } from '../../db/scope.js'

/*
 * Scans seen with their devices' locations (test/architecture.test.ts, READ_MODELS): a scan happens
 * where its device stands, and a scan row keeps its device's code, not a location. It only reads.
 */

type ScanQuery = SelectQueryBuilder<Database, 'scans', Selectable<ScansTable>>

/**
 * For a principal held to sites, only the scans at devices that stand at its locations (decisions.md,
 * "Sites": the others, and those of a device standing nowhere, do not exist for it); for any other
 * principal, the query as it is. One statement: the devices of those locations are a subquery
 * (index `devices_location_id`), the scans theirs by `scans_device_code`, so a keyset page is full.
 */
export function atDevicesOfSites(auth: AuthContext) {
  return (query: ScanQuery): ScanQuery => {
    const sites = auth.locationIds
    if (sites === null) return query
    const owner = ownedBy(auth)
    return query.where('device_code', 'in', (eb) =>
      eb
        .selectFrom('devices')
        .select('devices.code')
        .where('devices.account_id', '=', owner.account_id)
        .where('devices.livemode', '=', owner.livemode)
        .where('devices.location_id', 'in', sites),
    )
  }
}
