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

/** A person's active memberships, with their accounts' names. */
export async function findActiveMembershipRows(db: Executor, userId: string) {
  return db
    .selectFrom('memberships')
    .innerJoin('accounts', 'accounts.id', 'memberships.account_id')
    .select([
      'memberships.account_id',
      'accounts.name as account_name',
      'memberships.role',
      'memberships.location_ids',
      'memberships.operator_id',
    ])
    .where('memberships.user_id', '=', userId)
    .where('memberships.status', '=', 'active')
    .orderBy('memberships.account_id')
    .execute()
}

/** The idle timeout counts from here. */
export async function touchSession(db: Executor, sessionId: string, now: number): Promise<void> {
  await db.updateTable('auth_sessions').set({ last_used_at: now }).where('id', '=', sessionId).execute()
}
