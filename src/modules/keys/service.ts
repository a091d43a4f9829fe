import { hash, randomBytes } from 'node:crypto'
import { isUniqueViolation } from '../../db/connection.js'
import { toFlag } from '../../db/schema.js'
import type { Db, Executor } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { toIsoOrNull } from '../../lib/time.js'
import { ALL_SCOPES, type Scope } from './scopes.js'

/** The caller's own account and mode (`GET /v1/account`), as the repository reads it. */
export { findOwnAccount } from './repository.js'

export type Mode = 'test' | 'live'

export interface ApiKeyRecord {
  id: string
  accountId: string
  livemode: boolean
  scopes: ReadonlySet<string>
  expiresAt: number | null
  revokedAt: number | null
  /** Set for a device key: the device it pairs. */
  deviceId: string | null
}

export interface CreatedKey {
  id: string
  secret: string
  account_id: string
  mode: Mode
  scopes: Scope[]
  expires_at: string | null
  label: string | null
}

/** The longest label a key may have, in characters. */
export const MAX_KEY_LABEL_LENGTH = 100

/**
 * A label as stored: trimmed, and null when nothing is left (an empty label is no label). Undefined
 * when it is longer than MAX_KEY_LABEL_LENGTH characters.
 */
export function keyLabel(text: string): string | null | undefined {
  const label = text.trim()
  if ([...label].length > MAX_KEY_LABEL_LENGTH) return undefined
  return label === '' ? null : label
}

export function hashSecret(secret: string): string {
  // One-shot: every request hashes its key, and a Hash object costs twice the digest of a secret.
  return hash('sha256', secret, 'hex')
}

/** Finds the account by name, creating it when it does not exist (safe against a concurrent create). */
export async function ensureAccount(db: Db, name: string): Promise<string> {
  const existing = await db.selectFrom('accounts').select('id').where('name', '=', name).executeTakeFirst()
  if (existing) return existing.id
  try {
    const id = newId('acct')
    await db.insertInto('accounts').values({ id, name, created_at: clock.now() }).execute()
    return id
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    return (await db.selectFrom('accounts').select('id').where('name', '=', name).executeTakeFirstOrThrow())
      .id
  }
}

export async function createKey(
  db: Db,
  input: { account: string; mode: Mode; scopes?: Scope[]; expiresAt?: Date; label?: string | null },
): Promise<CreatedKey> {
  const accountId = await ensureAccount(db, input.account)
  // 192 random bits; only the SHA-256 of the secret is stored. A fast hash is enough because the
  // secret is random, not a password, and a fast hash keeps the per-request lookup cheap.
  const secret = `sk_${input.mode}_${randomBytes(24).toString('base64url')}`
  const scopes = input.scopes ?? ALL_SCOPES
  const id = newId('key')
  await db
    .insertInto('api_keys')
    .values({
      id,
      account_id: accountId,
      livemode: toFlag(input.mode === 'live'),
      secret_hash: hashSecret(secret),
      secret_prefix: secret.slice(0, 12),
      scopes: scopes.join(','),
      expires_at: input.expiresAt?.getTime() ?? null,
      revoked_at: null,
      created_at: clock.now(),
      label: input.label ?? null,
    })
    .execute()
  return {
    id,
    secret,
    account_id: accountId,
    mode: input.mode,
    scopes,
    expires_at: input.expiresAt?.toISOString() ?? null,
    label: input.label ?? null,
  }
}

export async function findKeyByHash(db: Executor, secretHash: string): Promise<ApiKeyRecord | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'account_id', 'livemode', 'scopes', 'expires_at', 'revoked_at', 'device_id'])
    .where('secret_hash', '=', secretHash)
    .executeTakeFirst()
  if (!row) return undefined
  return {
    id: row.id,
    accountId: row.account_id,
    livemode: row.livemode === 1,
    scopes: new Set(row.scopes.split(',').filter(Boolean)),
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    deviceId: row.device_id,
  }
}

/** A device key as pairing answers it, the only time its secret is shown. */
export interface CreatedDeviceKey {
  id: string
  secret: string
  livemode: boolean
}

/**
 * A key for a paired device: a row of `api_keys` naming the device and holding no scope, so the key
 * cache, revocation and the rate limit treat it as any key, and `enforce` lets it reach only the
 * device's own routes. Only the SHA-256 of the secret is stored, as for API keys.
 */
export async function createDeviceKey(
  trx: Executor,
  owner: { accountId: string; livemode: boolean },
  deviceId: string,
): Promise<CreatedDeviceKey> {
  const secret = `dk_${owner.livemode ? 'live' : 'test'}_${randomBytes(24).toString('base64url')}`
  const id = newId('key')
  await trx
    .insertInto('api_keys')
    .values({
      id,
      account_id: owner.accountId,
      livemode: toFlag(owner.livemode),
      secret_hash: hashSecret(secret),
      secret_prefix: secret.slice(0, 12),
      scopes: '',
      expires_at: null,
      revoked_at: null,
      created_at: clock.now(),
      label: null,
      device_id: deviceId,
    })
    .execute()
  return { id, secret, livemode: owner.livemode }
}

/** Revokes the device's keys that are not revoked yet (the key cache forgets them within 5 s). */
export async function revokeDeviceKeys(trx: Executor, deviceId: string, now: number): Promise<void> {
  await trx
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('device_id', '=', deviceId)
    .where('revoked_at', 'is', null)
    .execute()
}

export async function listKeys(db: Db) {
  const rows = await db
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
    // Device keys are the devices' (pairing and unpairing manage them), not the operator's.
    .where('api_keys.device_id', 'is', null)
    .orderBy('api_keys.id')
    .execute()
  return rows.map((r) => ({
    id: r.id,
    account: r.account,
    account_id: r.account_id,
    mode: r.livemode === 1 ? 'live' : 'test',
    prefix: r.secret_prefix,
    scopes: r.scopes.split(','),
    created: new Date(r.created_at).toISOString(),
    expires_at: toIsoOrNull(r.expires_at),
    revoked_at: toIsoOrNull(r.revoked_at),
    label: r.label,
  }))
}

/** Sets (or, with null, clears) a key's label; true when the key exists. */
export async function setKeyLabel(db: Db, id: string, label: string | null): Promise<boolean> {
  const result = await db.updateTable('api_keys').set({ label }).where('id', '=', id).executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Revokes a key; true when the key exists (revoking twice is harmless). */
export async function revokeKey(db: Db, id: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: clock.now() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  if (result.numUpdatedRows > 0n) return true
  return (await db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
}

export async function countAccounts(db: Db): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
