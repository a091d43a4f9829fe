import { type Selectable, sql } from 'kysely'
import { supportsRowLocks } from '../../db/connection.js'
import type { MembershipStatus, MembershipsTable, Role } from '../../db/schema.js'
import type { Executor, Trx } from '../../db/types.js'
import { toIso, toIsoOrNull } from '../../lib/time.js'
import { parseLocationIds } from '../keys/service.js'
import type { User } from './schemas.js'

/** A membership with its person's login and name: what a `user` object shows. */
export interface MemberRow {
  id: string
  email: string
  name: string
  role: Role
  location_ids: string | null
  operator_id: string | null
  status: MembershipStatus
  last_sign_in_at: number | null
  created_at: number
  updated_at: number
}

export function toUser(row: MemberRow): User {
  const locationIds = parseLocationIds(row.location_ids)
  return {
    object: 'user',
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    location_ids: locationIds === null ? null : [...locationIds],
    operator_id: row.operator_id,
    status: row.status,
    last_sign_in_at: toIsoOrNull(row.last_sign_in_at),
    created: toIso(row.created_at),
    updated: toIso(row.updated_at),
  }
}

/**
 * The account's memberships with their people. `id` is the person's (a user's id); `created` and
 * `updated` are the membership's, which is what this account knows of the person, except that a
 * rename (of the person) counts as an update too.
 */
function members(db: Executor, accountId: string) {
  return db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select((eb) => [
      'memberships.user_id as id',
      'users.email',
      'users.name',
      'memberships.role',
      'memberships.location_ids',
      'memberships.operator_id',
      'memberships.status',
      'memberships.last_sign_in_at',
      'memberships.created_at',
      // The later of the membership's and the person's changes (a rename is the person's).
      eb
        .case()
        .when('users.updated_at', '>', eb.ref('memberships.updated_at'))
        .then(eb.ref('users.updated_at'))
        .else(eb.ref('memberships.updated_at'))
        .end()
        .as('updated_at'),
    ])
    .where('memberships.account_id', '=', accountId)
}

export async function findMember(db: Executor, accountId: string, userId: string) {
  return members(db, accountId).where('memberships.user_id', '=', userId).executeTakeFirst() as Promise<
    MemberRow | undefined
  >
}

/**
 * A page of the account's people, newest person first (by the person's id, which sorts by creation:
 * the `memberships_account_user` index, read backwards). Not `db/keyset.ts`'s `newestFirst`: two
 * tables of the join have an `id`, and the list's key is the person's.
 */
export async function listMemberRows(
  db: Executor,
  accountId: string,
  filters: { status?: MembershipStatus; role?: Role },
  beforeId: string | undefined,
  take: number,
): Promise<MemberRow[]> {
  return (await members(db, accountId)
    .$if(filters.status !== undefined, (q) => q.where('memberships.status', '=', filters.status ?? 'active'))
    .$if(filters.role !== undefined, (q) => q.where('memberships.role', '=', filters.role ?? 'owner'))
    .$if(beforeId !== undefined, (q) => q.where('memberships.user_id', '<', beforeId ?? ''))
    .orderBy('memberships.user_id', 'desc')
    .limit(take)
    .execute()) as MemberRow[]
}

/**
 * Serialises the changes to an account's memberships (PostgreSQL; SQLite's write transactions run
 * one at a time already), so that two owners demoting or deactivating each other at once cannot
 * both find another active owner and leave the account with none. Held until the transaction ends.
 */
export async function lockMemberships(trx: Trx, accountId: string): Promise<void> {
  if (!supportsRowLocks(trx)) return
  await sql`select pg_advisory_xact_lock(hashtextextended(${`memberships:${accountId}`}, 0))`.execute(trx)
}

/** How many active owners the account has other than this person. */
export async function countOtherActiveOwners(
  db: Executor,
  accountId: string,
  userId: string,
): Promise<number> {
  const row = await db
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .where('status', '=', 'active')
    .where('user_id', '!=', userId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Whether the person has an active membership in another account than this one. */
export async function hasOtherActiveMembership(db: Executor, userId: string, accountId: string) {
  const row = await db
    .selectFrom('memberships')
    .select('id')
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .where('account_id', '!=', accountId)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

export async function insertMembership(trx: Trx, row: Selectable<MembershipsTable>): Promise<void> {
  await trx.insertInto('memberships').values(row).execute()
}

export async function updateMembership(
  trx: Trx,
  accountId: string,
  userId: string,
  changes: Partial<Pick<MembershipsTable, 'role' | 'location_ids' | 'operator_id' | 'status' | 'updated_at'>>,
): Promise<void> {
  await trx
    .updateTable('memberships')
    .set(changes)
    .where('account_id', '=', accountId)
    .where('user_id', '=', userId)
    .execute()
}

/**
 * Makes a person unless one with this e-mail exists (a concurrent invitation of the same e-mail to
 * another account included: the unique `email_key` decides, without failing the transaction).
 */
export async function insertPersonUnlessExists(
  trx: Trx,
  row: { id: string; email: string; email_key: string; name: string; created_at: number },
): Promise<void> {
  await trx
    .insertInto('users')
    .values({ ...row, password_hash: null, updated_at: row.created_at })
    .onConflict((oc) => oc.column('email_key').doNothing())
    .execute()
}

/** Whether any person exists: until one does, each start issues the owner's set-up link. */
export async function anyPersonExists(db: Executor): Promise<boolean> {
  return (await db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined
}
