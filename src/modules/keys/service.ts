import { hash, randomBytes } from 'node:crypto'
import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { instantOf } from '../../core/instants.js'
import { isUniqueViolation } from '../../db/connection.js'
import { toFlag } from '../../db/schema.js'
import type { Db, Executor, Trx } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { toIsoOrNull } from '../../lib/time.js'
import { ownedLocationIds } from '../locations/service.js'
import { type Actor, recordAudit } from '../users/audit.js'
import {
  type ApiKeyRow,
  findAccountIdByName,
  findAccountKeyRow,
  findAccountNames,
  findKeyPrincipals,
  findKeyRowByHash,
  insertAccount,
  insertKeyRow,
  keyExists,
  listAccountKeyRows,
  listKeyRows,
  revokeKeyRow,
  toApiKey,
} from './repository.js'
import type { ApiKey, CreateApiKeyBody, CreatedApiKey } from './schemas.js'
import { isPeopleOnlyScope, KEY_SCOPES, type Scope } from './scopes.js'

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
  location_ids: string[] | null
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

/** What a new API key is made with: its mode, scopes (every key scope when absent), expiry, label and sites. */
export interface NewKey {
  mode: Mode
  scopes?: Scope[]
  expiresAt?: Date
  label?: string | null
  /** The locations the key is held to (never empty); null or absent: every location. */
  locationIds?: readonly string[] | null
}

/**
 * `keys create`: a key of the named account (made when new). Locations, when given, must be the
 * account's in the key's mode (422 `unknown_location` otherwise), so they need an account that
 * exists: a new one has no location.
 */
export async function createKey(db: Db, input: NewKey & { account: string }): Promise<CreatedKey> {
  const restricted = input.locationIds !== undefined && input.locationIds !== null
  const accountId = restricted
    ? await findAccountIdByName(db, input.account)
    : await ensureAccount(db, input.account)
  if (accountId === undefined) throw errors.unknownLocation('location_ids', input.locationIds?.[0] ?? '')
  const { row, secret } = await insertKey(db, accountId, input)
  const key = toApiKey(row)
  return {
    id: key.id,
    secret,
    account_id: key.account_id,
    mode: key.mode,
    scopes: key.scopes as Scope[],
    expires_at: key.expires_at,
    label: key.label,
    location_ids: key.location_ids,
  }
}

/**
 * Writes a new API key of the account; its secret is in the answer only, the one time it is shown.
 * The locations named are checked to be the account's, in the key's mode.
 */
async function insertKey(
  db: Executor,
  accountId: string,
  input: NewKey,
): Promise<{ row: ApiKeyRow; secret: string }> {
  const livemode = input.mode === 'live'
  if (input.locationIds !== undefined && input.locationIds !== null)
    await assertLocationsOwned(db, { accountId, livemode }, input.locationIds)
  // 192 random bits; only the SHA-256 of the secret is stored. A fast hash is enough because the
  // secret is random, not a password, and a fast hash keeps the per-request lookup cheap.
  const secret = `sk_${input.mode}_${randomBytes(24).toString('base64url')}`
  const row: ApiKeyRow = {
    id: newId('key'),
    account_id: accountId,
    livemode: toFlag(livemode),
    secret_hash: hashSecret(secret),
    secret_prefix: secret.slice(0, 12),
    scopes: (input.scopes ?? KEY_SCOPES).join(','),
    expires_at: input.expiresAt?.getTime() ?? null,
    revoked_at: null,
    created_at: clock.now(),
    label: input.label ?? null,
    device_id: null,
    location_ids: storedLocationIds(input.locationIds),
  }
  await insertKeyRow(db, row)
  return { row, secret }
}

/** 422 `unknown_location` (param `location_ids`) for the first id that is not a location of the owner. */
async function assertLocationsOwned(
  db: Executor,
  owner: { accountId: string; livemode: boolean },
  ids: readonly string[],
): Promise<void> {
  const found = new Set(await ownedLocationIds(db, owner, ids))
  const unknown = ids.find((id) => !found.has(id))
  if (unknown !== undefined) throw errors.unknownLocation('location_ids', unknown)
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

/** A key as a change's actor shows it: its label now, and for a device key its device. */
export interface KeyPrincipal {
  label: string | null
  deviceId: string | null
}

/**
 * These keys of the account as they are now, by key id (an id that names no key of the account,
 * such as the service's own `service` or a person's `usr_…`, is absent): who a session's
 * revisions, a review or a pay-period close were made by. One statement for any number of ids.
 */
export async function keyPrincipals(
  db: Executor,
  accountId: string,
  ids: readonly string[],
): Promise<Map<string, KeyPrincipal>> {
  if (ids.length === 0) return new Map()
  return new Map(
    (await findKeyPrincipals(db, accountId, ids)).map((row) => [
      row.id,
      { label: row.label, deviceId: row.device_id },
    ]),
  )
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
    location_ids: parseLocationIds(r.location_ids),
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

// ---------------------------------------------------------------------------------------------
// API keys from the console (`/v1/api-keys`, decisions.md "API keys from the console"): a person's
// doing (scope `keys:*`, which no key holds), each create and revoke in the audit log.
// ---------------------------------------------------------------------------------------------

/** Who creates or revokes a key, where from: the audit entry's actor and address. */
export interface KeyChanger {
  actor: Actor
  ip: string | null
}

/**
 * `POST /v1/api-keys`: a key of the caller's account, in the mode the body names, with its secret
 * (shown this once). 422 `invalid_value` for a blank label, a `users:*` or `keys:*` scope or a past
 * `expires_at`; 422 `unknown_location` for a location that is not the account's in that mode.
 */
export async function createApiKey(
  trx: Trx,
  auth: AuthContext,
  by: KeyChanger,
  input: CreateApiKeyBody,
): Promise<CreatedApiKey> {
  const label = keyLabel(input.label)
  if (!label) throw errors.invalidValue('label', 'A key needs a label (at most 100 characters, not blank).')
  const peopleOnly = (input.scopes ?? []).filter(isPeopleOnlyScope)
  if (peopleOnly.length > 0)
    throw errors.invalidValue(
      'scopes',
      `No key holds ${peopleOnly.join(', ')}: only people manage people and keys.`,
    )
  const expiresAt =
    input.expires_at === undefined || input.expires_at === null
      ? undefined
      : instantOf(input.expires_at, 'expires_at')
  if (expiresAt !== undefined && expiresAt <= clock.now())
    throw errors.invalidValue('expires_at', 'expires_at must be in the future.')
  const { row, secret } = await insertKey(trx, auth.accountId, {
    mode: input.mode,
    scopes: input.scopes,
    expiresAt: expiresAt === undefined ? undefined : new Date(expiresAt),
    label,
    locationIds: input.location_ids ? [...new Set(input.location_ids)] : null,
  })
  await recordAudit(trx, {
    accountId: auth.accountId,
    type: 'key_created',
    actor: by.actor,
    target: { type: 'api_key', id: row.id },
    ip: by.ip,
  })
  return { ...toApiKey(row), secret }
}

/** `GET /v1/api-keys/{id}`: a key of the caller's account (either mode; no device key), or 404. */
export async function retrieveApiKey(db: Executor, auth: AuthContext, id: string): Promise<ApiKey> {
  const row = await findAccountKeyRow(db, auth.accountId, id)
  if (!row) throw errors.notFound('api_key', id)
  return toApiKey(row)
}

/** `GET /v1/api-keys`: the account's keys of both modes, newest first, never a secret. */
export async function listApiKeys(
  db: Executor,
  auth: AuthContext,
  beforeId: string | undefined,
  take: number,
): Promise<ApiKey[]> {
  return (await listAccountKeyRows(db, auth.accountId, beforeId, take)).map(toApiKey)
}

/**
 * `POST /v1/api-keys/{id}/revoke`: every process refuses the key within 5 s (the key cache's TTL).
 * Revoking a revoked key changes nothing and records nothing; the first revoke is audited.
 */
export async function revokeApiKey(trx: Trx, auth: AuthContext, by: KeyChanger, id: string): Promise<ApiKey> {
  const current = await findAccountKeyRow(trx, auth.accountId, id)
  if (!current) throw errors.notFound('api_key', id)
  if (current.revoked_at !== null) return toApiKey(current)
  const now = clock.now()
  // Conditional on not being revoked yet: of two revokes at once, one writes and audits.
  if (!(await revokeKeyRow(trx, id, now))) return retrieveApiKey(trx, auth, id)
  await recordAudit(trx, {
    accountId: auth.accountId,
    type: 'key_revoked',
    actor: by.actor,
    target: { type: 'api_key', id },
    ip: by.ip,
  })
  return toApiKey({ ...current, revoked_at: now })
}
