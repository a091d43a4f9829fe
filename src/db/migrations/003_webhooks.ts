import { type Kysely, sql } from 'kysely'
import { columnTypes } from './types.js'

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db)

  // The outbox: an event is dispatched (turned into deliveries) once; undispatched ones are found
  // through a partial index that stays small however many events there are.
  await db.schema.alterTable('events').addColumn('dispatched_at', t.instant).execute()
  await db.schema
    .createIndex('events_undispatched')
    .on('events')
    .column('id')
    .where(sql.ref('dispatched_at'), 'is', null)
    .execute()
  await db.schema
    .createIndex('events_scope_created')
    .on('events')
    .columns(['account_id', 'livemode', 'created_at'])
    .execute()

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('enabled_events', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', t.instant)
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull())
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('updated_at', t.instant, (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('webhook_endpoints_scope')
    .on('webhook_endpoints')
    .columns(['account_id', 'livemode', 'id'])
    .execute()

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('endpoint_id', t.id, (c) => c.notNull())
    .addColumn('event_id', t.id, (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('scheduled_attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', t.instant)
    .addColumn('locked_until', t.instant)
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('updated_at', t.instant, (c) => c.notNull())
    .execute()
  // One delivery per event and endpoint, even if two dispatchers raced.
  await db.schema
    .createIndex('webhook_deliveries_event_endpoint')
    .on('webhook_deliveries')
    .columns(['event_id', 'endpoint_id'])
    .unique()
    .execute()
  // What the workers poll: pending deliveries by due time.
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['next_attempt_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute()
  for (const column of [null, 'endpoint_id', 'event_id', 'status']) {
    const columns = column === null ? [] : [column]
    await db.schema
      .createIndex(`webhook_deliveries_${column ?? 'scope'}`)
      .on('webhook_deliveries')
      .columns(['account_id', 'livemode', ...columns, 'id'])
      .execute()
  }

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('delivery_id', t.id, (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('attempted_at', t.instant, (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('response_excerpt', 'text')
    .execute()
  await db.schema
    .createIndex('webhook_attempts_delivery')
    .on('webhook_attempts')
    .columns(['delivery_id', 'id'])
    .execute()
}
