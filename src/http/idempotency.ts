import { hash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, type ErrorBody, errors } from '../core/errors.js'
import type { AuthContext } from '../core/identity.js'
import { idempotencyReplays } from '../core/metrics.js'
import { compiled } from '../db/compiled.js'
import { supportsRowLocks } from '../db/connection.js'
import { type Flag, toFlag } from '../db/schema.js'
import { savepoint } from '../db/transaction-connection.js'
import type { Db, Executor, Trx } from '../db/types.js'
import { clock } from '../lib/clock.js'
import { canonicalJson } from '../lib/json.js'
import { requireAuth } from './auth.js'

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000
/** A claim older than this belongs to a request that died; another request may take it over. */
export const IDEMPOTENCY_LEASE_MS = 60_000
const MAX_KEY_LENGTH = 255

type Replay = { kind: 'replay'; status: number; body: string }
type Claim = { kind: 'claimed'; token: number } | Replay
type OneTransactionOutcome<T> = Replay | { kind: 'refused'; error: ApiError } | { kind: 'created'; result: T }

type KeyScope = {
  accountId: string
  livemode: Flag
  /** The principal's id, a colon, and the client's key: what the `key` column holds. */
  key: string
}

/**
 * Idempotency keys are scoped to account, mode and principal (decisions.md): two keys of one
 * account, or a key and a person, never replay each other's answers. The principal's id prefixes
 * the stored key (`key_…:<key>`, `usr_…:<key>`), so the table and its primary key stay as they were.
 */
function keyScope(auth: AuthContext, key: string): KeyScope {
  return { accountId: auth.accountId, livemode: toFlag(auth.livemode), key: `${auth.principalId}:${key}` }
}

/**
 * Runs every POST create, with or without an `Idempotency-Key`.
 *
 * With a key, the request first claims the key in a short transaction of its own, so a second
 * request with the same key sees the claim at once (409 `idempotency_key_in_use`) instead of
 * waiting on a lock. The object, its event and the stored response then commit together in one
 * transaction: the response is replayable exactly when the object exists. Schema validation
 * (before this runs) and `validation_error`s raised by the service are not stored, so a corrected
 * retry can succeed; other 4xx answers are stored and replayed; a 5xx releases the key.
 *
 * On SQLite a single create's claim is made in the create's own transaction instead (one commit,
 * not two; see `runInOneTransaction`).
 */
export class CreateRunner {
  /**
   * SQLite runs one write transaction at a time (each `BEGIN IMMEDIATE` waits for the write lock),
   * so there a separate claim transaction only costs a commit; PostgreSQL runs them side by side.
   */
  private readonly claimInCreateTransaction: boolean

  constructor(private readonly db: Db) {
    this.claimInCreateTransaction = !supportsRowLocks(db)
  }

  /**
   * `storedAs` is what a replay will answer instead of the answer itself: a create whose answer
   * shows a secret once (an API key's, an invitation's link) stores it without, since only hashes
   * of secrets are kept; its replay says null where the secret was.
   */
  async run<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    create: (trx: Trx) => Promise<T>,
    successStatus = 201,
    storedAs: (created: T) => unknown = (created) => created,
  ): Promise<T> {
    if (this.claimInCreateTransaction) {
      const auth = requireAuth(request)
      const key = readKey(request)
      if (key !== undefined) {
        const scope = keyScope(auth, key)
        return this.runInOneTransaction(reply, scope, fingerprint(request), create, successStatus, storedAs)
      }
    }
    return this.runKeyed(request, reply, successStatus, storedAs, (store) =>
      this.db.transaction().execute(async (trx) => {
        const created = await create(trx)
        await store?.(trx, created)
        return created
      }),
    )
  }

  /**
   * The Idempotency-Key around a create: claimed first, replayed when already answered, and the
   * answer stored through `store` (undefined without a key) where the create commits it.
   */
  private async runKeyed<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    successStatus: number,
    storedAs: (created: T) => unknown,
    execute: (store: ((db: Executor, result: T) => Promise<void>) | undefined) => Promise<T>,
  ): Promise<T> {
    const auth = requireAuth(request)
    const key = readKey(request)
    if (key === undefined) {
      const result = await execute(undefined)
      reply.code(successStatus)
      return result
    }
    const scope = keyScope(auth, key)
    const claim = await this.claim(this.db, scope, fingerprint(request))
    if (claim.kind === 'replay') return this.replay(reply, claim)
    try {
      const result = await execute((db, created) =>
        this.complete(db, scope, claim.token, successStatus, JSON.stringify(storedAs(created))),
      )
      reply.code(successStatus)
      return result
    } catch (error) {
      if (isStoredRefusal(error)) {
        await this.complete(this.db, scope, claim.token, error.status, JSON.stringify(error.toBody()))
      } else {
        await this.release(scope, claim.token)
      }
      throw error
    }
  }

  /**
   * The claim, the create and the stored response in one transaction: one commit instead of two.
   *
   * Safe on SQLite because its write transactions run one at a time: from our `BEGIN IMMEDIATE` to
   * our commit no other request, of this process or another, reads or writes anything. The split
   * claim exists so that a second request with the same key sees the claim at once (409
   * `idempotency_key_in_use`) rather than waiting on a lock, but on SQLite that second request
   * waits for the write lock either way, and then finds what it would find after the 409 and a
   * retry: the stored response (a replay), or no key at all when the first request failed and
   * released it. A claim in flight that another process committed the two-step way is met by the
   * same rules as before (`idempotency_key_in_use`, taken over after the lease).
   *
   * A refusal that is stored (a 4xx other than `validation_error`) must not keep what the create
   * wrote before failing, but must keep the claim: the create runs inside a savepoint, rolled back
   * on error, and the refusal is then stored and committed. Any other error rolls everything back,
   * which releases the claim.
   */
  private async runInOneTransaction<T>(
    reply: FastifyReply,
    scope: KeyScope,
    print: string,
    create: (trx: Trx) => Promise<T>,
    successStatus: number,
    storedAs: (created: T) => unknown,
  ): Promise<T> {
    // A transaction of `db.transaction()` with a savepoint of our own, rather than Kysely's
    // controlled transaction and its `savepoint()`: those build objects and hand the connection
    // over again at every step (about 4 % of a keyed create's CPU, docs/performance-log.md).
    const outcome = await this.db.transaction().execute(async (trx): Promise<OneTransactionOutcome<T>> => {
      const claim = await this.claim(trx, scope, print)
      if (claim.kind === 'replay') return claim
      const beforeCreate = await savepoint(trx, 'before_create')
      let result: T
      try {
        result = await create(trx)
      } catch (error) {
        if (!isStoredRefusal(error)) throw error
        await beforeCreate.rollback()
        await this.complete(trx, scope, claim.token, error.status, JSON.stringify(error.toBody()))
        return { kind: 'refused', error }
      }
      await this.complete(trx, scope, claim.token, successStatus, JSON.stringify(storedAs(result)))
      return { kind: 'created', result }
    })
    if (outcome.kind === 'replay') return this.replay(reply, outcome)
    // Thrown only now: the refusal is committed with its key.
    if (outcome.kind === 'refused') throw outcome.error
    reply.code(successStatus)
    return outcome.result
  }

  private replay<T>(reply: FastifyReply, claim: Replay): T {
    idempotencyReplays.inc()
    reply.header('idempotent-replayed', 'true')
    if (claim.status >= 400) throw ApiError.fromBody(claim.status, JSON.parse(claim.body) as ErrorBody)
    reply.code(claim.status)
    // The stored bytes as they are, not parsed and serialized again through today's response
    // schema: a response stored before an upgrade that added a field (an operator without
    // `pay_rule_id`) is still the answer the first request got, and the serializer would refuse it
    // (a 500) where the client asked for a replay. Fastify sends a JSON-typed string unchanged.
    reply.type('application/json; charset=utf-8')
    return claim.body as T
  }

  private async claim(db: Executor, scope: KeyScope, print: string): Promise<Claim> {
    // A few rounds cover the races: a row expiring, being released or being taken over between
    // our insert and our read.
    for (let round = 0; round < 5; round++) {
      const now = clock.now()
      const inserted = await insertClaim.run(db, { ...scope, fingerprint: print, now })
      if (inserted.numAffectedRows === 1n) return { kind: 'claimed', token: now }

      const row = await selectKey.first(db, scope)
      if (!row) continue
      if (row.created_at <= now - IDEMPOTENCY_RETENTION_MS) {
        await db
          .deleteFrom('idempotency_keys')
          .where((eb) => eb.and(keyMatch(scope)))
          .where('created_at', '=', row.created_at)
          .execute()
        continue
      }
      if (row.fingerprint !== print) throw errors.idempotencyKeyReuse()
      if (row.status === 'done' && row.response_status !== null && row.response_body !== null) {
        return { kind: 'replay', status: row.response_status, body: row.response_body }
      }
      if (row.locked_at > now - IDEMPOTENCY_LEASE_MS) throw errors.idempotencyKeyInUse()
      const taken = await db
        .updateTable('idempotency_keys')
        .set({ locked_at: now })
        .where((eb) => eb.and(keyMatch(scope)))
        .where('status', '=', 'in_flight')
        .where('locked_at', '=', row.locked_at)
        .executeTakeFirst()
      if (taken.numUpdatedRows === 1n) return { kind: 'claimed', token: now }
    }
    throw errors.idempotencyKeyInUse()
  }

  /** Stores the response; fails (rolling back the create) if our claim was taken over meanwhile. */
  private async complete(db: Executor, scope: KeyScope, token: number, status: number, body: string) {
    const result = await completeClaim.run(db, { ...scope, token, status, body })
    if (result.numAffectedRows !== 1n) throw errors.idempotencyKeyInUse()
  }

  private async release(scope: KeyScope, token: number) {
    await this.db
      .deleteFrom('idempotency_keys')
      .where((eb) => eb.and(keyMatch(scope)))
      .where('status', '=', 'in_flight')
      .where('locked_at', '=', token)
      .execute()
  }
}

/** A refusal stored with the key and replayed: a 4xx other than `validation_error`. */
function isStoredRefusal(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status < 500 && error.type !== 'validation_error'
}

// The statements of every keyed create, compiled once (db/compiled.ts).
const insertClaim = compiled(
  (db, p: { accountId: string; livemode: Flag; key: string; fingerprint: string; now: number }) =>
    db
      .insertInto('idempotency_keys')
      .values({
        account_id: p.accountId,
        livemode: p.livemode,
        key: p.key,
        fingerprint: p.fingerprint,
        status: 'in_flight',
        response_status: null,
        response_body: null,
        created_at: p.now,
        locked_at: p.now,
      })
      .onConflict((oc) => oc.columns(['account_id', 'livemode', 'key']).doNothing()),
)
const selectKey = compiled((db, p: KeyScope) =>
  db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', p.accountId)
    .where('livemode', '=', p.livemode)
    .where('key', '=', p.key),
)
const completeClaim = compiled((db, p: KeyScope & { token: number; status: number; body: string }) =>
  db
    .updateTable('idempotency_keys')
    .set({ status: 'done', response_status: p.status, response_body: p.body })
    .where('account_id', '=', p.accountId)
    .where('livemode', '=', p.livemode)
    .where('key', '=', p.key)
    .where('status', '=', 'in_flight')
    .where('locked_at', '=', p.token),
)

function keyMatch(scope: KeyScope) {
  return { account_id: scope.accountId, livemode: scope.livemode, key: scope.key }
}

/** Drops keys past their 24-hour retention; run periodically. */
export async function purgeExpiredIdempotencyKeys(db: Db, now = clock.now()): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<=', now - IDEMPOTENCY_RETENTION_MS)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

function readKey(request: FastifyRequest): string | undefined {
  const raw = request.headers['idempotency-key']
  if (raw === undefined) return undefined
  const key = Array.isArray(raw) ? raw[0] : raw
  if (key === undefined || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw errors.invalidValue(
      'Idempotency-Key',
      `The Idempotency-Key header must be 1 to ${MAX_KEY_LENGTH} characters.`,
    )
  }
  return key
}

/** What a key is bound to: the method, the path and the body (key order does not matter). */
function fingerprint(request: FastifyRequest): string {
  const path = request.url.split('?')[0] ?? request.url
  return requestFingerprint(request.method, path, request.body)
}

/** The fingerprint of a request by its parts; exported so tests can stage a stored key. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return hash('sha256', `${method} ${path}\n${canonicalJson(body ?? null)}`, 'hex')
}
