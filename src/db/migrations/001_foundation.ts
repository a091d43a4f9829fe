import type { Kysely } from 'kysely'
import { columnTypes } from './types.js'

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db)

  await db.schema
    .createTable('settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('accounts')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull().references('accounts.id'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('secret_prefix', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_at', t.instant)
    .addColumn('revoked_at', t.instant)
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id', 'id']).execute()

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('locked_at', t.instant, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'livemode', 'key'])
    .execute()
  await db.schema
    .createIndex('idempotency_keys_created')
    .on('idempotency_keys')
    .column('created_at')
    .execute()

  await db.schema
    .createTable('events')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('events_scope').on('events').columns(['account_id', 'livemode', 'id']).execute()
  await db.schema
    .createIndex('events_scope_type')
    .on('events')
    .columns(['account_id', 'livemode', 'type', 'id'])
    .execute()

  await db.schema
    .createTable('operators')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('ident', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('employee_id', 'text')
    .addColumn('is_active', 'integer', (c) => c.notNull())
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('updated_at', t.instant, (c) => c.notNull())
    .execute()
  // The unique index is what makes `duplicate_ident` hold under concurrent creates.
  await db.schema
    .createIndex('operators_ident')
    .on('operators')
    .columns(['account_id', 'livemode', 'ident'])
    .unique()
    .execute()
  await db.schema
    .createIndex('operators_scope')
    .on('operators')
    .columns(['account_id', 'livemode', 'id'])
    .execute()
  await db.schema
    .createIndex('operators_employee')
    .on('operators')
    .columns(['account_id', 'livemode', 'employee_id', 'id'])
    .execute()
  await db.schema
    .createIndex('operators_active')
    .on('operators')
    .columns(['account_id', 'livemode', 'is_active', 'id'])
    .execute()
}
