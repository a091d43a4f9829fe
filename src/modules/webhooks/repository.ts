import type { Selectable } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { supportsRowLocks } from '../../db/connection.js'
import { newestFirst } from '../../db/keyset.js'
import type { WebhookEndpointsTable } from '../../db/schema.js'
import { ownedBy } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import { toIso } from '../../lib/time.js'
import type { WebhookEndpoint } from './schemas.js'
import type { Subscriber } from './subscription.js'

/**
 * The endpoints' SQL (`webhook_endpoints`): the API's reads and writes, the relay's and the worker's
 * reads, and what an attempt's outcome changes on its endpoint. Deliveries and attempts are
 * `delivery-repository.ts`'s, retention's deletes `retention-repository.ts`'s.
 */

export type EndpointRow = Selectable<WebhookEndpointsTable>

export function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    object: 'webhook_endpoint',
    id: row.id,
    url: row.url,
    enabled_events: JSON.parse(row.enabled_events) as string[],
    description: row.description,
    status: row.status,
    disabled_reason: row.disabled_reason,
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    updated: toIso(row.updated_at),
  }
}

function ownedEndpoints(db: Executor, auth: AuthContext) {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
}

export async function findEndpoint(db: Executor, auth: AuthContext, id: string, lock = false) {
  return ownedEndpoints(db, auth)
    .where('id', '=', id)
    .$if(lock && supportsRowLocks(db), (q) => q.forUpdate())
    .executeTakeFirst()
}

export async function insertEndpoint(trx: Trx, row: EndpointRow) {
  await trx.insertInto('webhook_endpoints').values(row).execute()
}

export async function updateEndpointRow(db: Executor, id: string, changes: Partial<EndpointRow>) {
  await db.updateTable('webhook_endpoints').set(changes).where('id', '=', id).execute()
}

export async function deleteEndpointRow(trx: Trx, id: string) {
  await trx.deleteFrom('webhook_endpoints').where('id', '=', id).execute()
}

export async function listEndpointRows(
  db: Executor,
  auth: AuthContext,
  _filters: unknown,
  beforeId: string | undefined,
  take: number,
) {
  return ownedEndpoints(db, auth).$call(newestFirst(beforeId, take)).execute()
}

/** Enabled endpoints of the given accounts (both modes), for the dispatcher. */
export async function enabledEndpointsOf(db: Executor, accountIds: string[]) {
  if (accountIds.length === 0) return []
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', 'in', accountIds)
    .where('status', '=', 'enabled')
    .execute()
}

/** What `receives` needs to know of an endpoint. */
export function subscriberOf(row: EndpointRow): Subscriber {
  return { ...row, patterns: JSON.parse(row.enabled_events) as string[] }
}

export async function endpointsByIds(db: Executor, ids: string[]) {
  if (ids.length === 0) return []
  return db.selectFrom('webhook_endpoints').selectAll().where('id', 'in', ids).execute()
}

// ---- an attempt's outcome on its endpoint (outcomes.ts), and recover's lock

/**
 * Takes the endpoint's row lock first (PostgreSQL) and reads it (its run of failed deliveries,
 * its status), which then holds until the transaction ends (on SQLite, write transactions are
 * serial). Every transaction that touches an endpoint and its deliveries locks the endpoint before
 * the deliveries, so two of them never wait on each other in a cycle (an auto-disable fails the
 * other pending deliveries of its endpoint). Undefined when the endpoint was deleted.
 */
export async function lockEndpoint(trx: Trx, id: string): Promise<EndpointRow | undefined> {
  return trx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .$if(supportsRowLocks(trx), (q) => q.forUpdate())
    .executeTakeFirst()
}

/**
 * A 2xx ends an endpoint's run of failures. Rows already at 0 are not written (nor, on
 * PostgreSQL, locked), so concurrent workers do not queue on a busy endpoint's row.
 */
export async function resetConsecutiveFailures(trx: Trx, endpointIds: string[]) {
  if (endpointIds.length === 0) return
  await trx
    .updateTable('webhook_endpoints')
    .set({ consecutive_failures: 0 })
    .where('id', 'in', endpointIds)
    .where('consecutive_failures', '<>', 0)
    .execute()
}

/** Counts one more exhausted delivery, atomically. */
export async function countExhaustedDelivery(trx: Trx, endpointId: string): Promise<void> {
  await trx
    .updateTable('webhook_endpoints')
    .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1) }))
    .where('id', '=', endpointId)
    .execute()
}

/**
 * Disables an endpoint that is still enabled; false when it was not (so a disablement, and its
 * event, happens once).
 */
export async function disableEnabledEndpoint(
  trx: Trx,
  id: string,
  reason: string,
  now: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'enabled')
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}
