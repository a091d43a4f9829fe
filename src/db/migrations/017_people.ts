import type { Kysely } from 'kysely'
import { columnTypes } from './types.js'

/**
 * People and access (decisions.md, "People and access"): people (`users`, one login each) belong to
 * accounts through memberships (role, sites, the worker record that is this person, status); cookie
 * sessions, invitation and reset tokens and the sign-in failures behind the lockouts; SSO identities;
 * the audit log. API keys and memberships gain `location_ids` (comma-separated location ids; null:
 * every location); operators their home location and employment dates; a pay period who closed it.
 * Every token is stored as its SHA-256, never itself.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db)
  await db.schema
    .createTable('users')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    // The e-mail lower-cased: unique in the service, what sign-in and invitations look up.
    .addColumn('email_key', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('updated_at', t.instant, (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('memberships')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id, (c) => c.notNull())
    .addColumn('user_id', t.id, (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('location_ids', 'text')
    .addColumn('operator_id', t.id)
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('last_sign_in_at', t.instant)
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('updated_at', t.instant, (c) => c.notNull())
    .execute()
  // One membership per person and account; also the account's users list, newest person first.
  await db.schema
    .createIndex('memberships_account_user')
    .on('memberships')
    .columns(['account_id', 'user_id'])
    .unique()
    .execute()
  // A signed-in person's accounts.
  await db.schema.createIndex('memberships_user').on('memberships').column('user_id').execute()

  await db.schema
    .createTable('auth_sessions')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', t.id, (c) => c.notNull())
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addColumn('last_used_at', t.instant, (c) => c.notNull())
    .addColumn('expires_at', t.instant, (c) => c.notNull())
    .addColumn('ended_at', t.instant)
    .execute()
  // Ending every session of a person (sign-out everywhere, password change or reset, deactivation).
  await db.schema.createIndex('auth_sessions_user').on('auth_sessions').column('user_id').execute()

  await db.schema
    .createTable('user_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    // Null for the owner's set-up link: the person it makes does not exist yet.
    .addColumn('user_id', t.id)
    .addColumn('account_id', t.id)
    .addColumn('expires_at', t.instant, (c) => c.notNull())
    .addColumn('used_at', t.instant)
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .execute()
  // A new invitation or reset voids the person's earlier ones.
  await db.schema.createIndex('user_tokens_user').on('user_tokens').columns(['user_id', 'kind']).execute()

  await db.schema
    .createTable('sign_in_failures')
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('sign_in_failures_email')
    .on('sign_in_failures')
    .columns(['email_key', 'created_at'])
    .execute()

  await db.schema
    .createTable('sso_identities')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', t.id, (c) => c.notNull())
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .addPrimaryKeyConstraint('sso_identities_pkey', ['issuer', 'subject'])
    .execute()

  await db.schema
    .createTable('audit_log')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('account_id', t.id)
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', t.id, (c) => c.notNull())
    .addColumn('actor_name', 'text')
    .addColumn('target_type', 'text')
    .addColumn('target_id', t.id)
    .addColumn('ip', 'text')
    .addColumn('created_at', t.instant, (c) => c.notNull())
    .execute()
  // The account's log, newest first (keyset by id).
  await db.schema.createIndex('audit_log_account').on('audit_log').columns(['account_id', 'id']).execute()

  await db.schema.alterTable('api_keys').addColumn('location_ids', 'text').execute()
  await db.schema.alterTable('operators').addColumn('home_location_id', t.id).execute()
  await db.schema.alterTable('operators').addColumn('start_date', 'text').execute()
  await db.schema.alterTable('operators').addColumn('end_date', 'text').execute()
  await db.schema.alterTable('pay_periods').addColumn('closed_by', t.id).execute()
}
