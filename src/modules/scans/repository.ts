import type { Selectable } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { newestFirst } from '../../db/keyset.js'
import type { ScansTable } from '../../db/schema.js'
import { ownedBy, ownedRowFinder } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import { toIso } from '../../lib/time.js'
import { atDevicesOfSites } from './scan-site-read-model.js'
import type { ListScansQuery, Scan, ScanFlagReason } from './schemas.js'

export type ScanRow = Selectable<ScansTable>

export function toScan(row: ScanRow): Scan {
  return {
    object: 'scan',
    id: row.id,
    device_id: row.device_code,
    operator_id: row.operator_id,
    operator_ident: row.operator_ident,
    operator_name: row.operator_name,
    time: toIso(row.scanned_at),
    direction: row.direction,
    result: row.result,
    flag_reason: row.flag_reason as ScanFlagReason | null,
    session_id: row.session_id,
    client_scan_id: row.client_scan_id,
    clock_skew_ms: row.clock_skew_ms,
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
  }
}

function owned(db: Executor, auth: AuthContext) {
  return db
    .selectFrom('scans')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
}

const findOwnedScan = ownedRowFinder('scans')

/** The caller's scan with this id: for a principal held to sites, only one at a device at its locations. */
export function findScan(db: Executor, auth: AuthContext, id: string) {
  if (auth.locationIds === null) return findOwnedScan(db, auth, id)
  return owned(db, auth).where('id', '=', id).$call(atDevicesOfSites(auth)).executeTakeFirst()
}

/** The operator's accepted scan nearest in time to `at` within ±window: what a duplicate repeats. */
export async function findAcceptedScanNear(
  trx: Trx,
  auth: AuthContext,
  operatorId: string,
  at: number,
  windowMs: number,
) {
  return owned(trx, auth)
    .where('operator_id', '=', operatorId)
    .where('scanned_at', '>', at - windowMs)
    .where('scanned_at', '<', at + windowMs)
    .where('result', '!=', 'flagged')
    .limit(1)
    .executeTakeFirst()
}

/** The scan a device sent with this `client_scan_id` (index `scans_client_scan_id`). */
export function findScanByClientId(
  db: Executor,
  auth: AuthContext,
  deviceCode: string,
  clientScanId: string,
) {
  return owned(db, auth)
    .where('device_code', '=', deviceCode)
    .where('client_scan_id', '=', clientScanId)
    .executeTakeFirst()
}

export async function insertScan(trx: Trx, row: ScanRow) {
  await trx.insertInto('scans').values(row).execute()
}

// A batch of scans reads what its items need in a few statements before applying them (see
// `recordScanBatch` in service.ts), rather than a dozen statements an item: these are its reads of
// scans (the operators' and sessions' are their modules').

/** The scans a device sent with any of these `client_scan_id`s (index `scans_client_scan_id`). */
export function findScansByClientIds(
  trx: Trx,
  auth: AuthContext,
  deviceCode: string,
  clientScanIds: readonly string[],
) {
  return owned(trx, auth)
    .where('device_code', '=', deviceCode)
    .where('client_scan_id', 'in', clientScanIds)
    .execute()
}

/** A span of an operator's scans: `from` < scanned_at < `to` (no `to`: no end). */
export interface ScanWindow {
  operatorId: string
  from: number
  to: number | undefined
}

/** The times of the accepted scans in any of these windows (index `scans_operator_time`). */
export function findAcceptedScanTimes(trx: Trx, auth: AuthContext, windows: readonly ScanWindow[]) {
  return trx
    .selectFrom('scans')
    .select(['operator_id', 'scanned_at'])
    .where((eb) => eb.and(ownedBy(auth)))
    .where('result', '!=', 'flagged')
    .where((eb) =>
      eb.or(
        windows.map((w) =>
          eb.and([
            eb('operator_id', '=', w.operatorId),
            eb('scanned_at', '>', w.from),
            ...(w.to === undefined ? [] : [eb('scanned_at', '<', w.to)]),
          ]),
        ),
      ),
    )
    .execute()
}

/** Rows per INSERT of `insertScans`: 100 rows of 15 columns stay far below either dialect's limit of parameters. */
const SCANS_PER_INSERT = 100

/** Scans a batch recorded, written together after its items (multi-row INSERTs). */
export async function insertScans(trx: Trx, rows: readonly ScanRow[]) {
  for (let i = 0; i < rows.length; i += SCANS_PER_INSERT) {
    await trx
      .insertInto('scans')
      .values(rows.slice(i, i + SCANS_PER_INSERT))
      .execute()
  }
}

export async function listScanRows(
  db: Executor,
  auth: AuthContext,
  f: Pick<ListScansQuery, 'operator_id' | 'device_id' | 'result'>,
  beforeId: string | undefined,
  take: number,
) {
  return owned(db, auth)
    .$call(atDevicesOfSites(auth))
    .$if(f.operator_id !== undefined, (q) => q.where('operator_id', '=', f.operator_id ?? ''))
    .$if(f.device_id !== undefined, (q) => q.where('device_code', '=', f.device_id ?? ''))
    .$if(f.result !== undefined, (q) => q.where('result', '=', f.result ?? 'flagged'))
    .$call(newestFirst(beforeId, take))
    .execute()
}
