/**
 * What a scheduled attempt's outcome means for its delivery and endpoint: succeed, retry at a given
 * time, fail, or fail and disable the endpoint. Pure: the caller reads the facts under the
 * endpoint's lock and writes the decision (outcomes.ts). The API document (http/openapi.ts) takes
 * its numbers from the constants here.
 */

/** Scheduled attempts per delivery: the first and five retries. */
export const MAX_SCHEDULED_ATTEMPTS = 6
/** The delay after the first failed attempt… */
export const FIRST_RETRY_DELAY_MS = 60_000
/** …and after the fifth: the schedule grows geometrically from a minute to an hour. */
export const LAST_RETRY_DELAY_MS = 3_600_000
/**
 * The delay before attempt n+1 after n failed attempts (n = 1…5): 60 s × 60^((n−1)/4), so 60 s,
 * ~2.8 min, ~7.7 min, ~21.5 min, 60 min, before jitter and WEBHOOK_BACKOFF_SCALE.
 */
export const RETRY_DELAYS_MS: readonly number[] = Array.from(
  { length: MAX_SCHEDULED_ATTEMPTS - 1 },
  (_, n) =>
    FIRST_RETRY_DELAY_MS * (LAST_RETRY_DELAY_MS / FIRST_RETRY_DELAY_MS) ** (n / (MAX_SCHEDULED_ATTEMPTS - 2)),
)
/** ±10 %, so that many deliveries failing together do not retry in lockstep. */
export const RETRY_JITTER = 0.1
/** The statuses whose Retry-After is honoured, when it asks for longer than the schedule. */
export const RETRY_AFTER_STATUSES: readonly number[] = [429, 503]
/** A receiver cannot hold a delivery back longer than this (× WEBHOOK_BACKOFF_SCALE). */
export const RETRY_AFTER_CAP_MS = 3_600_000
/** The receiver says the endpoint is gone: the delivery fails at once, never retried. */
export const GONE_STATUS = 410

export function isSuccessStatus(statusCode: number | null): boolean {
  return statusCode !== null && statusCode >= 200 && statusCode < 300
}

export interface AttemptResult {
  /** null: no answer (timeout, refused address, connection error). */
  statusCode: number | null
  /** The receiver's Retry-After in ms, if it sent one. */
  retryAfterMs: number | null
}

export interface DecisionContext {
  now: number
  /** WEBHOOK_BACKOFF_SCALE: every delay and the Retry-After cap are multiplied by it. */
  backoffScale: number
  /** WEBHOOK_DISABLE_THRESHOLD: consecutive failed deliveries that disable an endpoint. */
  disableThreshold: number
  /** A uniform draw from [0, 1) that places the delay within the jitter (Math.random() when sending). */
  jitter: number
}

export type Decision =
  | { action: 'succeed' }
  | { action: 'retry'; at: number }
  | { action: 'fail' }
  /** Fail the delivery and disable its endpoint; `failures` counts this delivery. */
  | { action: 'disable'; failures: number }

/**
 * @param attempts the delivery's scheduled attempts so far, this one included
 * @param endpointFailures the endpoint's consecutive failed deliveries before this one (a 2xx
 *   resets it)
 */
export function decideAfterAttempt(
  outcome: AttemptResult,
  attempts: number,
  endpointFailures: number,
  context: DecisionContext,
): Decision {
  if (isSuccessStatus(outcome.statusCode)) return { action: 'succeed' }
  if (outcome.statusCode === GONE_STATUS || attempts >= MAX_SCHEDULED_ATTEMPTS) {
    const failures = endpointFailures + 1
    return failures >= context.disableThreshold ? { action: 'disable', failures } : { action: 'fail' }
  }
  return { action: 'retry', at: context.now + retryDelayMs(outcome, attempts, context) }
}

/** Only reached below MAX_SCHEDULED_ATTEMPTS, so 1 ≤ failedAttempts ≤ RETRY_DELAYS_MS.length. */
function retryDelayMs(outcome: AttemptResult, failedAttempts: number, context: DecisionContext): number {
  const base = RETRY_DELAYS_MS[failedAttempts - 1] as number
  const jittered = base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * context.jitter) * context.backoffScale
  const honoured = outcome.statusCode !== null && RETRY_AFTER_STATUSES.includes(outcome.statusCode)
  const retryAfterMs = honoured ? outcome.retryAfterMs : null
  if (retryAfterMs === null) return Math.round(jittered)
  return Math.round(Math.min(Math.max(jittered, retryAfterMs), RETRY_AFTER_CAP_MS * context.backoffScale))
}
