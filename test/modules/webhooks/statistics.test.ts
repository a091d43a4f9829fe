import { sql } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../../../src/db/connection.js'
import { FirstStatistics } from '../../../src/modules/webhooks/statistics.js'
import { dialect, useMigratedDatabase } from '../../helpers/database.js'

// Planner statistics and storage settings exist on PostgreSQL only.
describe.runIf(dialect === 'postgres')('outbox tables on PostgreSQL', () => {
  const database = useMigratedDatabase()
  let db: Db
  beforeAll(() => {
    db = database.db
  })

  async function analyzed() {
    const { rows } = await sql<{ relname: string; analyzed: boolean }>`
      select relname, last_analyze is not null or last_autoanalyze is not null as analyzed
      from pg_stat_user_tables
      where schemaname = current_schema() and relname in ('events', 'webhook_deliveries')
      order by relname`.execute(db)
    return Object.fromEntries(rows.map((r) => [r.relname, r.analyzed]))
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

  it('get their first statistics from the worker once a table has 1,000 rows, not before', async () => {
    const errors: unknown[] = []
    const statistics = new FirstStatistics(db, (error) => errors.push(error))
    await sql`
      insert into events (id, account_id, livemode, type, created_at, payload)
      select 'evt_' || lpad(i::text, 26, '0'), 'acct_stats', 0, 'operator.created', i, '{}'
      from generate_series(1, 1500) as i`.execute(db)
    expect(await analyzed()).toEqual({ events: false, webhook_deliveries: false })

    // The row counts reach pg_stat_user_tables within about a second of the commit; each call
    // below is a new check (ensure() checks at most once a second of the clock it is given).
    let now = Date.now()
    const deadline = now + 15_000
    while (!(await analyzed()).events && Date.now() < deadline) {
      now += 5_000
      statistics.ensure(now)
      await statistics.settled()
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(await analyzed()).toEqual({ events: true, webhook_deliveries: false })
    expect(errors).toEqual([])
  })
})
