import { type Kysely, sql } from 'kysely'
import { columnTypes } from './types.js'

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db)
  const scopeIndex = (table: string, ...columns: string[]) =>
    db.schema
      .createIndex(`${table}_${columns.join('_') || 'scope'}`)
      .on(table)
      .columns(['account_id', 'livemode', ...columns, 'id'])
      .execute()

  await db.schema
    .createTable('locations')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('updated_at', t.instant, (c) => c.notNull())
    .execute()
  await scopeIndex('locations')
  await scopeIndex('locations', 'name')

  await db.schema
    .createTable('devices')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('location_id', t.id)
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('updated_at', t.instant, (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('devices_code')
    .on('devices')
    .columns(['account_id', 'livemode', 'code'])
    .unique()
    .execute()
  await scopeIndex('devices')
  await scopeIndex('devices', 'location_id')

  await db.schema
    .createTable('sessions')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('operator_id', t.id, (c) => c.notNull())
    .addColumn('operator_ident', 'text', (c) => c.notNull())
    .addColumn('device_code', 'text', (c) => c.notNull())
    .addColumn('location_id', t.id)
    .addColumn('check_in_at', t.instant, (c) => c.notNull())
    .addColumn('check_out_at', t.instant)
    .addColumn('break_minutes', 'integer', (c) => c.notNull())
    .addColumn('notes', 'text')
    .addColumn('is_flagged', 'integer', (c) => c.notNull())
    .addColumn('flag_reason', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('deleted_at', t.instant)
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('updated_at', t.instant, (c) => c.notNull())
    .execute()
  // At most one open session per operator, enforced by the database: two scans racing on two API
  // processes cannot both open one.
  await db.schema
    .createIndex('sessions_one_open')
    .on('sessions')
    .columns(['account_id', 'livemode', 'operator_id'])
    .unique()
    .where(sql.ref('status'), '=', 'open')
    .where(sql.ref('deleted_at'), 'is', null)
    .execute()
  await scopeIndex('sessions')
  await scopeIndex('sessions', 'operator_id')
  await scopeIndex('sessions', 'device_code')
  await scopeIndex('sessions', 'location_id')
  await scopeIndex('sessions', 'is_flagged')
  await scopeIndex('sessions', 'status')
  // An operator's sessions in a time range (a timesheet): without it SQLite scans the whole range.
  await db.schema
    .createIndex('sessions_operator_check_in')
    .on('sessions')
    .columns(['account_id', 'livemode', 'operator_id', 'check_in_at'])
    .execute()
  await db.schema
    .createIndex('sessions_check_in')
    .on('sessions')
    .columns(['account_id', 'livemode', 'check_in_at'])
    .execute()

  await db.schema
    .createTable('session_revisions')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('session_id', t.id, (c) => c.notNull())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('key_id', t.id, (c) => c.notNull())
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .execute()
  await db.schema
    .createIndex('session_revisions_session')
    .on('session_revisions')
    .columns(['account_id', 'livemode', 'session_id', 'id'])
    .execute()

  await db.schema
    .createTable('scans')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('device_code', 'text', (c) => c.notNull())
    .addColumn('operator_id', t.id, (c) => c.notNull())
    .addColumn('operator_ident', 'text', (c) => c.notNull())
    .addColumn('scanned_at', t.instant, (c) => c.notNull())
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('flag_reason', 'text')
    .addColumn('session_id', t.id)
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .execute()
  await scopeIndex('scans')
  await scopeIndex('scans', 'operator_id')
  await scopeIndex('scans', 'device_code')
  await db.schema
    .createIndex('scans_operator_time')
    .on('scans')
    .columns(['account_id', 'livemode', 'operator_id', 'scanned_at'])
    .execute()
}
