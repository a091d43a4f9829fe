import { expect } from 'vitest'
import type { Db } from '../../src/db/types.js'
import { LAST_RETRY_DELAY_MS, RETRY_AFTER_CAP_MS } from '../../src/modules/webhooks/policy.js'
import { waitUntil } from './assertions.js'
import { parked, type TestClock } from './clock.js'
import { dialect } from './database.js'
import type { WebhookReceiver } from './webhook-receiver.js'

/**
 * The waits an app with WORKER=inline keeps on the clock while its loops are all parked: the webhook
 * worker's dispatcher and sender, the sweep of forgotten check-outs, retention's next pass and the
 * idempotency purge, and on PostgreSQL the first-statistics checks (no table of these tests reaches
 * the 1,000 rows that end them).
 */
export const INLINE_APP_WAITS = dialect === 'postgres' ? 6 : 5

/** Longer than any wait the schedule has (its last gap, or the Retry-After cap, plus jitter). */
export const PAST_THE_SCHEDULE_MS = 2 * Math.max(LAST_RETRY_DELAY_MS, RETRY_AFTER_CAP_MS)

/** The worker's poll when nothing wakes it (its default `pollMs`, src/modules/webhooks/worker.ts). */
export const WORKER_POLL_MS = 100

/** The pending deliveries to these endpoints: when each is due, and whether an attempt holds it. */
function pendingDeliveries(db: Db, endpointIds: string[]) {
  return db
    .selectFrom('webhook_deliveries')
    .select(['next_attempt_at', 'locked_until'])
    .where('endpoint_id', 'in', endpointIds)
    .where('status', '=', 'pending')
    .execute()
}

/**
 * When the next scheduled attempt of the endpoints' pending deliveries is due (epoch ms; undefined
 * when none is pending), once every attempt in flight is recorded (no pending delivery held) and the
 * app is parked (`waits`: INLINE_APP_WAITS for one app): from then on nothing is sent until the clock
 * moves, so a step to that time is what sends it, and at exactly that time.
 */
export async function nextAttemptAt(
  clock: TestClock,
  db: Db,
  endpointIds: string[],
  waits = INLINE_APP_WAITS,
): Promise<number | undefined> {
  for (;;) {
    await parked(clock, waits)
    const pending = await waitUntil(
      () => pendingDeliveries(db, endpointIds),
      (rows) => rows.every((row) => row.locked_until === null),
    )
    // Still parked after the read: no claim began meanwhile (a loop wakes before it claims).
    if (clock.pending !== waits) continue
    const due = pending.map((row) => Number(row.next_attempt_at))
    return due.length === 0 ? undefined : Math.max(clock.now(), Math.min(...due))
  }
}

/**
 * Steps the clock to `nextAttemptAt` and returns that time (undefined, not stepped, when none). An
 * attempt that fell due between two polls (two retries due within a poll of each other) is found by
 * the sender's next poll: then the step is that poll.
 */
export async function stepToNextAttempt(
  clock: TestClock,
  db: Db,
  endpointIds: string[],
  waits = INLINE_APP_WAITS,
): Promise<number | undefined> {
  const next = await nextAttemptAt(clock, db, endpointIds, waits)
  if (next === undefined) return undefined
  if (next > clock.now()) clock.set(next)
  else clock.advance(WORKER_POLL_MS)
  return clock.now()
}

/** The endpoints' deliveries an attempt holds (claimed, not yet recorded). */
export function heldDeliveries(db: Db, endpointIds: string[]) {
  return db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('endpoint_id', 'in', endpointIds)
    .where('locked_until', 'is not', null)
    .execute()
}

/**
 * Once the whole schedule's time has passed, the endpoint has had `count` requests at `path`. Waits
 * until nothing of the endpoint is pending or held (an attempt in flight is recorded after its answer
 * came), steps the clock past the longest wait the schedule has, lets the app's passes at that time
 * end (parked again) and waits the same way: a delivery any of them had sent would be counted.
 */
export async function expectNoMoreAttempts(
  { clock, db, receiver }: { clock: TestClock; db: Db; receiver: WebhookReceiver },
  endpointId: string,
  path: string,
  count: number,
): Promise<void> {
  const settled = () =>
    waitUntil(
      async () => [
        ...(await heldDeliveries(db, [endpointId])),
        ...(await pendingDeliveries(db, [endpointId])),
      ],
      (unsettled) => unsettled.length === 0,
    )
  await settled()
  await parked(clock, INLINE_APP_WAITS)
  clock.advance(PAST_THE_SCHEDULE_MS)
  await parked(clock, INLINE_APP_WAITS)
  await settled()
  expect(receiver.requestsTo(path)).toHaveLength(count)
}

/**
 * Waits until `done` holds for `read()` while the service's time passes: each look steps the clock
 * by a poll of the worker's, as real time would. For waits on a busy worker, which finds by its polls
 * what its wake-ups leave (work that became possible while it was between a claim and its wait);
 * a test about wake-ups keeps the clock still instead.
 */
export function waitWhileTimePasses<T>(
  clock: TestClock,
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs?: number,
): Promise<T> {
  return waitUntil(
    () => {
      clock.advance(WORKER_POLL_MS)
      return read()
    },
    done,
    { timeoutMs },
  )
}
