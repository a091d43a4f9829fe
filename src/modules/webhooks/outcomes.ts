/** What an attempt's outcome does to its delivery and endpoint, written in the caller's transaction. */
import type { AuthContext } from '../../core/identity.js'
import type { DeliveryOutcome } from '../../core/metrics.js'
import type { Trx } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { groupBy } from '../../lib/group.js'
import { newId } from '../../lib/ids.js'
import { recordEvent } from '../events/outbox.js'
import type { AttemptOutcome } from './attempt.js'
import {
  type AttemptRow,
  type DeliveryRow,
  failPendingDeliveries,
  insertAttempt,
  insertAttempts,
  markDeliveriesSucceeded,
  releaseDeliveries,
  updateDeliveryRow,
  updatePendingDelivery,
} from './delivery-repository.js'
import { decideAfterAttempt, isSuccessStatus } from './policy.js'
import {
  countExhaustedDelivery,
  disableEnabledEndpoint,
  type EndpointRow,
  lockEndpoint,
  resetConsecutiveFailures,
  toEndpoint,
  updateEndpointRow,
} from './repository.js'
import { ENDPOINT_DISABLED_EVENT_TYPE } from './subscription.js'

export interface FinishedAttempt {
  delivery: DeliveryRow
  endpoint: EndpointRow
  outcome: AttemptOutcome
}

export interface FailureSettings {
  backoffScale: number
  disableThreshold: number
}

function attemptRow(deliveryId: string, kind: AttemptRow['kind'], outcome: AttemptOutcome): AttemptRow {
  return {
    id: newId('wha'),
    delivery_id: deliveryId,
    kind,
    attempted_at: outcome.attemptedAt,
    status_code: outcome.statusCode,
    duration_ms: outcome.durationMs,
    error: outcome.error,
    response_excerpt: outcome.responseExcerpt,
  }
}

/**
 * Records succeeded scheduled attempts in a few multi-row statements: the attempts, the
 * deliveries (one UPDATE per attempt number) and the reset of their endpoints' failure runs.
 */
export async function recordSuccesses(trx: Trx, succeeded: FinishedAttempt[]): Promise<void> {
  const now = clock.now()
  await insertAttempts(
    trx,
    succeeded.map((f) => attemptRow(f.delivery.id, 'scheduled', f.outcome)),
  )
  const byAttempts = groupBy(succeeded, (f) => f.delivery.scheduled_attempts + 1)
  // Endpoints before deliveries: the lock order every endpoint-and-delivery transaction keeps.
  await resetConsecutiveFailures(trx, [...new Set(succeeded.map((f) => f.endpoint.id))].sort())
  for (const [attempts, group] of byAttempts)
    await markDeliveriesSucceeded(
      trx,
      group.map((f) => f.delivery.id),
      attempts,
      now,
    )
}

/** What recordFailure decided: the delivery's outcome, and the endpoint's failure count if it disabled it. */
export interface FailureRecord {
  outcome: Exclude<DeliveryOutcome, 'succeeded'>
  disabledAfter?: number
}

/**
 * A failed scheduled attempt (successes go to recordSuccesses): retry later, or give up and maybe
 * auto-disable the endpoint, as the policy decides.
 */
export async function recordFailure(
  trx: Trx,
  { delivery, endpoint, outcome }: FinishedAttempt,
  settings: FailureSettings,
): Promise<FailureRecord> {
  // A deleted endpoint's deliveries were stopped with it, so no count of its is needed below.
  const locked = await lockEndpoint(trx, endpoint.id)
  const endpointFailures = locked?.consecutive_failures ?? 0
  await insertAttempt(trx, attemptRow(delivery.id, 'scheduled', outcome))
  const now = clock.now()
  const attempts = delivery.scheduled_attempts + 1
  const decision = decideAfterAttempt(outcome, attempts, endpointFailures, {
    now,
    ...settings,
    jitter: Math.random(),
  })
  const retry = decision.action === 'retry'
  const stillPending = await updatePendingDelivery(trx, delivery.id, {
    ...(retry ? { next_attempt_at: decision.at } : { status: 'failed', next_attempt_at: null }),
    scheduled_attempts: attempts,
    locked_until: null,
    updated_at: now,
  })
  // A delivery stopped while this attempt was in flight (endpoint disabled or deleted) does not
  // count against the endpoint again; it only gives its lease back, so that a recover of it is
  // sent at once rather than when the lease runs out.
  if (!stillPending) {
    if (delivery.locked_until !== null) await releaseDeliveries(trx, [delivery.id], delivery.locked_until)
    return { outcome: 'stopped' }
  }
  if (retry) return { outcome: 'retry' }
  await countExhaustedDelivery(trx, endpoint.id)
  if (decision.action !== 'disable' || locked === undefined) return { outcome: 'failed' }
  const reason = `${decision.failures} consecutive deliveries failed`
  // Under the endpoint's lock, and only if it was still enabled: one disablement, one event.
  if (!(await disableEnabledEndpoint(trx, endpoint.id, reason, now))) return { outcome: 'failed' }
  await failPendingDeliveries(trx, endpoint.id, now)
  await recordDisabledEvent(trx, {
    ...locked,
    consecutive_failures: locked.consecutive_failures + 1,
    status: 'disabled',
    disabled_reason: reason,
    updated_at: now,
  })
  return { outcome: 'failed', disabledAfter: decision.failures }
}

/**
 * `webhook_endpoint.disabled`, in the transaction that disabled the endpoint: nobody else would
 * learn that the service stopped delivering. `toEndpoint` never carries the secret. The event
 * belongs to the endpoint's account and mode; the service, not a key, is its author.
 */
async function recordDisabledEvent(trx: Trx, endpoint: EndpointRow): Promise<void> {
  const owner: AuthContext = {
    principalId: 'webhook_worker',
    locationIds: null,
    accountId: endpoint.account_id,
    livemode: endpoint.livemode === 1,
  }
  await recordEvent(trx, owner, ENDPOINT_DISABLED_EVENT_TYPE, toEndpoint(endpoint))
}

/**
 * A resend's attempt, outside the schedule: a success marks the delivery succeeded (and counts as
 * a 2xx for the endpoint); a failure changes nothing else and does not count towards auto-disable.
 */
export async function recordResend(
  trx: Trx,
  { delivery, endpoint, outcome }: FinishedAttempt,
): Promise<void> {
  await insertAttempt(trx, attemptRow(delivery.id, 'resend', outcome))
  const now = clock.now()
  if (!isSuccessStatus(outcome.statusCode)) {
    await updateDeliveryRow(trx, delivery.id, { updated_at: now })
    return
  }
  await updateDeliveryRow(trx, delivery.id, {
    status: 'succeeded',
    next_attempt_at: null,
    updated_at: now,
  })
  await updateEndpointRow(trx, endpoint.id, { consecutive_failures: 0 })
}
