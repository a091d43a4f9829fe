import { hash, randomBytes } from 'node:crypto'
import { isUniqueViolation } from '../../db/connection.js'
import { toFlag } from '../../db/schema.js'
import type { Db, Executor } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { toIsoOrNull } from '../../lib/time.js'
import {
  findAccountIdByName,
  findAccountNames,
  findKeyLabels,
  findKeyRowByHash,
  insertAccount,
  insertKeyRow,
  keyExists,
  listKeyRows,
  revokeKeyRow,
} from './repository.js'
import { KEY_SCOPES, type Scope } from './scopes.js'

// Reads and changes the service takes from the repository as they are: the caller's own account and
// mode (`GET /v1/account`), the count of accounts, a key's label, a device's keys revoked.
export { countAccounts, findOwnAccount, revokeDeviceKeys, setKeyLabel } from './repository.js'

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
  /** The locations the key is held to; null: every location. */
  locationIds: readonly string[] | null
  label: string | null
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
  const existing = await findAccountIdByName(db, name)
  if (existing) return existing
  try {
    const id = newId('acct')
    await insertAccount(db, { id, name, created_at: clock.now() })
    return id
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    const created = await findAccountIdByName(db, name)
    if (created === undefined) throw error
    return created
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
  const scopes = input.scopes ?? KEY_SCOPES
  const id = newId('key')
  await insertKeyRow(db, {
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
  const row = await findKeyRowByHash(db, secretHash)
  if (!row) return undefined
  return {
    id: row.id,
    accountId: row.account_id,
    livemode: row.livemode === 1,
    scopes: new Set(row.scopes.split(',').filter(Boolean)),
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    deviceId: row.device_id,
    locationIds: parseLocationIds(row.location_ids),
    label: row.label,
  }
}

/** `location_ids` as the tables store it (comma-separated; null: every location) and as the API has it. */
export function parseLocationIds(stored: string | null): readonly string[] | null {
  return stored === null ? null : stored.split(',').filter(Boolean)
}

export function storedLocationIds(ids: readonly string[] | null | undefined): string | null {
  return ids === null || ids === undefined ? null : ids.join(',')
}

/**
 * The labels these keys of the account have now, by key id (a key without one: null; an id that
 * names no key, such as the service's own `service`, is absent). What a session's revisions show.
 */
export async function keyLabels(
  db: Executor,
  accountId: string,
  ids: readonly string[],
): Promise<Map<string, string | null>> {
  if (ids.length === 0) return new Map()
  return new Map((await findKeyLabels(db, accountId, ids)).map((row) => [row.id, row.label]))
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
  await insertKeyRow(trx, {
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
  return { id, secret, livemode: owner.livemode }
}

export async function listKeys(db: Db) {
  const rows = await listKeyRows(db)
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

/** Revokes a key; true when the key exists (revoking twice is harmless). */
export async function revokeKey(db: Db, id: string): Promise<boolean> {
  return (await revokeKeyRow(db, id, clock.now())) || keyExists(db, id)
}

/** The names of these accounts, by id: what a signed-in person's answer lists beside their roles. */
export async function accountNames(db: Executor, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  return new Map((await findAccountNames(db, ids)).map((row) => [row.id, row.name]))
}
