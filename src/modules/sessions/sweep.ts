import type { AuthContext } from '../../core/identity.js'
import { sessionsClosedBySweep } from '../../core/metrics.js'
import { FirstStatistics } from '../../db/statistics.js'
import type { Db } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { Repeating } from '../../lib/repeating.js'
import { closeForgottenCheckOut, MAX_SHIFT_MS } from './lifecycle.js'
import { findOpenSessionsCheckedInBefore } from './repository.js'

/** Open sessions read per pass of the sweep's query; a pass repeats it until fewer come back. */
const SWEEP_BATCH = 100

/**
 * The key id a change made by the service itself is recorded with (in a revision's `key_id`):
 * no API key asked for it.
 */
export const SERVICE_KEY_ID = 'service'

interface Logger {
  error(obj: object, msg?: string): void
}

export interface SweepOptions {
  /** Time between passes; the decisions promise a forgotten check-out closed within a minute. */
  intervalMs: number
}

/**
 * Closes forgotten check-outs: every open session older than 16 hours is closed as flagged
 * `max_shift_exceeded`, as the operator's next scan would, so a shift without a check-out never
 * stays open for days. Runs wherever the webhook worker runs (the API with WORKER=inline, `cli
 * worker`); any number may run against one database: each closure is decided under the
 * operator's lock (`closeForgottenCheckOut`), so each session is closed, and flagged, once.
 *
 * Its start also starts the first ANALYZE of the tables that need one (`db/statistics.ts`, sessions
 * among them): every process that does the service's background work runs this sweep, and the
 * webhook worker keeps to delivering.
 */
export class ForgottenCheckOutSweep {
  private readonly loop: Repeating
  private readonly statistics: FirstStatistics

  constructor(
    private readonly db: Db,
    options: SweepOptions,
    log: Logger,
  ) {
    this.statistics = new FirstStatistics(db, (error) =>
      log.error({ err: error }, 'could not analyse tables for their first statistics'),
    )
    this.loop = new Repeating(
      async () => {
        await this.sweep()
        return 'again'
      },
      options.intervalMs,
      (error) => log.error({ err: error }, 'sweep of forgotten check-outs failed'),
    )
  }

  start(): void {
    this.loop.start()
    this.statistics.start()
  }

  async stop(): Promise<void> {
    await Promise.all([this.loop.stop(), this.statistics.stop()])
  }

  /** One pass: closes every session that is open and older than 16 hours now; returns how many. */
  async sweep(): Promise<number> {
    const before = clock.now() - MAX_SHIFT_MS
    let closed = 0
    for (;;) {
      const forgotten = await findOpenSessionsCheckedInBefore(this.db, before, SWEEP_BATCH)
      for (const session of forgotten) {
        const auth: AuthContext = {
          principalId: SERVICE_KEY_ID,
          locationIds: null,
          accountId: session.account_id,
          livemode: session.livemode === 1,
        }
        const result = await this.db
          .transaction()
          .execute((trx) => closeForgottenCheckOut(trx, auth, session.operator_id, before))
        if (result) {
          closed += 1
          sessionsClosedBySweep.inc()
        }
      }
      // A full batch may hide more; the ones just read are closed now (by this pass or another
      // worker), so the next query moves on.
      if (forgotten.length < SWEEP_BATCH) return closed
    }
  }
}
