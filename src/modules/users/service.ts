import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Db, Executor, Trx } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { accountNames, ensureAccount, storedLocationIds } from '../keys/service.js'
import { ownedLocationIds } from '../locations/service.js'
import { resolveOperator } from '../operators/service.js'
import { type Actor, type AuditType, recordAudit } from './audit.js'
import { type AuditRow, listAuditRows, toAuditEntry } from './audit-repository.js'
import type { Mailer } from './mailer.js'
import {
  anyPersonExists,
  countOtherActiveOwners,
  findMember,
  hasOtherActiveMembership,
  insertMembership,
  insertPersonUnlessExists,
  listMemberRows,
  lockMemberships,
  type MemberRow,
  toUser,
  updateMembership,
} from './repository.js'
import type { Role } from './roles.js'
import type {
  CreateUserBody,
  ListAuditLogQuery,
  ListUsersQuery,
  UpdateUserBody,
  User,
  UserWithInviteUrl,
} from './schemas.js'
import { endSessions, issueToken, linkUrl } from './sessions.js'
import { emailKeyOf } from './sign-in.js'
import { findPersonRowByEmailKey, setPersonName } from './sign-in-repository.js'

export type { AuditRow, MemberRow }
export { toAuditEntry, toUser }

/** Who makes a change to people, and from where: what its audit entry records. */
export interface Change {
  actor: Actor
  ip: string | null
}

/** The command line's changes (`npm run cli -- users …`): the service itself, from no address. */
export const CLI_CHANGE: Change = { actor: { type: 'service', id: 'service', name: 'cli' }, ip: null }

function audit(trx: Executor, auth: AuthContext, change: Change, type: AuditType, userId: string) {
  return recordAudit(trx, {
    accountId: auth.accountId,
    type,
    actor: change.actor,
    target: { type: 'user', id: userId },
    ip: change.ip,
  })
}

async function memberOrMissing(db: Executor, auth: AuthContext, userId: string): Promise<MemberRow> {
  const row = await findMember(db, auth.accountId, userId)
  if (!row) throw errors.notFound('user', userId)
  return row
}

/**
 * A membership's sites as stored: null (every location) or this account's locations, of either
 * mode (a person works in both; in each mode the listed locations of that mode apply), each once.
 * Empty: 422 `invalid_value`; an id that is no location of the account: 422 `unknown_location`.
 */
async function checkedLocationIds(
  db: Executor,
  accountId: string,
  ids: readonly string[] | null,
): Promise<string | null> {
  if (ids === null) return null
  const unique = [...new Set(ids)]
  if (unique.length === 0)
    throw errors.invalidValue('location_ids', 'location_ids is null (every location) or a non-empty list.')
  const found = new Set([
    ...(await ownedLocationIds(db, { accountId, livemode: false }, unique)),
    ...(await ownedLocationIds(db, { accountId, livemode: true }, unique)),
  ])
  const unknown = unique.find((id) => !found.has(id))
  if (unknown !== undefined) throw errors.unknownLocation('location_ids', unknown)
  return storedLocationIds(unique)
}

/**
 * The worker record that is the person: an operator of the request's mode, referenced as every
 * body reference is (422 `unknown_operator`, `cross_mode_reference` for one of the other mode).
 */
async function checkedOperatorId(db: Executor, auth: AuthContext, id: string | null): Promise<string | null> {
  if (id === null) return null
  return (await resolveOperator(db, auth, { operator_id: id })).id
}

/**
 * POST /v1/users (and `cli users invite`): an invited membership of the account, and the person
 * when no one has the e-mail yet (no password: they set it when they accept). A person who has a
 * login already keeps their name. An e-mail with a membership here already: 409 `email_in_use`.
 * Answers the user with the invitation's link (valid 7 days; the token is stored hashed).
 */
export async function inviteUser(
  trx: Trx,
  auth: AuthContext,
  input: CreateUserBody,
  change: Change,
  publicUrl: string,
): Promise<UserWithInviteUrl> {
  await lockMemberships(trx, auth.accountId)
  const locationIds = await checkedLocationIds(trx, auth.accountId, input.location_ids)
  const operatorId = await checkedOperatorId(trx, auth, input.operator_id ?? null)
  const now = clock.now()
  const emailKey = emailKeyOf(input.email)
  await insertPersonUnlessExists(trx, {
    id: newId('usr'),
    email: input.email,
    email_key: emailKey,
    name: input.name.trim(),
    created_at: now,
  })
  const person = await findPersonRowByEmailKey(trx, emailKey)
  if (!person) throw new Error(`the person of ${emailKey} was neither made nor found`)
  if (await findMember(trx, auth.accountId, person.id)) throw errors.emailInUse()
  await insertMembership(trx, {
    id: newId('mbr'),
    account_id: auth.accountId,
    user_id: person.id,
    role: input.role,
    location_ids: locationIds,
    operator_id: operatorId,
    status: 'invited',
    last_sign_in_at: null,
    created_at: now,
    updated_at: now,
  })
  return invitation(trx, auth, person.id, change, publicUrl)
}

/** A new invitation link (voiding the earlier one), its audit entry, and the user with the link. */
async function invitation(
  trx: Trx,
  auth: AuthContext,
  userId: string,
  change: Change,
  publicUrl: string,
): Promise<UserWithInviteUrl> {
  const token = await issueToken(trx, 'invite', userId, auth.accountId)
  await audit(trx, auth, change, 'user_invited', userId)
  const user = toUser(await memberOrMissing(trx, auth, userId))
  return { ...user, invite_url: linkUrl(publicUrl, 'accept-invite', token) }
}

/** POST /v1/users/{id}/invite: a new link for an invited membership (409 `not_invited` otherwise). */
export async function reinviteUser(
  trx: Trx,
  auth: AuthContext,
  userId: string,
  change: Change,
  publicUrl: string,
): Promise<UserWithInviteUrl> {
  await lockMemberships(trx, auth.accountId)
  const row = await memberOrMissing(trx, auth, userId)
  if (row.status !== 'invited') throw errors.notInvited(userId, row.status)
  return invitation(trx, auth, userId, change, publicUrl)
}

/** E-mails an invitation (`SMTP_URL` set): the link, the account it is to, and who sent it. */
export async function mailInvitation(
  db: Executor,
  mailer: Mailer,
  accountId: string,
  user: UserWithInviteUrl,
  inviter: Actor,
): Promise<void> {
  const account = (await accountNames(db, [accountId])).get(accountId) ?? accountId
  await mailer.send({
    to: user.email,
    subject: `You are invited to ${account}`,
    text: [
      `Hello ${user.name},`,
      '',
      `${inviter.type === 'user' && inviter.name !== null ? `${inviter.name} invited you` : 'You are invited'} to the account "${account}" of the attendance service, as ${user.role}. To accept, open this link within 7 days:`,
      '',
      user.invite_url,
      '',
      'If you did not expect this, ignore this e-mail.',
    ].join('\n'),
  })
}

export async function retrieveUser(db: Executor, auth: AuthContext, userId: string): Promise<User> {
  return toUser(await memberOrMissing(db, auth, userId))
}

export function listUsers(
  db: Executor,
  auth: AuthContext,
  query: ListUsersQuery,
  beforeId: string | undefined,
  take: number,
): Promise<MemberRow[]> {
  return listMemberRows(db, auth.accountId, query, beforeId, take)
}

/** Nobody changes their own role, sites, worker record or status (403 `self_change`). */
function refuseSelf(auth: AuthContext, userId: string, param: string): void {
  if (auth.principalId === userId) throw errors.selfChange(param)
}

/**
 * Whether taking this membership out of the active owners would leave the account without one
 * (409 `last_owner`). The caller holds the account's membership lock (`lockMemberships`), so two
 * owners demoting each other at once cannot both pass.
 */
async function refuseLastOwner(db: Executor, auth: AuthContext, row: MemberRow): Promise<void> {
  if (row.role !== 'owner' || row.status !== 'active') return
  if ((await countOtherActiveOwners(db, auth.accountId, row.id)) === 0) throw errors.lastOwner()
}

/**
 * PATCH /v1/users/{id}: the person's name (their login's, in every account), and the membership's
 * role, sites and worker record. A field that would change the caller's own role, sites or worker
 * record: 403 `self_change`; the same value is no change. Takes effect within 5 s (the session
 * cache), like a revoked key.
 */
export async function updateUser(
  trx: Trx,
  auth: AuthContext,
  userId: string,
  input: UpdateUserBody,
  change: Change,
): Promise<User> {
  await lockMemberships(trx, auth.accountId)
  const row = await memberOrMissing(trx, auth, userId)
  const changes: { role?: Role; location_ids?: string | null; operator_id?: string | null } = {}
  if (input.role !== undefined && input.role !== row.role) {
    refuseSelf(auth, userId, 'role')
    if (input.role !== 'owner') await refuseLastOwner(trx, auth, row)
    changes.role = input.role
  }
  if (input.location_ids !== undefined) {
    const locationIds = await checkedLocationIds(trx, auth.accountId, input.location_ids)
    if (locationIds !== row.location_ids) {
      refuseSelf(auth, userId, 'location_ids')
      changes.location_ids = locationIds
    }
  }
  if (input.operator_id !== undefined) {
    const operatorId = await checkedOperatorId(trx, auth, input.operator_id)
    if (operatorId !== row.operator_id) {
      refuseSelf(auth, userId, 'operator_id')
      changes.operator_id = operatorId
    }
  }
  const name = input.name?.trim()
  const renamed = name !== undefined && name !== row.name
  if (!renamed && Object.keys(changes).length === 0) return toUser(row)
  const now = clock.now()
  if (Object.keys(changes).length > 0)
    await updateMembership(trx, auth.accountId, userId, { ...changes, updated_at: now })
  if (renamed) await setPersonName(trx, userId, name, now)
  await audit(trx, auth, change, 'user_updated', userId)
  return toUser(await memberOrMissing(trx, auth, userId))
}

/**
 * POST /v1/users/{id}/deactivate: the person may no longer act in this account; an invitation
 * still open stops working. Their sessions end when this was their last active membership (their
 * cookie would act in no account); otherwise the membership leaves their cached sessions within
 * 5 s, and their other accounts are not this account's to sign them out of. Deactivating a
 * deactivated membership changes nothing.
 */
export async function deactivateUser(
  trx: Trx,
  auth: AuthContext,
  userId: string,
  change: Change,
): Promise<User> {
  await lockMemberships(trx, auth.accountId)
  const row = await memberOrMissing(trx, auth, userId)
  refuseSelf(auth, userId, 'id')
  if (row.status === 'deactivated') return toUser(row)
  await refuseLastOwner(trx, auth, row)
  await updateMembership(trx, auth.accountId, userId, { status: 'deactivated', updated_at: clock.now() })
  if (!(await hasOtherActiveMembership(trx, userId, auth.accountId))) await endSessions(trx, userId)
  await audit(trx, auth, change, 'user_deactivated', userId)
  return toUser(await memberOrMissing(trx, auth, userId))
}

/**
 * POST /v1/users/{id}/reactivate: active again, or invited again when the person never signed in
 * to this account (an invitation deactivated before it was accepted: send a new link with
 * `/invite`). Reactivating a membership that is not deactivated changes nothing.
 */
export async function reactivateUser(
  trx: Trx,
  auth: AuthContext,
  userId: string,
  change: Change,
): Promise<User> {
  await lockMemberships(trx, auth.accountId)
  const row = await memberOrMissing(trx, auth, userId)
  refuseSelf(auth, userId, 'id')
  if (row.status !== 'deactivated') return toUser(row)
  const status = row.last_sign_in_at === null ? 'invited' : 'active'
  await updateMembership(trx, auth.accountId, userId, { status, updated_at: clock.now() })
  await audit(trx, auth, change, 'user_reactivated', userId)
  return toUser(await memberOrMissing(trx, auth, userId))
}

/**
 * POST /v1/users/{id}/sign-out-everywhere: ends every session of the person (a lost laptop); they
 * sign in again. Their cookies stop working within 5 s in every process (the session cache).
 */
export async function signOutEverywhere(trx: Trx, auth: AuthContext, userId: string): Promise<User> {
  const row = await memberOrMissing(trx, auth, userId)
  await endSessions(trx, userId)
  return toUser(row)
}

export function listAuditLog(
  db: Executor,
  auth: AuthContext,
  query: ListAuditLogQuery,
  beforeId: string | undefined,
  take: number,
): Promise<AuditRow[]> {
  return listAuditRows(db, auth.accountId, { userId: query.user_id, type: query.type }, beforeId, take)
}

/** The command line acts in an account as the service: every location, no mode of its own. */
function serviceAuth(accountId: string): AuthContext {
  return { principalId: 'service', accountId, livemode: false, locationIds: null }
}

/**
 * `cli users invite`: an invitation to the named account (made when new, as `keys create` does),
 * made by the service itself; answers the account's id beside it, for the e-mail.
 */
export async function inviteFromCommandLine(
  db: Db,
  publicUrl: string,
  input: { account: string; email: string; name: string; role: Role; locationIds: readonly string[] | null },
): Promise<{ user: UserWithInviteUrl; accountId: string }> {
  const accountId = await ensureAccount(db, input.account)
  const user = await db.transaction().execute((trx) =>
    inviteUser(
      trx,
      serviceAuth(accountId),
      {
        email: input.email,
        name: input.name,
        role: input.role,
        location_ids: input.locationIds === null ? null : [...input.locationIds],
      },
      CLI_CHANGE,
      publicUrl,
    ),
  )
  return { user, accountId }
}

/**
 * `cli users reset-password`: a reset link (valid 1 hour, voiding the earlier one) for whoever runs
 * the service to hand to the person; undefined when no person has the e-mail.
 */
export async function resetLinkFromCommandLine(
  db: Db,
  publicUrl: string,
  email: string,
): Promise<string | undefined> {
  const person = await findPersonRowByEmailKey(db, emailKeyOf(email))
  if (!person) return undefined
  const token = await db.transaction().execute((trx) => issueToken(trx, 'reset', person.id, null))
  return linkUrl(publicUrl, 'reset-password', token)
}

/**
 * The owner's set-up link (decisions.md, "Owner set-up"): while no person exists, each start
 * issues a fresh one for the `default` account (voiding the earlier; made when an older database
 * has none), which makes its first owner. Undefined once anyone exists.
 */
export async function ownerSetUpLink(db: Db, publicUrl: string): Promise<string | undefined> {
  if (await anyPersonExists(db)) return undefined
  const accountId = await ensureAccount(db, 'default')
  const token = await db.transaction().execute((trx) => issueToken(trx, 'owner', null, accountId))
  return linkUrl(publicUrl, 'accept-invite', token)
}
