import type { TokenKind } from '../../db/schema.js'
import type { Executor } from '../../db/types.js'

/** A live-or-not session by its cookie's SHA-256, with the person it signs in. */
export async function findSessionRow(db: Executor, tokenHash: string) {
  return db
    .selectFrom('auth_sessions')
    .innerJoin('users', 'users.id', 'auth_sessions.user_id')
    .select([
      'auth_sessions.id as session_id',
      'auth_sessions.last_used_at',
      'auth_sessions.expires_at',
      'auth_sessions.ended_at',
      'users.id as user_id',
      'users.name',
      'users.email',
    ])
    .where('auth_sessions.token_hash', '=', tokenHash)
    .executeTakeFirst()
}

/** A person's active memberships. */
export async function findActiveMembershipRows(db: Executor, userId: string) {
  return db
    .selectFrom('memberships')
    .select(['account_id', 'role', 'location_ids', 'operator_id'])
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .orderBy('account_id')
    .execute()
}

/** The idle timeout counts from here. */
export async function touchSession(db: Executor, sessionId: string, now: number): Promise<void> {
  await db.updateTable('auth_sessions').set({ last_used_at: now }).where('id', '=', sessionId).execute()
}

export async function insertSession(
  db: Executor,
  row: { id: string; token_hash: string; user_id: string; created_at: number; expires_at: number },
): Promise<void> {
  await db
    .insertInto('auth_sessions')
    .values({ ...row, last_used_at: row.created_at, ended_at: null })
    .execute()
}

/** Ends a person's sessions, all of them or all but one; answers how many were live. */
export async function endSessionsOf(
  db: Executor,
  userId: string,
  now: number,
  exceptSessionId?: string,
): Promise<number> {
  let query = db
    .updateTable('auth_sessions')
    .set({ ended_at: now })
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
  if (exceptSessionId !== undefined) query = query.where('id', '!=', exceptSessionId)
  return Number((await query.executeTakeFirst()).numUpdatedRows)
}

export async function endSession(db: Executor, sessionId: string, now: number): Promise<void> {
  await db
    .updateTable('auth_sessions')
    .set({ ended_at: now })
    .where('id', '=', sessionId)
    .where('ended_at', 'is', null)
    .execute()
}

export async function insertToken(
  db: Executor,
  row: {
    token_hash: string
    kind: TokenKind
    user_id: string | null
    account_id: string | null
    expires_at: number
    created_at: number
  },
): Promise<void> {
  await db
    .insertInto('user_tokens')
    .values({ ...row, used_at: null })
    .execute()
}

/** Voids a person's unused tokens of a kind (of one account, for invitations). */
export async function voidTokens(
  db: Executor,
  userId: string | null,
  kind: TokenKind,
  accountId: string | null,
  now: number,
): Promise<void> {
  let query = db
    .updateTable('user_tokens')
    .set({ used_at: now })
    .where((eb) => (userId === null ? eb('user_id', 'is', null) : eb('user_id', '=', userId)))
    .where('kind', '=', kind)
    .where('used_at', 'is', null)
  if (accountId !== null) query = query.where('account_id', '=', accountId)
  await query.execute()
}

/** Marks an unused token used and answers it: one caller wins a token, however many race for it. */
export async function takeTokenRow(
  db: Executor,
  tokenHash: string,
  kinds: readonly TokenKind[],
  now: number,
) {
  return db
    .updateTable('user_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('kind', 'in', kinds)
    .where('used_at', 'is', null)
    .returning(['kind', 'user_id', 'account_id', 'expires_at'])
    .executeTakeFirst()
}

/** An unused token of one of `kinds`, read without taking it. */
export async function findUnusedTokenRow(db: Executor, tokenHash: string, kinds: readonly TokenKind[]) {
  return db
    .selectFrom('user_tokens')
    .select(['kind', 'user_id', 'account_id', 'expires_at'])
    .where('token_hash', '=', tokenHash)
    .where('kind', 'in', kinds)
    .where('used_at', 'is', null)
    .executeTakeFirst()
}
