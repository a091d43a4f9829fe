import type { Db } from '../../src/db/types.js'
import { waitUntil } from './assertions.js'
import { parked, type TestClock } from './clock.js'
import { dialect } from './database.js'

/**
 * The waits an app with WORKER=inline keeps on the clock while its loops are all parked: the webhook
 * worker's dispatcher and sender, the sweep of forgotten check-outs, retention's next pass and the
 * idempotency purge, and on PostgreSQL the first-statistics checks (no table of these tests reaches
 * the 1,000 rows that end them).
 */
export const INLINE_APP_WAITS = dialect === 'postgres' ? 6 : 5

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
