import { type Kysely, sql } from 'kysely'
import { columnTypes } from './types.js'

/**
 * The time clock (decisions.md, "The time clock"): devices pair with a one-time code and hold a
 * device key (a row of `api_keys` naming its device, so the key cache, revocation and the rate limit
 * treat it as any key); operators may have a PIN (a scrypt hash) with a failure count and a lockout;
 * each account and mode has one RSA key pair for PINs captured offline; scans remember the device's
 * own id for them (`client_scan_id`, unique per device, so a replay changes nothing however late),
 * the clock correction applied and the operator's name.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db)
  await db.schema
    .alterTable('devices')
    .addColumn('paired', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.alterTable('devices').addColumn('last_seen_at', t.instant).execute()
  await db.schema
    .alterTable('devices')
    .addColumn('require_pin', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()

  await db.schema.alterTable('api_keys').addColumn('device_id', t.id).execute()
  await db.schema
    .createIndex('api_keys_device')
    .on('api_keys')
    .column('device_id')
    .where(sql.ref('device_id'), 'is not', null)
    .execute()

  await db.schema
    .createTable('device_pairing_codes')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('device_id', t.id, (c) => c.notNull())
    .addColumn('code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', t.instant, (c) => c.notNull())
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('device_pairing_codes_device')
    .on('device_pairing_codes')
    .column('device_id')
    .execute()

  await db.schema.alterTable('operators').addColumn('pin_hash', 'text').execute()
  await db.schema
    .alterTable('operators')
    .addColumn('pin_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.alterTable('operators').addColumn('pin_locked_until', t.instant).execute()

  await db.schema
    .createTable('pin_keys')
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addPrimaryKeyConstraint('pin_keys_pk', ['account_id', 'livemode'])
    .execute()

  await db.schema.alterTable('scans').addColumn('client_scan_id', 'text').execute()
  await db.schema.alterTable('scans').addColumn('clock_skew_ms', t.instant).execute()
  await db.schema.alterTable('scans').addColumn('operator_name', 'text').execute()
  await db.schema
    .createIndex('scans_client_scan_id')
    .on('scans')
    .columns(['account_id', 'livemode', 'device_code', 'client_scan_id'])
    .unique()
    .where(sql.ref('client_scan_id'), 'is not', null)
    .execute()
}
