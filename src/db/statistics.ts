import { sql } from 'kysely'
import { Repeating } from '../lib/repeating.js'
import { supportsRowLocks } from './connection.js'
import type { Db } from './types.js'

const CHECK_EVERY_MS = 1000

/**
 * Tables whose plans go wrong without statistics, and so get their first ANALYZE from the service.
 *
 * - `events`, `webhook_deliveries`: without statistics PostgreSQL guesses that only a handful of rows
 *   are due and plans the claim (and the dispatcher's read) as a bitmap scan plus a sort. A bitmap
 *   scan reads every entry of the partial index, dead ones included, and never marks them dead, so
 *   each poll costs more as deliveries finish: measured 54 ms per claim on 100,000 rows, against
 *   0.2 ms once analysed (the plain index scan it then picks stops after the rows it needs and marks
 *   the dead entries it passes).
 * - `sessions`: with a dozen indexes starting with (account_id, livemode), PostgreSQL without
 *   statistics read the overlap check of every create through `sessions_review` and filtered the
 *   account's whole table: 2.7 ms at 6,400 sessions and growing with them, against 0.04 ms through
 *   `sessions_operator_check_in` once analysed (docs/performance.md).
 */
/**
 * - `operators`: without statistics PostgreSQL took `operators_active` (account, mode, is_active, id)
 *   for the look-up by ident that every create and scan locks, and filtered the account's operators:
 *   157 shared blocks a create at 200 operators, against 3 through `operators_ident` once analysed
 *   (pg_stat_statements under `BENCH_PG_STATEMENTS=1 npm run bench:http`, docs/performance.md). A
 *   plant's roster is small, so its first statistics come at fewer rows.
 *
 * Each with the rows it needs before its first statistics say anything.
 */
const TABLES = { events: 1000, webhook_deliveries: 1000, sessions: 1000, operators: 100 } as const

/**
 * Gives the TABLES their first planner statistics as soon as they have rows (PostgreSQL; SQLite
 * plans without statistics by design, and the service never analyses it).
 *
 * Autovacuum analyses a new table only on its next round, a minute or more later, and a burst on a
 * fresh installation is exactly when that hurts; so the service runs the first ANALYZE itself, once
 * per table, from every process that does its background work (started beside the sweep of
 * forgotten check-outs, which runs in each), and leaves the rest to autovacuum, which analyses again
 * as the table grows (tuned for the outbox tables in migration 004).
 */
export class FirstStatistics {
  private done: boolean
  private readonly loop: Repeating

  constructor(
    private readonly db: Db,
    private readonly onError: (error: unknown) => void,
  ) {
    this.done = !supportsRowLocks(db)
    this.loop = new Repeating(
      async () => {
        await this.check()
        return this.done ? 'done' : 'again'
      },
      CHECK_EVERY_MS,
      onError,
    )
  }

  /** Checks now and then every second, in the background, until every table has its statistics. */
  start(): void {
    if (!this.done) this.loop.start()
  }

  /** Ends the checks; resolves once the one in progress, if any, has finished. */
  stop(): Promise<void> {
    return this.loop.stop()
  }

  /** One check: analyses each table that has enough rows and no statistics yet. */
  async check(): Promise<void> {
    if (this.done) return
    try {
      // The statistics functions for these tables, not the pg_stat_user_tables view (which
      // computes them for every table in the database before filtering).
      const { rows } = await sql<{ name: string; analyzed: boolean; tuples: string }>`
        select c.relname as name,
               pg_stat_get_last_analyze_time(c.oid) is not null
                 or pg_stat_get_last_autoanalyze_time(c.oid) is not null as analyzed,
               pg_stat_get_live_tuples(c.oid) + pg_stat_get_dead_tuples(c.oid) as tuples
        from pg_class c
        where c.oid in (${sql.join(Object.keys(TABLES).map((table) => sql`to_regclass(${table})`))})`.execute(
        this.db,
      )
      this.done = rows.length > 0 && rows.every((table) => table.analyzed)
      for (const table of rows) {
        if (!table.analyzed && Number(table.tuples) >= TABLES[table.name as keyof typeof TABLES])
          await sql`analyze ${sql.table(table.name)}`.execute(this.db)
      }
    } catch (error) {
      // Not ours to fix (say, a role that may not analyse): autovacuum will get there.
      this.done = true
      this.onError(error)
    }
  }
}
