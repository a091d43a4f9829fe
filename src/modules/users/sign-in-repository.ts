import type { Insertable } from 'kysely'
import type { MembershipsTable, UsersTable } from '../../db/schema.js'
import type { Executor } from '../../db/types.js'

/**
 * A person by their e-mail's key, with each of their memberships (one row per membership; one row
 * with null membership columns when they have none; no row for an unknown e-mail): one statement
 * whether or not the person exists, so an unknown e-mail costs what a known one does.
 */
export async function findPersonRowsByEmailKey(db: Executor, emailKey: string) {
  return db
    .selectFrom('users')
    .leftJoin('memberships', 'memberships.user_id', 'users.id')
    .select([
      'users.id',
      'users.email',
      'users.name',
      'users.password_hash',
      'memberships.account_id',
      'memberships.role',
      'memberships.status',
    ])
    .where('users.email_key', '=', emailKey)
    .orderBy('memberships.account_id')
    .execute()
}

export async function findPersonRow(db: Executor, userId: string) {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'name', 'password_hash'])
    .where('id', '=', userId)
    .executeTakeFirst()
}

export async function findPersonRowByEmailKey(db: Executor, emailKey: string) {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'name', 'password_hash'])
    .where('email_key', '=', emailKey)
    .executeTakeFirst()
}

/** A person's memberships of every status. */
export async function findMembershipRowsOf(db: Executor, userId: string) {
  return db
    .selectFrom('memberships')
    .select(['account_id', 'role', 'status'])
    .where('user_id', '=', userId)
    .orderBy('account_id')
    .execute()
}

/**
 * The failed sign-ins of an e-mail since `since`: in all, from `ip`, and the latest of each (null
 * when none). The index on (email_key, created_at) holds the range.
 */
export async function countSignInFailures(db: Executor, emailKey: string, ip: string, since: number) {
  const row = await db
    .selectFrom('sign_in_failures')
    .select((eb) => [
      eb.fn.countAll().as('total'),
      eb.fn.max('created_at').as('latest'),
      eb.fn.sum<number | string | null>(eb.case().when('ip', '=', ip).then(1).else(0).end()).as('from_ip'),
      eb.fn
        .max<number | string | null>(eb.case().when('ip', '=', ip).then(eb.ref('created_at')).end())
        .as('latest_from_ip'),
    ])
    .where('email_key', '=', emailKey)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow()
  // PostgreSQL answers counts and sums as strings.
  const number = (value: unknown) => (value === null || value === undefined ? null : Number(value))
  return {
    total: number(row.total) ?? 0,
    latest: number(row.latest),
    fromIp: number(row.from_ip) ?? 0,
    latestFromIp: number(row.latest_from_ip),
  }
}

/** Records a failed sign-in, and forgets the e-mail's failures from before `forgetBefore` (the lockouts look back no further). */
export async function insertSignInFailure(
  db: Executor,
  row: { email_key: string; ip: string; created_at: number },
  forgetBefore: number,
): Promise<void> {
  await db
    .deleteFrom('sign_in_failures')
    .where('email_key', '=', row.email_key)
    .where('created_at', '<=', forgetBefore)
    .execute()
  await db.insertInto('sign_in_failures').values(row).execute()
}

/** Forgets an e-mail's failed sign-ins: from one address (a success there), or from all (a reset). */
export async function deleteSignInFailures(db: Executor, emailKey: string, ip?: string): Promise<void> {
  let query = db.deleteFrom('sign_in_failures').where('email_key', '=', emailKey)
  if (ip !== undefined) query = query.where('ip', '=', ip)
  await query.execute()
}

/** The person signed in now: the sign-in time of each of their active memberships. */
export async function setLastSignIn(db: Executor, userId: string, now: number): Promise<void> {
  await db
    .updateTable('memberships')
    .set({ last_sign_in_at: now })
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .execute()
}

export async function setPasswordHash(
  db: Executor,
  userId: string,
  hash: string,
  now: number,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: hash, updated_at: now })
    .where('id', '=', userId)
    .execute()
}

export async function setPersonName(db: Executor, userId: string, name: string, now: number): Promise<void> {
  await db.updateTable('users').set({ name, updated_at: now }).where('id', '=', userId).execute()
}

export async function insertPerson(db: Executor, row: Insertable<UsersTable>): Promise<void> {
  await db.insertInto('users').values(row).execute()
}

/** An invited (or already active) membership made active; false when it is neither (deactivated, gone). */
export async function activateMembership(
  db: Executor,
  userId: string,
  accountId: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('memberships')
    .set({ status: 'active', updated_at: now })
    .where('user_id', '=', userId)
    .where('account_id', '=', accountId)
    .where('status', 'in', ['invited', 'active'])
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Makes a person an active owner of an account: their membership there changed, or a new one. */
export async function upsertOwnerMembership(
  db: Executor,
  row: Insertable<MembershipsTable> & { user_id: string; account_id: string; updated_at: number },
): Promise<void> {
  const changed = await db
    .updateTable('memberships')
    .set({ role: 'owner', status: 'active', updated_at: row.updated_at })
    .where('user_id', '=', row.user_id)
    .where('account_id', '=', row.account_id)
    .executeTakeFirst()
  if (Number(changed.numUpdatedRows) === 0) await db.insertInto('memberships').values(row).execute()
}
