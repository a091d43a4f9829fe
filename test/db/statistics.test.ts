import { sql } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import type { AuthContext } from '../../src/core/identity.js'
import { FirstStatistics } from '../../src/db/statistics.js'
import type { Db } from '../../src/db/types.js'
import { overlappingSessionQuery } from '../../src/modules/sessions/repository.js'
import { ForgottenCheckOutSweep } from '../../src/modules/sessions/sweep.js'
import { buildTestApp } from '../helpers/app.js'
import { waitUntil } from '../helpers/assertions.js'
import { useTestClock } from '../helpers/clock.js'
import { dialect, useMigratedDatabase } from '../helpers/database.js'

// Planner statistics and storage settings exist on PostgreSQL only.
/** How often the background work checks for tables to analyse (CHECK_EVERY_MS, db/statistics.ts). */
const CHECK_EVERY_MS = 1000

describe.runIf(dialect === 'postgres')('planner statistics on PostgreSQL', () => {
  const clock = useTestClock()
  const database = useMigratedDatabase()
  let db: Db
  beforeAll(() => {
    db = database.db
  })

  async function analyzed(database: Db = db) {
    const { rows } = await sql<{ relname: string; analyzed: boolean }>`
      select relname, last_analyze is not null or last_autoanalyze is not null as analyzed
      from pg_stat_user_tables
      where schemaname = current_schema() and relname in ('events', 'webhook_deliveries', 'sessions', 'operators')
      order by relname`.execute(database)
    return Object.fromEntries(rows.map((r) => [r.relname, r.analyzed]))
  }

  /** 40 operators with 100 back-to-back 8-hour sessions each, 10 hours apart: 4,000 sessions. */
  async function insertSessions(database: Db) {
    await sql`
      insert into sessions (id, account_id, livemode, operator_id, operator_ident, device_code,
        check_in_at, check_out_at, break_minutes, is_flagged, source, status, created_at, updated_at,
        work_date, review_status)
      select 'ses_' || lpad(i::text, 26, '0'), 'acct_stats', 0, 'op_' || (i % 40), 'OP-' || (i % 40),
        'DEV-1', (i / 40)::bigint * 36000000, (i / 40)::bigint * 36000000 + 28800000, 0, 1, 'api', 'completed', i, i,
        '2026-01-01', 'pending'
      from generate_series(0, 3999) as i`.execute(database)
  }

  /** Runs checks, as the background work does every second, until `table` is analysed (15 s at most). */
  async function checkUntilAnalyzed(statistics: FirstStatistics, table: string) {
    // The row counts reach the statistics functions within about a second of the commit.
    await waitUntil(
      async () => {
        await statistics.check()
        return (await analyzed())[table]
      },
      Boolean,
      { everyMs: 100 },
    )
  }

  /**
   * Until the background work has analysed `sessions`: each look steps the clock by a check's
   * interval, so its check runs, while the row counts reach the statistics functions in real time.
   */
  async function untilSessionsAnalyzed(database: Db) {
    return waitUntil(
      async () => {
        clock.advance(CHECK_EVERY_MS)
        return (await analyzed(database)).sessions
      },
      Boolean,
      { everyMs: 200 },
    )
  }

  it('are vacuumed and analysed after a fiftieth changes, and delivery pages keep room for leases', async () => {
    const { rows } = await sql<{ relname: string; reloptions: string[] }>`
      select relname, reloptions from pg_class
      where relnamespace = current_schema()::regnamespace and relname in ('events', 'webhook_deliveries')
      order by relname`.execute(db)
    const frequent = [
      'autovacuum_vacuum_scale_factor=0.02',
      'autovacuum_vacuum_insert_scale_factor=0.02',
      'autovacuum_analyze_scale_factor=0.02',
    ]
    expect(rows).toEqual([
      { relname: 'events', reloptions: frequent },
      { relname: 'webhook_deliveries', reloptions: ['fillfactor=80', ...frequent] },
    ])
  })

  it('outbox tables get their first statistics once a table has 1,000 rows, not before', async () => {
    const errors: unknown[] = []
    const statistics = new FirstStatistics(db, (error) => errors.push(error))
    await sql`
      insert into events (id, account_id, livemode, type, created_at, payload)
      select 'evt_' || lpad(i::text, 26, '0'), 'acct_stats', 0, 'operator.created', i, '{}'
      from generate_series(1, 1500) as i`.execute(db)
    expect(await analyzed()).toEqual({
      events: false,
      operators: false,
      sessions: false,
      webhook_deliveries: false,
    })

    await checkUntilAnalyzed(statistics, 'events')
    expect(await analyzed()).toEqual({
      events: true,
      operators: false,
      sessions: false,
      webhook_deliveries: false,
    })
    expect(errors).toEqual([])
  })

  it('sessions get theirs too, and the overlap check of a create then reads only the operator range', async () => {
    const errors: unknown[] = []
    const statistics = new FirstStatistics(db, (error) => errors.push(error))
    await insertSessions(db)

    await checkUntilAnalyzed(statistics, 'sessions')
    expect((await analyzed()).sessions).toBe(true)
    expect(errors).toEqual([])

    const auth: AuthContext = {
      principalId: 'key_stats',
      locationIds: null,
      accountId: 'acct_stats',
      livemode: false,
    }
    const query = overlappingSessionQuery(db, auth, {
      operatorId: 'op_7',
      start: 50 * 36000000 + 30000000,
      end: 50 * 36000000 + 34000000,
      closedShiftMs: 16 * 3600000,
      longestSessionMs: 72 * 3600000,
    })
    const { rows } = await db.executeQuery<{ 'QUERY PLAN': string }>({
      ...query,
      sql: `explain ${query.sql}`,
    })
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n')
    expect(plan).toMatch(/Index Scan using sessions_operator_check_in/)
    expect(plan).toMatch(/Index Cond: .*operator_id = .*check_in_at </)
  })

  it('operators get theirs at 100 rows, and the look-up by ident every create locks then uses its unique index', async () => {
    const errors: unknown[] = []
    const statistics = new FirstStatistics(db, (error) => errors.push(error))
    const lookUp = sql<{ 'QUERY PLAN': string }>`explain select * from operators
      where account_id = ${'acct_stats'} and livemode = ${0} and ident = ${'OP-0042'} for update`
    const insertOperators = (from: number, to: number) =>
      sql`
      insert into operators (id, account_id, livemode, ident, is_active, created_at, updated_at)
      select 'op_' || lpad(i::text, 26, '0'), 'acct_stats', 0, 'OP-' || lpad(i::text, 4, '0'), 1, i, i
      from generate_series(${from}::int, ${to}::int) as i`.execute(db)
    await insertOperators(1, 99)
    // The row counts reach the statistics functions within about a second of the commit: wait for
    // them, then check that 99 rows are not enough.
    await waitUntil(
      async () =>
        Number(
          (await sql<{ n: string }>`select pg_stat_get_live_tuples('operators'::regclass) as n`.execute(db))
            .rows[0]?.n,
        ),
      (n) => n === 99,
      { everyMs: 100 },
    )
    await statistics.check()
    expect((await analyzed()).operators).toBe(false)

    await insertOperators(100, 299)
    await checkUntilAnalyzed(statistics, 'operators')
    const plan = (await lookUp.execute(db)).rows.map((row) => row['QUERY PLAN']).join('\n')
    expect(plan).toMatch(/Index Scan using operators_ident/)
    expect(plan).toMatch(/Index Cond: .*ident = /)
    expect(errors).toEqual([])
  })

  it('are analysed by the inline background work of a running service, with no request needed', async () => {
    const t = await buildTestApp({ worker: 'inline' })
    try {
      await insertSessions(t.db)
      expect(await untilSessionsAnalyzed(t.db)).toBe(true)
    } finally {
      await t.close()
    }
  })

  it('are analysed from the start of the sweep of forgotten check-outs, which every worker process runs', async () => {
    const t = await buildTestApp({ worker: 'off' })
    const errors: object[] = []
    const sweep = new ForgottenCheckOutSweep(
      t.db,
      { intervalMs: 60_000 },
      { error: (obj) => errors.push(obj) },
    )
    try {
      await insertSessions(t.db)
      sweep.start()
      expect(await untilSessionsAnalyzed(t.db)).toBe(true)
      expect(errors).toEqual([])
    } finally {
      await sweep.stop()
      await t.close()
    }
  })
})
