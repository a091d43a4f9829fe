import type { Insertable } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import type { ApiKeysTable } from '../../db/schema.js'
import type { Db, Executor } from '../../db/types.js'
import type { Account } from './schemas.js'

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

/** The labels of these keys of an account, as they are now (null: a key without one). */
export async function findKeyLabels(db: Executor, accountId: string, ids: readonly string[]) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'label'])
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
    ])
    .where('api_keys.device_id', 'is', null)
    .orderBy('api_keys.id')
    .execute()
}

/** Sets (or, with null, clears) a key's label; true when the key exists. */
export async function setKeyLabel(db: Db, id: string, label: string | null): Promise<boolean> {
  const result = await db.updateTable('api_keys').set({ label }).where('id', '=', id).executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Revokes a key not revoked yet; true when it was. */
export async function revokeKeyRow(db: Db, id: string, now: number): Promise<boolean> {
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
