import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { instantOf } from '../../core/instants.js'
import { ownedBy } from '../../db/scope.js'
import type { Db, Executor, Trx } from '../../db/types.js'
import { changedFields } from '../../lib/changes.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { toIso } from '../../lib/time.js'
import { recordEvent } from '../events/outbox.js'
import type { DeliveryRetention } from '../events/retention.js'
import { eventPayloads, eventsBetween } from '../events/service.js'
import {
  createResource,
  listService,
  type ResourceStore,
  retrieveResource,
  updateResource,
} from '../shared/resources.js'
import {
  attemptsOf,
  failedDeliveryIds,
  failPendingDeliveries,
  findDelivery,
  insertDeliveries,
  listDeliveryRows,
  newDeliveryRow,
  requeueFailedDeliveries,
  toDelivery,
} from './delivery-repository.js'
import { recordResend } from './outcomes.js'
import {
  deleteEndpointRow,
  type EndpointRow,
  findEndpoint,
  insertEndpoint,
  listEndpointRows,
  lockEndpoint,
  subscriberOf,
  toEndpoint,
  updateEndpointRow,
} from './repository.js'
import {
  deleteDeliveries,
  eventIdsWithDeliveries,
  lockFinishedDeliveriesBefore,
} from './retention-repository.js'
import type {
  CreateEndpointBody,
  RecoverBody,
  RotateSecretBody,
  UpdateEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookRecovery,
} from './schemas.js'
import type { DeliverySender } from './sender.js'
import { generateSigningSecret } from './signature.js'
import {
  checkEnabledEvents,
  ENDPOINT_DISABLED_EVENT_TYPE,
  receives,
  subjectEndpointIdOf,
  TEST_EVENT_TYPE,
} from './subscription.js'
import { checkEndpointUrl, type HostLookup, UnsafeUrlError } from './url-policy.js'

/** The pending deliveries' backlog, read by the metrics gauges at each scrape. */
export { pendingDeliveryBacklog } from './delivery-repository.js'

export interface UrlPolicy {
  allowPrivate: boolean
  lookup?: HostLookup
}

async function safeUrl(raw: string, policy: UrlPolicy): Promise<string> {
  try {
    return (await checkEndpointUrl(raw, policy)).toString()
  } catch (error) {
    if (error instanceof UnsafeUrlError) throw errors.invalidUrl(error.message)
    throw error
  }
}

const endpoints: ResourceStore<EndpointRow, WebhookEndpoint> = {
  name: 'webhook_endpoint',
  prefix: 'we',
  find: findEndpoint,
  insert: insertEndpoint,
  write: updateEndpointRow,
  toApi: toEndpoint,
}

export async function createEndpoint(
  trx: Trx,
  auth: AuthContext,
  input: CreateEndpointBody,
  policy: UrlPolicy,
): Promise<WebhookEndpointWithSecret> {
  const secret = generateSigningSecret()
  const endpoint = await createResource(trx, auth, endpoints, {
    url: await safeUrl(input.url, policy),
    description: input.description ?? null,
    enabled_events: JSON.stringify(checkEnabledEvents(input.enabled_events)),
    status: 'enabled',
    disabled_reason: null,
    secret,
    previous_secret: null,
    previous_secret_expires_at: null,
    consecutive_failures: 0,
  })
  return { ...endpoint, secret }
}

export function retrieveEndpoint(db: Executor, auth: AuthContext, id: string): Promise<WebhookEndpoint> {
  return retrieveResource(db, auth, endpoints, id)
}

export const listEndpoints = listService(listEndpointRows, toEndpoint)

/**
 * `{"status": "enabled"}` re-enables an auto-disabled endpoint and clears its failure count;
 * `{"status": "disabled"}` pauses it by hand (`disabled_reason` `manual`).
 */
export async function updateEndpoint(
  trx: Trx,
  auth: AuthContext,
  id: string,
  input: UpdateEndpointBody,
  policy: UrlPolicy,
): Promise<WebhookEndpoint> {
  return updateResource(trx, auth, endpoints, id, {
    changes: async (current) => {
      const statusChange =
        input.status === undefined || input.status === current.status
          ? {}
          : input.status === 'enabled'
            ? { status: 'enabled' as const, disabled_reason: null, consecutive_failures: 0 }
            : { status: 'disabled' as const, disabled_reason: 'manual' }
      return {
        ...changedFields(current, {
          url: input.url === undefined ? undefined : await safeUrl(input.url, policy),
          description: input.description,
          enabled_events:
            input.enabled_events === undefined
              ? undefined
              : JSON.stringify(checkEnabledEvents(input.enabled_events)),
        }),
        ...statusChange,
      }
    },
    afterWrite: async ({ changes, updated }) => {
      if (changes.status === 'disabled') await failPendingDeliveries(trx, id, updated.updated_at)
    },
  })
}

export async function deleteEndpoint(trx: Trx, auth: AuthContext, id: string) {
  const current = await findEndpoint(trx, auth, id, true)
  if (!current) throw errors.notFound('webhook_endpoint', id)
  await failPendingDeliveries(trx, id, clock.now())
  await deleteEndpointRow(trx, id)
  return { object: 'webhook_endpoint' as const, id, deleted: true as const }
}

/**
 * A new secret applies at once; the previous one stays valid (every delivery signed with both) for
 * `grace_hours` (default 24, 0 to 168; 0 drops it at once).
 */
export async function rotateSecret(
  trx: Trx,
  auth: AuthContext,
  id: string,
  input: RotateSecretBody,
): Promise<WebhookEndpointWithSecret> {
  const current = await findEndpoint(trx, auth, id, true)
  if (!current) throw errors.notFound('webhook_endpoint', id)
  const now = clock.now()
  const graceMs = Math.round((input.grace_hours ?? 24) * 3_600_000)
  const changes = {
    secret: generateSigningSecret(),
    previous_secret: graceMs > 0 ? current.secret : null,
    previous_secret_expires_at: graceMs > 0 ? now + graceMs : null,
    updated_at: now,
  }
  await updateEndpointRow(trx, id, changes)
  return { ...toEndpoint({ ...current, ...changes }), secret: changes.secret }
}

/**
 * send-test: a `webhook_endpoint.test` event (kept in the events table, marked dispatched so no
 * subscription picks it up) and one delivery of it to this endpoint alone, due now.
 */
export async function sendTestEvent(trx: Trx, auth: AuthContext, id: string): Promise<WebhookDelivery> {
  const endpoint = await findEndpoint(trx, auth, id)
  if (!endpoint) throw errors.notFound('webhook_endpoint', id)
  if (endpoint.status !== 'enabled') throw errors.endpointDisabled(id)
  const event = await recordEvent(trx, auth, TEST_EVENT_TYPE, toEndpoint(endpoint), { dispatched: true })
  const now = clock.now()
  const delivery = {
    id: newId('whd'),
    ...ownedBy(auth),
    endpoint_id: id,
    event_id: event.id,
    event_type: TEST_EVENT_TYPE,
    status: 'pending' as const,
    scheduled_attempts: 0,
    next_attempt_at: now,
    locked_until: null,
    created_at: now,
    updated_at: now,
  }
  await insertDeliveries(trx, [delivery])
  return toDelivery(delivery, [])
}

/** The delivery log's filters as the query gives them; the times are ISO-8601 instants. */
export interface DeliveryQuery {
  endpoint_id?: string | undefined
  event_id?: string | undefined
  status?: WebhookDelivery['status'] | undefined
  created_from?: string | undefined
  created_to?: string | undefined
}

/** A page of the delivery log, newest first, each delivery with its attempts (one query for all). */
export async function listDeliveries(
  db: Executor,
  auth: AuthContext,
  query: DeliveryQuery,
  beforeId: string | undefined,
  take: number,
): Promise<WebhookDelivery[]> {
  const rows = await listDeliveryRows(
    db,
    auth,
    {
      ...query,
      createdFrom:
        query.created_from === undefined ? undefined : instantOf(query.created_from, 'created_from'),
      createdTo: query.created_to === undefined ? undefined : instantOf(query.created_to, 'created_to'),
    },
    beforeId,
    take,
  )
  const attempts = await attemptsOf(
    db,
    rows.map((row) => row.id),
  )
  return rows.map((row) => toDelivery(row, attempts.get(row.id) ?? []))
}

export async function retrieveDelivery(
  db: Executor,
  auth: AuthContext,
  id: string,
): Promise<WebhookDelivery> {
  const row = await findDelivery(db, auth, id)
  if (!row) throw errors.notFound('webhook_delivery', id)
  return toDelivery(row, (await attemptsOf(db, [row.id])).get(row.id) ?? [])
}

/**
 * resend: one more attempt of the same delivery (same `whd_` id), now, whatever its status; answers
 * the delivery with that attempt. It opens its own transaction, after the attempt: one held open
 * through an HTTP request (up to WEBHOOK_TIMEOUT_MS) would block writers, on SQLite all of them.
 */
export async function resendDelivery(
  db: Db,
  auth: AuthContext,
  id: string,
  sender: DeliverySender,
): Promise<WebhookDelivery> {
  const delivery = await findDelivery(db, auth, id)
  if (!delivery) throw errors.notFound('webhook_delivery', id)
  const endpoint = await findEndpoint(db, auth, delivery.endpoint_id)
  if (!endpoint) throw errors.notFound('webhook_endpoint', delivery.endpoint_id)
  if (endpoint.status !== 'enabled') throw errors.endpointDisabled(endpoint.id)
  const payload = (await eventPayloads(db, [delivery.event_id])).get(delivery.event_id)
  if (payload === undefined) throw errors.notFound('event', delivery.event_id)
  const outcome = await sender.send(delivery, endpoint, payload)
  await db.transaction().execute((trx) => recordResend(trx, { delivery, endpoint, outcome }))
  const updated = await findDelivery(db, auth, delivery.id)
  if (!updated) throw errors.notFound('webhook_delivery', delivery.id)
  return toDelivery(updated, (await attemptsOf(db, [updated.id])).get(updated.id) ?? [])
}

/** How far back a recover may reach (events and deliveries are kept at least this long). */
export const RECOVER_MAX_LOOKBACK_MS = 14 * 24 * 3_600_000
/**
 * Rows a recover reads and writes per transaction: each batch is a short write (on SQLite the one
 * write lock is held for a batch, not for the whole recover) and memory stays bounded.
 */
export const RECOVER_BATCH = 1000
/**
 * Each batch falls due this long after the previous one. The worker sends an endpoint's due
 * deliveries at its usual pace anyway (its window); the spacing keeps a huge recover from putting
 * 100,000 rows at the head of the due index at once, where every other endpoint's claim would have
 * to read past them.
 */
export const RECOVER_BATCH_SPACING_MS = 1000

/**
 * recover: for the window [since, until) (never before the endpoint's creation), puts the
 * endpoint's failed deliveries back to pending for a new round of scheduled attempts (same `whd_`
 * ids), and creates the deliveries of the window's events the endpoint should have had and never
 * got (it was disabled when they were dispatched; one not dispatched yet gets its delivery here or
 * from the dispatcher, whichever comes first). Batches of its own transactions, each of which
 * checks under the endpoint's lock that it is still enabled. Safe to repeat: only failed rows are
 * requeued, and the unique (event, endpoint) index refuses a second delivery of an event.
 */
export async function recoverEndpoint(
  db: Db,
  auth: AuthContext,
  id: string,
  input: RecoverBody,
): Promise<WebhookRecovery> {
  const startedAt = clock.now()
  const since = instantOf(input.since, 'since')
  const until = input.until === undefined ? startedAt : instantOf(input.until, 'until')
  if (since < startedAt - RECOVER_MAX_LOOKBACK_MS)
    throw errors.invalidValue('since', 'since must be at most 14 days ago.')
  if (until <= since)
    throw errors.invalidTimeRange(
      input.until === undefined ? 'since' : 'until',
      'until (default: now) must be after since.',
    )
  const endpoint = await findEndpoint(db, auth, id)
  if (!endpoint) throw errors.notFound('webhook_endpoint', id)
  if (endpoint.status !== 'enabled') throw errors.endpointDisabled(id)
  const window = { from: Math.max(since, endpoint.created_at), to: until }

  let batch = 0
  /** One batch's transaction, after checking that the endpoint is still there and enabled. */
  const writeBatch = (write: (trx: Trx, dueAt: number) => Promise<number>) => {
    const dueAt = startedAt + batch * RECOVER_BATCH_SPACING_MS
    batch += 1
    return db.transaction().execute(async (trx) => {
      const locked = await lockEndpoint(trx, id)
      if (!locked) throw errors.notFound('webhook_endpoint', id)
      if (locked.status !== 'enabled') throw errors.endpointDisabled(id)
      return write(trx, dueAt)
    })
  }

  let recovered = 0
  for (let afterId = ''; ; ) {
    const ids = await failedDeliveryIds(db, id, window, afterId, RECOVER_BATCH)
    if (ids.length === 0) break
    recovered += await writeBatch((trx, dueAt) => requeueFailedDeliveries(trx, ids, dueAt, clock.now()))
    afterId = ids[ids.length - 1] as string
  }

  const subscriber = subscriberOf(endpoint)
  let created = 0
  for (let after: { created_at: number; id: string } | undefined; ; ) {
    const events = await eventsBetween(db, endpoint, window, after, RECOVER_BATCH)
    if (events.length === 0) break
    after = events[events.length - 1]
    const subjects = await eventPayloads(
      db,
      events.filter((e) => e.type === ENDPOINT_DISABLED_EVENT_TYPE).map((e) => e.id),
    )
    const receivable = events.filter((event) => {
      const payload = subjects.get(event.id)
      return receives(subscriber, { ...event, subjectEndpointId: payload && subjectEndpointIdOf(payload) })
    })
    if (receivable.length === 0) continue
    created += await writeBatch(async (trx, dueAt) => {
      const now = clock.now()
      let inserted = 0
      // 500 rows of 12 parameters per INSERT: far below either dialect's limit.
      for (let i = 0; i < receivable.length; i += 500)
        inserted += await insertDeliveries(
          trx,
          receivable.slice(i, i + 500).map((event) => newDeliveryRow(event, id, now, dueAt)),
        )
      return inserted
    })
  }

  return {
    object: 'webhook_recovery',
    endpoint_id: id,
    since: toIso(since),
    until: toIso(until),
    recovered,
    created,
  }
}

/**
 * The deliveries' part of retention (modules/events/retention.ts, which app.ts hands this to):
 * finished deliveries past the window go with their attempts; a pending one stays until it is sent
 * or fails, and its event with it.
 */
export const deliveryRetention: DeliveryRetention = {
  async deleteFinishedBefore(trx, before, after, limit) {
    const rows = await lockFinishedDeliveriesBefore(trx, { before, after, limit })
    const deleted = await deleteDeliveries(
      trx,
      rows.map((r) => r.id),
    )
    return { read: rows.length, last: rows.at(-1), ...deleted }
  },
  eventsWithDeliveries: eventIdsWithDeliveries,
}
