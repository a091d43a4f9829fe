import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Db, Executor, Trx } from '../../db/connection.js'
import { ownedBy } from '../../db/scope.js'
import { changedFields } from '../../lib/changes.js'
import { newId } from '../../lib/ids.js'
import { recordEvent } from '../events/outbox.js'
import { eventPayloads } from '../events/repository.js'
import {
  createResource,
  listService,
  type ResourceStore,
  retrieveResource,
  updateResource,
} from '../shared/resources.js'
import { recordResend } from './outcomes.js'
import {
  attemptsOf,
  deleteEndpointRow,
  type EndpointRow,
  failPendingDeliveries,
  findDelivery,
  findEndpoint,
  insertDeliveries,
  insertEndpoint,
  listEndpointRows,
  toDelivery,
  toEndpoint,
  updateEndpointRow,
} from './repository.js'
import type {
  CreateEndpointBody,
  RotateSecretBody,
  UpdateEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from './schemas.js'
import type { DeliverySender } from './sender.js'
import { generateSigningSecret } from './signature.js'
import { checkEnabledEvents, TEST_EVENT_TYPE } from './subscription.js'
import { checkEndpointUrl, type HostLookup, UnsafeUrlError } from './url-policy.js'

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
  await failPendingDeliveries(trx, id, Date.now())
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
  const now = Date.now()
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

/** The secrets a delivery is signed with now: the current one, and the previous during its grace. */
export function signingSecrets(endpoint: EndpointRow, now: number): string[] {
  const previousValid =
    endpoint.previous_secret !== null &&
    endpoint.previous_secret_expires_at !== null &&
    endpoint.previous_secret_expires_at > now
  return previousValid && endpoint.previous_secret
    ? [endpoint.secret, endpoint.previous_secret]
    : [endpoint.secret]
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
  const now = Date.now()
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
