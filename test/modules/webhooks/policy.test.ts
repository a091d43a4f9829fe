import { describe, expect, it } from 'vitest'
import {
  type AttemptResult,
  type Decision,
  type DecisionContext,
  decideAfterAttempt,
  MAX_SCHEDULED_ATTEMPTS,
  RETRY_DELAYS_MS,
} from '../../../src/modules/webhooks/policy.js'

const NOW = 1_000_000
/** jitter 0.5 is the middle of the ±10 %: the delay is the schedule's own. */
const context: DecisionContext = { now: NOW, backoffScale: 1, disableThreshold: 5, jitter: 0.5 }

const status = (statusCode: number | null, retryAfterMs: number | null = null): AttemptResult => ({
  statusCode,
  retryAfterMs,
})
const retryIn = (ms: number): Decision => ({ action: 'retry', at: NOW + ms })

interface Row {
  name: string
  outcome: AttemptResult
  /** Scheduled attempts so far, this one included. */
  attempts: number
  endpointFailures?: number
  context?: Partial<DecisionContext>
  expected: Decision
}

const rows: Row[] = [
  // 2xx
  { name: '200 on the first attempt', outcome: status(200), attempts: 1, expected: { action: 'succeed' } },
  {
    name: '299 on the last attempt, at the threshold',
    outcome: status(299),
    attempts: 6,
    endpointFailures: 4,
    expected: { action: 'succeed' },
  },
  {
    name: '204 with a Retry-After',
    outcome: status(204, 5000),
    attempts: 2,
    expected: { action: 'succeed' },
  },

  // The schedule: 60 s × 60^((n−1)/4)
  { name: '500 after attempt 1', outcome: status(500), attempts: 1, expected: retryIn(60_000) },
  { name: '500 after attempt 2', outcome: status(500), attempts: 2, expected: retryIn(166_989) },
  { name: '500 after attempt 3', outcome: status(500), attempts: 3, expected: retryIn(464_758) },
  { name: '500 after attempt 4', outcome: status(500), attempts: 4, expected: retryIn(1_293_495) },
  { name: '500 after attempt 5', outcome: status(500), attempts: 5, expected: retryIn(3_600_000) },
  {
    name: 'a retry never disables, whatever the endpoint failures',
    outcome: status(500),
    attempts: 1,
    endpointFailures: 100,
    expected: retryIn(60_000),
  },
  {
    name: 'jitter at its low end: −10 %',
    outcome: status(500),
    attempts: 1,
    context: { jitter: 0 },
    expected: retryIn(54_000),
  },
  {
    name: 'jitter at its high end: +10 %',
    outcome: status(500),
    attempts: 1,
    context: { jitter: 1 - 1e-9 },
    expected: retryIn(66_000),
  },
  {
    name: 'WEBHOOK_BACKOFF_SCALE scales the schedule',
    outcome: status(500),
    attempts: 1,
    context: { backoffScale: 0.0005 },
    expected: retryIn(30),
  },

  // 3xx: redirects are not followed
  { name: '301 is a failure', outcome: status(301), attempts: 1, expected: retryIn(60_000) },
  { name: '302 is a failure', outcome: status(302), attempts: 2, expected: retryIn(166_989) },
  { name: '304 is a failure', outcome: status(304), attempts: 6, expected: { action: 'fail' } },

  // No answer
  { name: 'a timeout or network error', outcome: status(null), attempts: 1, expected: retryIn(60_000) },
  { name: 'a timeout on the last attempt', outcome: status(null), attempts: 6, expected: { action: 'fail' } },

  // Retry-After: on 429 and 503 only, when longer than the schedule, capped at 1 h × scale
  {
    name: '429 with a Retry-After shorter than the schedule',
    outcome: status(429, 1000),
    attempts: 1,
    expected: retryIn(60_000),
  },
  {
    name: '429 with a Retry-After longer than the schedule',
    outcome: status(429, 120_000),
    attempts: 1,
    expected: retryIn(120_000),
  },
  { name: '429 without a Retry-After', outcome: status(429), attempts: 1, expected: retryIn(60_000) },
  {
    name: '503 with a Retry-After longer than the schedule',
    outcome: status(503, 900_000),
    attempts: 2,
    expected: retryIn(900_000),
  },
  {
    name: '503 with a Retry-After beyond the cap',
    outcome: status(503, 7_200_000),
    attempts: 1,
    expected: retryIn(3_600_000),
  },
  {
    name: '503 with a Retry-After beyond the cap × WEBHOOK_BACKOFF_SCALE',
    outcome: status(503, 3_600_000),
    attempts: 1,
    context: { backoffScale: 0.0005 },
    expected: retryIn(1800),
  },
  {
    name: '429 with a Retry-After within the scaled cap',
    outcome: status(429, 1000),
    attempts: 1,
    context: { backoffScale: 0.0005 },
    expected: retryIn(1000),
  },
  {
    name: 'a Retry-After caps a jittered schedule above the cap too',
    outcome: status(429, 0),
    attempts: 5,
    context: { jitter: 1 - 1e-9 },
    expected: retryIn(3_600_000),
  },
  {
    name: 'without a Retry-After the jittered schedule may exceed the cap',
    outcome: status(500),
    attempts: 5,
    context: { jitter: 1 - 1e-9 },
    expected: retryIn(3_960_000),
  },
  {
    name: 'a Retry-After on another status is ignored',
    outcome: status(500, 120_000),
    attempts: 1,
    expected: retryIn(60_000),
  },
  {
    name: 'a Retry-After on the last attempt does not extend it',
    outcome: status(429, 120_000),
    attempts: 6,
    expected: { action: 'fail' },
  },

  // 410 Gone: never retried, counts against the endpoint
  { name: '410 on the first attempt', outcome: status(410), attempts: 1, expected: { action: 'fail' } },
  {
    name: '410 with the endpoint one below the threshold',
    outcome: status(410),
    attempts: 1,
    endpointFailures: 4,
    expected: { action: 'disable', failures: 5 },
  },

  // Exhausted
  { name: '500 on the last attempt', outcome: status(500), attempts: 6, expected: { action: 'fail' } },
  {
    name: 'exhausted, the endpoint two below the threshold',
    outcome: status(500),
    attempts: 6,
    endpointFailures: 3,
    expected: { action: 'fail' },
  },
  {
    name: 'exhausted, reaching WEBHOOK_DISABLE_THRESHOLD',
    outcome: status(500),
    attempts: 6,
    endpointFailures: 4,
    expected: { action: 'disable', failures: 5 },
  },
  {
    name: 'exhausted, already past the threshold',
    outcome: status(500),
    attempts: 6,
    endpointFailures: 7,
    expected: { action: 'disable', failures: 8 },
  },
  {
    name: 'exhausted with a threshold of 1',
    outcome: status(null),
    attempts: 6,
    context: { disableThreshold: 1 },
    expected: { action: 'disable', failures: 1 },
  },
]

describe('decideAfterAttempt', () => {
  it.each(rows)('$name', ({ outcome, attempts, endpointFailures = 0, context: overrides, expected }) => {
    expect(decideAfterAttempt(outcome, attempts, endpointFailures, { ...context, ...overrides })).toEqual(
      expected,
    )
  })
})

describe('the schedule', () => {
  it(`has ${MAX_SCHEDULED_ATTEMPTS} attempts, from a minute to an hour apart`, () => {
    expect(MAX_SCHEDULED_ATTEMPTS).toBe(6)
    expect(RETRY_DELAYS_MS.map(Math.round)).toEqual([60_000, 166_989, 464_758, 1_293_495, 3_600_000])
  })
})
