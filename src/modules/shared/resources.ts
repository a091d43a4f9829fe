import { type ApiError, errors } from '../../core/errors.js'
import { type AuthContext, seesLocation } from '../../core/identity.js'
import { isUniqueViolation } from '../../db/connection.js'
import type { Flag } from '../../db/schema.js'
import { ownedBy } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import { previousAttributes } from '../../lib/changes.js'
import { clock } from '../../lib/clock.js'
import { type IdPrefix, newId } from '../../lib/ids.js'
import { recordEvent } from '../events/outbox.js'
import type { EventType } from '../events/types.js'

/** The columns every owned, changeable row has; the shared steps fill them in. */
export interface ResourceRow {
  id: string
  account_id: string
  livemode: Flag
  created_at: number
  updated_at: number
}

/** An object as the API shows it. */
export interface ApiObject {
  object: string
  id: string
}

/** How a feature reads one kind of object and shows it. */
export interface ReadableStore<Row, Api extends ApiObject> {
  /** As 404 messages name it: `operator`, `webhook_endpoint`. */
  name: string
  /** The caller's row; with `lock`, locked for a change (FOR UPDATE on PostgreSQL) so changes queue. */
  find: (db: Executor, auth: AuthContext, id: string, lock?: boolean) => Promise<Row | undefined>
  toApi: (row: Row) => Api
}

/** A store's `find`: the caller's row with this id, locked with `lock`. */
export type Finder<Row> = ReadableStore<Row, ApiObject>['find']

/**
 * A `find` for objects that happen at a location (`locationOf`: a session's, a device's, a location
 * itself): to a principal held to other locations, or to one held to any when the object has no
 * location, the row does not exist (decisions.md, "Sites"), so every step built on `find` (a read,
 * a change, a delete) answers it as a missing id.
 */
export function atSeenLocations<Row>(
  find: Finder<Row>,
  locationOf: (row: Row) => string | null,
): Finder<Row> {
  return async (db, auth, id, lock) => {
    const row = await find(db, auth, id, lock)
    return row !== undefined && seesLocation(auth, locationOf(row)) ? row : undefined
  }
}

/** How a feature stores one kind of resource: all that the shared steps need of it. */
export interface ResourceStore<Row extends ResourceRow, Api extends ApiObject>
  extends ReadableStore<Row, Api> {
  prefix: IdPrefix
  insert: (trx: Trx, row: Row) => Promise<void>
  write: (trx: Trx, id: string, changes: Partial<Row>) => Promise<void>
  /** What a unique index refusing the insert or write means: a duplicate code, a second open session. */
  duplicate?: (row: Row) => ApiError
}

/** GET by id: the caller's object, or 404. */
export async function retrieveResource<Row, Api extends ApiObject>(
  db: Executor,
  auth: AuthContext,
  store: ReadableStore<Row, Api>,
  id: string,
): Promise<Api> {
  const row = await store.find(db, auth, id)
  if (!row) throw errors.notFound(store.name, id)
  return store.toApi(row)
}

/** A keyset query of a list: rows with ids below `beforeId`, newest first, at most `take`. */
export type KeysetQuery<Filters, Item> = (
  db: Executor,
  auth: AuthContext,
  filters: Filters,
  beforeId: string | undefined,
  take: number,
) => Promise<Item[]>

/** A list service: a repository's keyset query, its rows shown as the API shows them. */
export function listService<Filters, Row, Api>(
  query: KeysetQuery<Filters, Row>,
  toApi: (row: Row) => Api,
): KeysetQuery<Filters, Api> {
  return async (db, auth, filters, beforeId, take) =>
    (await query(db, auth, filters, beforeId, take)).map(toApi)
}

/** The row a change applies to, locked until the transaction ends; 404 when the caller has none. */
export async function lockResource<Row extends ResourceRow, Api extends ApiObject>(
  trx: Trx,
  auth: AuthContext,
  store: ResourceStore<Row, Api>,
  id: string,
): Promise<Row> {
  const row = await store.find(trx, auth, id, true)
  if (!row) throw errors.notFound(store.name, id)
  return row
}

/**
 * The steps of every create: a new id, the caller's account and mode, the timestamps; the insert,
 * where a unique index (never a read before the write) refuses a duplicate, so two racing creates
 * give one 201 and one 409; then the resource's `*.created` event, when it has one.
 */
export async function createResource<Row extends ResourceRow, Api extends ApiObject>(
  trx: Trx,
  auth: AuthContext,
  store: ResourceStore<Row, Api>,
  fields: Omit<Row, keyof ResourceRow>,
  event?: EventType,
): Promise<Api> {
  const now = clock.now()
  const row = {
    id: newId(store.prefix),
    ...ownedBy(auth),
    ...fields,
    created_at: now,
    updated_at: now,
  } as Row
  await refusingDuplicates(store, row, () => store.insert(trx, row))
  const created = store.toApi(row)
  if (event) await recordEvent(trx, auth, event, created)
  return created
}

/** One update as the shared steps saw it, for what a resource does after the write. */
export interface Change<Row, Api> {
  current: Row
  updated: Row
  /** The columns written, `updated_at` aside. */
  changes: Partial<Row>
  before: Api
  after: Api
  /** The old API values of the fields whose API value changed. */
  previous: Record<string, unknown>
}

export interface UpdateSteps<Row, Api> {
  /** The columns that really change (see `changedFields`), read from the locked row. */
  changes: (current: Row) => Partial<Row> | Promise<Partial<Row>>
  /** Rules on the merged state, checked before it is written (they may read other rows). */
  check?: (updated: Row) => void | Promise<void>
  /** The event of the update, with `previous_attributes`. */
  event?: EventType
  /** What else the update does once written: more events, revisions, stopping deliveries. */
  afterWrite?: (change: Change<Row, Api>) => Promise<void>
}

/**
 * The steps of every PATCH: the row locked (404 if none), the request diffed against it, nothing
 * written or emitted when nothing changes, the merged state checked and written with a new
 * `updated_at`, then the event with the changed fields' old values as `previous_attributes`.
 */
export async function updateResource<Row extends ResourceRow, Api extends ApiObject>(
  trx: Trx,
  auth: AuthContext,
  store: ResourceStore<Row, Api>,
  id: string,
  steps: UpdateSteps<Row, Api>,
): Promise<Api> {
  const current = await lockResource(trx, auth, store, id)
  const changes = await steps.changes(current)
  if (Object.keys(changes).length === 0) return store.toApi(current)
  const updated: Row = { ...current, ...changes, updated_at: clock.now() }
  await steps.check?.(updated)
  await refusingDuplicates(store, updated, () =>
    store.write(trx, id, { ...changes, updated_at: updated.updated_at }),
  )
  const before = store.toApi(current)
  const after = store.toApi(updated)
  const previous = previousAttributes(before, after)
  if (steps.event) await recordEvent(trx, auth, steps.event, after, { previousAttributes: previous })
  await steps.afterWrite?.({ current, updated, changes, before, after, previous })
  return after
}

async function refusingDuplicates<Row extends ResourceRow, Api extends ApiObject>(
  store: ResourceStore<Row, Api>,
  row: Row,
  write: () => Promise<void>,
): Promise<void> {
  try {
    await write()
  } catch (error) {
    if (store.duplicate && isUniqueViolation(error)) throw store.duplicate(row)
    throw error
  }
}
