import type { Selectable } from 'kysely'
import { compiled } from '../../db/compiled.js'
import type { DevicesTable } from '../../db/schema.js'
import type { Owner } from '../../db/scope.js'
import type { Executor } from '../../db/types.js'

/**
 * A device seen with its location's time zone: a read across devices and locations, as a session's
 * create needs both (the zone fixes the work date) and on PostgreSQL two statements are two round
 * trips. Read only (test/architecture.test.ts, READ_MODELS).
 */

/** A device as a create reads it: the row, and the time zone of its location (null: none). */
export type DeviceWithZone = Selectable<DevicesTable> & { location_timezone: string | null }

/**
 * The owner's device with this code, and its location's time zone in the same statement. The
 * location is the device's own account's and mode's, as `timeZoneAt` (locations' service) reads it.
 */
const devicesWithZone = compiled((db, p: Owner & { code: string }) =>
  db
    .selectFrom('devices as d')
    .leftJoin('locations as l', (join) =>
      join
        .onRef('l.id', '=', 'd.location_id')
        .onRef('l.account_id', '=', 'd.account_id')
        .onRef('l.livemode', '=', 'd.livemode'),
    )
    .selectAll('d')
    .select('l.timezone as location_timezone')
    .where('d.account_id', '=', p.account_id)
    .where('d.livemode', '=', p.livemode)
    .where('d.code', '=', p.code),
)

export function findDevicesWithZone(db: Executor, owner: Owner, code: string): Promise<DeviceWithZone[]> {
  return devicesWithZone.rows(db, { ...owner, code })
}
