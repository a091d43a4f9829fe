import type { Insertable, Selectable } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { newestFirst } from '../../db/keyset.js'
import type { ApiKeysTable } from '../../db/schema.js'
import type { Db, Executor } from '../../db/types.js'
import { toIso, toIsoOrNull } from '../../lib/time.js'
import type { Account, ApiKey } from './schemas.js'

export type ApiKeyRow = Selectable<ApiKeysTable>

/** A key as `/v1/api-keys` shows it: never its secret (the table has only its hash). */
export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    object: 'api_key',
    id: row.id,
    account_id: row.account_id,
    mode: row.livemode === 1 ? 'live' : 'test',
    livemode: row.livemode === 1,
    prefix: row.secret_prefix,
    scopes: row.scopes.split(',').filter(Boolean),
    location_ids: row.location_ids === null ? null : row.location_ids.split(',').filter(Boolean),
    label: row.label,
    expires_at: toIsoOrNull(row.expires_at),
    revoked_at: toIsoOrNull(row.revoked_at),
    created: toIso(row.created_at),
  }
}

/** The caller's own account (a key's account_id references it), in the caller's mode. */
export async function findOwnAccount(db: Executor, auth: AuthContext): Promise<Account> {
  const row = await db
    .selectFrom('accounts')
    .select(['id', 'name'])
    .where('id', '=', auth.accountId)
    .executeTakeFirstOrThrow()
  return { object: 'account', id: row.id, name: row.name, livemode: auth.livemode }
}

export async function findAccountIdByName(db: Executor, name: string): Promise<string | undefined> {
  return (await db.selectFrom('accounts').select('id').where('name', '=', name).executeTakeFirst())?.id
}

/** Inserts an account; a name already taken is the unique index's violation, for the caller. */
export async function insertAccount(db: Executor, account: { id: string; name: string; created_at: number }) {
  await db.insertInto('accounts').values(account).execute()
}

export async function countAccounts(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function insertKeyRow(db: Executor, row: Insertable<ApiKeysTable>): Promise<void> {
  await db.insertInto('api_keys').values(row).execute()
}

/** What a request's key is checked against: looked up by the SHA-256 of its secret. */
export async function findKeyRowByHash(db: Executor, secretHash: string) {
  return db
    .selectFrom('api_keys')
    .select([
      'id',
      'account_id',
      'livemode',
      'scopes',
      'expires_at',
      'revoked_at',
      'device_id',
      'label',
      'location_ids',
    ])
    .where('secret_hash', '=', secretHash)
    .executeTakeFirst()
}

/** These keys of an account: their labels as they are now (null: none) and a device key's device. */
export async function findKeyPrincipals(db: Executor, accountId: string, ids: readonly string[]) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'label', 'device_id'])
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute()
}

/** Revokes the device's keys that are not revoked yet (the key cache forgets them within 5 s). */
export async function revokeDeviceKeys(db: Executor, deviceId: string, now: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('device_id', '=', deviceId)
    .where('revoked_at', 'is', null)
    .execute()
}

/** Every API key with its account's name, oldest first; device keys are the devices' own. */
export async function listKeyRows(db: Db) {
  return db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select([
      'api_keys.id',
      'accounts.name as account',
      'api_keys.account_id',
      'api_keys.livemode',
      'api_keys.secret_prefix',
      'api_keys.scopes',
      'api_keys.expires_at',
      'api_keys.revoked_at',
      'api_keys.created_at',
      'api_keys.label',
      'api_keys.location_ids',
    ])
    .where('api_keys.device_id', 'is', null)
    .orderBy('api_keys.id')
    .execute()
}

/**
 * An API key of the account, either mode (a person manages both); device keys are their devices'
 * (pairing makes them, unpairing revokes them), so they are not among them.
 */
export async function findAccountKeyRow(db: Executor, accountId: string, id: string) {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('device_id', 'is', null)
    .executeTakeFirst()
}

/** The account's API keys (both modes, no device key), newest first: index `api_keys_account`. */
export async function listAccountKeyRows(
  db: Executor,
  accountId: string,
  beforeId: string | undefined,
  take: number,
) {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('device_id', 'is', null)
    .$call(newestFirst(beforeId, take))
    .execute()
}

/** Sets (or, with null, clears) a key's label; true when the key exists. */
export async function setKeyLabel(db: Db, id: string, label: string | null): Promise<boolean> {
  const result = await db.updateTable('api_keys').set({ label }).where('id', '=', id).executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Revokes a key not revoked yet; true when it was. */
export async function revokeKeyRow(db: Executor, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

export async function keyExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
}

/** The names of these accounts, by id (an id that names no account is absent). */
export async function findAccountNames(db: Executor, ids: readonly string[]) {
  return db.selectFrom('accounts').select(['id', 'name']).where('id', 'in', ids).execute()
}
