import { type Kysely, PostgresAdapter, sql } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  // Every delivery row is written three times in seconds (inserted, leased, finished), and each
  // index is written with it. The (event_id, endpoint_id) unique index already finds an event's
  // deliveries (one per endpoint at most), so the list filter needs no index of its own.
  await db.schema.dropIndex('webhook_deliveries_event_id').execute()

  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  // The outbox and delivery tables churn. PostgreSQL's defaults vacuum and analyse a table once a
  // fifth of it has changed, so on a large table dead entries pile up at the head of the
  // due-deliveries and undispatched-events indexes for a long time and every poll walks over them;
  // here a fiftieth is enough.
  const frequent = sql.raw(
    'autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02',
  )
  // fillfactor 80 leaves room on each page, so that a lease (it changes only `locked_until`, which
  // no index covers) can be a HOT update that writes no index entry at all.
  await sql`alter table webhook_deliveries set (fillfactor = 80, ${frequent})`.execute(db)
  await sql`alter table events set (${frequent})`.execute(db)
}
