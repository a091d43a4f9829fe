import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { Role, TokenKind } from '../../db/schema.js'
import type { Executor } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { hashSecret, parseLocationIds } from '../keys/service.js'
import {
  endSession,
  endSessionsOf,
  findActiveMembershipRows,
  findSessionRow,
  findUnusedTokenRow,
  insertSession,
  insertToken,
  takeTokenRow,
  touchSession,
  voidTokens,
} from './session-repository.js'

/** A session ends after 12 hours without a request, and 7 days after sign-in whatever happens. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000
/** `last_used_at` is written at most this often: a request a minute is enough for a 12-hour idle timeout. */
const TOUCH_EVERY_MS = 60_000
/** Like keys: a sign-out, a deactivation or a role change reaches every process within this. */
export const SESSION_CACHE_TTL_MS = 5000
const SESSION_CACHE_MAX_ENTRIES = 10_000

/** The cookie's name: `__Host-` (Secure, this host only, Path=/) when the service is served over https. */
export function sessionCookieName(publicUrl: string): string {
  return publicUrl.startsWith('https://') ? '__Host-att_session' : 'att_session'
}

export interface Membership {
  accountId: string
  role: Role
  locationIds: readonly string[] | null
  operatorId: string | null
}

/** The person a session cookie signs in, as a request sees them. */
export interface SignedInPerson {
  sessionId: string
  userId: string
  name: string
  email: string
  lastUsedAt: number
  expiresAt: number
  endedAt: number | null
  /** Active memberships only: an invited or deactivated one grants nothing. */
  memberships: readonly Membership[]
}

/** Whether the session still signs its person in at `now`. */
export function isSessionLive(person: SignedInPerson, now: number): boolean {
  return person.endedAt === null && now < person.expiresAt && now - person.lastUsedAt < SESSION_IDLE_MS
}

export async function findSignedInPerson(
  db: Executor,
  tokenHash: string,
): Promise<SignedInPerson | undefined> {
  const row = await findSessionRow(db, tokenHash)
  if (!row) return undefined
  const memberships = await findActiveMembershipRows(db, row.user_id)
  return {
    sessionId: row.session_id,
    userId: row.user_id,
    name: row.name,
    email: row.email,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    endedAt: row.ended_at,
    memberships: memberships.map((m) => ({
      accountId: m.account_id,
      role: m.role,
      locationIds: parseLocationIds(m.location_ids),
      operatorId: m.operator_id,
    })),
  }
}

/**
 * Cookie sessions looked up as keys are (http/auth.ts's KeyCache): by the cookie's SHA-256, kept at
 * most SESSION_CACHE_TTL_MS, so a cookie request costs what a key request does. The CSRF token is an
 * HMAC of the session's id under a stored secret: the same for the session's life, never stored.
 */
export class PersonSessions {
  private readonly entries: LRUCache<string, { person: SignedInPerson | undefined }>

  constructor(
    private readonly db: Executor,
    private readonly csrfSecret: Buffer,
    ttlMs = SESSION_CACHE_TTL_MS,
  ) {
    this.entries = new LRUCache({ max: SESSION_CACHE_MAX_ENTRIES, ttl: ttlMs, ttlResolution: 0, perf: clock })
  }

  /** The live session of a cookie's token, or undefined (unknown, ended, expired or idle too long). */
  async find(token: string): Promise<SignedInPerson | undefined> {
    const tokenHash = hashSecret(token)
    let hit = this.entries.get(tokenHash)
    if (!hit) {
      hit = { person: await findSignedInPerson(this.db, tokenHash) }
      this.entries.set(tokenHash, hit)
    }
    const person = hit.person
    const now = clock.now()
    if (!person || !isSessionLive(person, now)) return undefined
    if (now - person.lastUsedAt >= TOUCH_EVERY_MS) {
      person.lastUsedAt = now
      await touchSession(this.db, person.sessionId, now)
    }
    return person
  }

  /** Forgets a token at once in this process (its sign-out); other processes within the TTL. */
  forget(token: string): void {
    this.entries.delete(hashSecret(token))
  }

  /**
   * Forgets every cached session of a person at once in this process (their sessions were ended: a
   * password changed or reset); other processes within the TTL. A walk of the cache, for rare changes.
   */
  forgetPerson(userId: string): void {
    for (const [tokenHash, { person }] of this.entries.entries()) {
      if (person?.userId === userId) this.entries.delete(tokenHash)
    }
  }

  csrfToken(sessionId: string): string {
    return createHmac('sha256', this.csrfSecret).update(sessionId).digest('base64url')
  }

  /** Constant-time: a refusal takes as long whichever character differs. */
  isCsrfTokenValid(sessionId: string, sent: string | undefined): boolean {
    if (sent === undefined) return false
    const expected = Buffer.from(this.csrfToken(sessionId))
    const given = Buffer.from(sent)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }
}

/**
 * A new session for a person: the cookie's value (≥ 128 random bits; only its SHA-256 is stored),
 * and the session's id (its CSRF token's seed).
 */
export async function startSession(
  db: Executor,
  userId: string,
): Promise<{ token: string; sessionId: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url')
  const now = clock.now()
  const expiresAt = now + SESSION_ABSOLUTE_MS
  const sessionId = newId('sess')
  await insertSession(db, {
    id: sessionId,
    token_hash: hashSecret(token),
    user_id: userId,
    created_at: now,
    expires_at: expiresAt,
  })
  return { token, sessionId, expiresAt }
}

/** Ends every session of a person (all but one, when given): sign-out everywhere, a password change. */
export function endSessions(db: Executor, userId: string, exceptSessionId?: string): Promise<number> {
  return endSessionsOf(db, userId, clock.now(), exceptSessionId)
}

export function endOneSession(db: Executor, sessionId: string): Promise<void> {
  return endSession(db, sessionId, clock.now())
}

/** A link of the console that takes a token: accepting an invitation (or the owner's set-up), a reset. */
export function linkUrl(publicUrl: string, page: 'accept-invite' | 'reset-password', token: string): string {
  return `${publicUrl}/console/${page}#token=${token}`
}

/** Invitation links (the owner's set-up link too) live 7 days, reset links 1 hour (decisions.md). */
export const TOKEN_LIFETIME_MS: Readonly<Record<TokenKind, number>> = {
  invite: 7 * 24 * 60 * 60 * 1000,
  owner: 7 * 24 * 60 * 60 * 1000,
  reset: 60 * 60 * 1000,
}

/**
 * A single-use link token (≥ 128 random bits, stored hashed): an invitation of a person to an
 * account, a password reset, or the owner's set-up link (no person yet: `userId` null). A new one
 * voids the earlier ones of its kind for that person (and account).
 */
export async function issueToken(
  db: Executor,
  kind: TokenKind,
  userId: string | null,
  accountId: string | null,
): Promise<string> {
  const token = randomBytes(32).toString('base64url')
  const now = clock.now()
  await voidTokens(db, userId, kind, accountId, now)
  await insertToken(db, {
    token_hash: hashSecret(token),
    kind,
    user_id: userId,
    account_id: accountId,
    expires_at: now + TOKEN_LIFETIME_MS[kind],
    created_at: now,
  })
  return token
}

/**
 * What a link's token would give, without taking it (unknown, used or expired: undefined): what its
 * accept checks before the transaction that takes it, so a password's hash is not worked out under
 * the transaction's write lock.
 */
export async function peekToken(
  db: Executor,
  kinds: readonly TokenKind[],
  token: string,
): Promise<{ kind: TokenKind; userId: string | null; accountId: string | null } | undefined> {
  if (token.length > 200) return undefined
  const row = await findUnusedTokenRow(db, hashSecret(token), kinds)
  if (!row || row.expires_at <= clock.now()) return undefined
  return { kind: row.kind, userId: row.user_id, accountId: row.account_id }
}

/**
 * Takes a link's token once, if it is of one of `kinds`: its kind, person and account, or undefined
 * when unknown, used or expired (one answer for all three, so a guess learns nothing).
 */
export async function takeToken(
  db: Executor,
  kinds: readonly TokenKind[],
  token: string,
): Promise<{ kind: TokenKind; userId: string | null; accountId: string | null } | undefined> {
  if (token.length > 200) return undefined
  const now = clock.now()
  const row = await takeTokenRow(db, hashSecret(token), kinds, now)
  if (!row || row.expires_at <= now) return undefined
  return { kind: row.kind, userId: row.user_id, accountId: row.account_id }
}
