import { errors } from '../../core/errors.js'
import type { Role } from '../../db/schema.js'
import type { Db, Executor } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { accountNames } from '../keys/service.js'
import { type Actor, recordAudit } from './audit.js'
import type { Mailer } from './mailer.js'
import { checkPassword, hashPassword, verifyPassword } from './passwords.js'
import {
  endOneSession,
  endSessions,
  issueToken,
  linkUrl,
  type PersonSessions,
  peekToken,
  type SignedInPerson,
  startSession,
  takeToken,
} from './sessions.js'
import {
  activateMembership,
  countSignInFailures,
  deleteSignInFailures,
  findMembershipRowsOf,
  findPersonRow,
  findPersonRowByEmailKey,
  findPersonRowsByEmailKey,
  insertPerson,
  insertSignInFailure,
  setLastSignIn,
  setPasswordHash,
  setPersonName,
  upsertOwnerMembership,
} from './sign-in-repository.js'

/** How a person is known at sign-in: the e-mail lower-cased (`users.email_key`, unique in the service). */
export function emailKeyOf(email: string): string {
  return email.toLowerCase()
}

/**
 * The lockouts of decisions.md, "Sign-in": 5 failures in a row for one e-mail from one address
 * lock that address out of that e-mail, 50 failures for one e-mail within an hour lock everybody
 * out of it, each for 15 minutes from the last failure. "In a row" is since the last success from
 * that address (a success forgets that address's failures for the e-mail) and within the hour the
 * failures are kept.
 */
export const FAILURES_FROM_ONE_ADDRESS = 5
export const FAILURES_FOR_ONE_EMAIL = 50
export const SIGN_IN_LOCK_MS = 15 * 60 * 1000
const FAILURES_KEPT_MS = 60 * 60 * 1000
/** At most this many sign-ins a minute per client address (the route's own limit). */
export const SIGN_INS_PER_MINUTE = 20

/** The answer of a sign-in, of an accepted invitation and of GET /v1/auth/session. */
export interface AuthSession {
  object: 'auth_session'
  user: { id: string; email: string; name: string }
  accounts: Array<{ id: string; name: string; role: Role }>
  csrf_token: string
  expires_at: string
}

/** A new session: the cookie's value and absolute end, and the answer. */
export interface StartedSession {
  token: string
  expiresAt: number
  answer: AuthSession
}

interface PersonRow {
  id: string
  email: string
  name: string
  password_hash: string | null
}

const actorOf = (person: { id: string; name: string }): Actor => ({
  type: 'user',
  id: person.id,
  name: person.name,
})

/**
 * Who a failed sign-in of an unknown e-mail names as its actor: nobody known. The entry belongs to
 * no account (so no account's log lists it); the e-mail itself is never written.
 */
const UNKNOWN_ACTOR: Actor = { type: 'user', id: 'unknown', name: null }

/**
 * Signs a person in with e-mail and password from a client address: a new session (the caller
 * sets its cookie). Refused alike (401 `invalid_credentials`, after the same password hashing) for
 * an unknown e-mail, a wrong password and a person with no active membership; 429
 * `sign_in_locked` while a lockout holds, before any hashing.
 */
export async function signIn(
  db: Db,
  sessions: PersonSessions,
  input: { email: string; password: string; ip: string },
): Promise<StartedSession> {
  const emailKey = emailKeyOf(input.email)
  const now = clock.now()
  const failures = await countSignInFailures(db, emailKey, input.ip, now - FAILURES_KEPT_MS)
  const lockedUntil = Math.max(
    failures.fromIp >= FAILURES_FROM_ONE_ADDRESS ? (failures.latestFromIp ?? 0) + SIGN_IN_LOCK_MS : 0,
    failures.total >= FAILURES_FOR_ONE_EMAIL ? (failures.latest ?? 0) + SIGN_IN_LOCK_MS : 0,
  )
  if (lockedUntil > now) throw errors.signInLocked(Math.ceil((lockedUntil - now) / 1000))

  const rows = await findPersonRowsByEmailKey(db, emailKey)
  const person = rows[0]
  const passwordMatches = await verifyPassword(person?.password_hash, input.password)
  const memberships = rows.flatMap((row) =>
    row.account_id !== null && row.role !== null && row.status !== null
      ? [{ account_id: row.account_id, role: row.role, status: row.status }]
      : [],
  )
  const active = memberships.filter((m) => m.status === 'active')
  if (!person || !passwordMatches || active.length === 0) {
    await db.transaction().execute(async (trx) => {
      const at = clock.now()
      await insertSignInFailure(
        trx,
        { email_key: emailKey, ip: input.ip, created_at: at },
        at - FAILURES_KEPT_MS,
      )
      // Each account the person belongs to sees the attempt; an unknown e-mail's belongs to none.
      const accounts = memberships.length === 0 ? [null] : memberships.map((m) => m.account_id)
      for (const accountId of accounts)
        await recordAudit(trx, {
          accountId,
          type: 'sign_in_failed',
          actor: person ? actorOf(person) : UNKNOWN_ACTOR,
          ...(person ? { target: { type: 'user' as const, id: person.id } } : {}),
          ip: input.ip,
        })
    })
    throw errors.invalidCredentials()
  }
  return db.transaction().execute(async (trx) => {
    await deleteSignInFailures(trx, emailKey, input.ip)
    return openSession(trx, sessions, person, input.ip)
  })
}

/**
 * The new session of a person who proved who they are (a password, an accepted invitation, SSO):
 * the session, each active membership's `last_sign_in_at`, a `sign_in` entry in each of those accounts.
 */
export async function openSession(
  trx: Executor,
  sessions: PersonSessions,
  person: PersonRow,
  ip: string,
): Promise<StartedSession> {
  const session = await startSession(trx, person.id)
  await setLastSignIn(trx, person.id, clock.now())
  const active = (await findMembershipRowsOf(trx, person.id)).filter((m) => m.status === 'active')
  for (const membership of active)
    await recordAudit(trx, {
      accountId: membership.account_id,
      type: 'sign_in',
      actor: actorOf(person),
      target: { type: 'user', id: person.id },
      ip,
    })
  const answer = await describeSession(trx, sessions, {
    sessionId: session.sessionId,
    userId: person.id,
    email: person.email,
    name: person.name,
    expiresAt: session.expiresAt,
    memberships: active.map((m) => ({ accountId: m.account_id, role: m.role })),
  })
  return { token: session.token, expiresAt: session.expiresAt, answer }
}

/** The signed-in person's session as GET /v1/auth/session answers it (the same CSRF token all its life). */
export function describeSession(
  db: Executor,
  sessions: PersonSessions,
  person: Pick<SignedInPerson, 'sessionId' | 'userId' | 'email' | 'name' | 'expiresAt'> & {
    memberships: ReadonlyArray<{ accountId: string; role: Role }>
  },
): Promise<AuthSession> {
  return accountNames(
    db,
    person.memberships.map((m) => m.accountId),
  ).then((names) => ({
    object: 'auth_session',
    user: { id: person.userId, email: person.email, name: person.name },
    accounts: person.memberships.map((m) => ({
      id: m.accountId,
      name: names.get(m.accountId) ?? '',
      role: m.role,
    })),
    csrf_token: sessions.csrfToken(person.sessionId),
    expires_at: new Date(person.expiresAt).toISOString(),
  }))
}

/** Each account a person is active in records the entry (what they did belongs to them all). */
async function auditEachAccount(
  trx: Executor,
  person: { userId: string; name: string },
  accountIds: readonly string[],
  type: 'sign_out' | 'password_changed' | 'password_reset',
  ip: string,
): Promise<void> {
  for (const accountId of accountIds)
    await recordAudit(trx, {
      accountId,
      type,
      actor: { type: 'user', id: person.userId, name: person.name },
      target: { type: 'user', id: person.userId },
      ip,
    })
}

/** Ends the request's session (its cookie stops working at once in this process; the caller forgets it). */
export async function signOut(db: Db, person: SignedInPerson, ip: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await endOneSession(trx, person.sessionId)
    await auditEachAccount(
      trx,
      person,
      person.memberships.map((m) => m.accountId),
      'sign_out',
      ip,
    )
  })
}

/**
 * A signed-in person's new password: the current one proves it is them (401 `invalid_credentials`
 * otherwise, counted toward no lockout: the session already is theirs); their other sessions end.
 */
export async function changePassword(
  db: Db,
  person: SignedInPerson,
  input: { currentPassword: string; newPassword: string; ip: string },
): Promise<void> {
  const row = await findPersonRow(db, person.userId)
  if (!row || !(await verifyPassword(row.password_hash, input.currentPassword)))
    throw errors.invalidCredentials()
  checkPassword(input.newPassword, row.email, 'new_password')
  const hash = await hashPassword(input.newPassword)
  await db.transaction().execute(async (trx) => {
    await setPasswordHash(trx, person.userId, hash, clock.now())
    await endSessions(trx, person.userId, person.sessionId)
    await auditEachAccount(
      trx,
      person,
      person.memberships.map((m) => m.accountId),
      'password_changed',
      input.ip,
    )
  })
}

/** One answer for a link's token that is unknown, used, expired or of another kind. */
const invalidLink = () =>
  errors.invalidValue('token', 'This link is unknown, used or expired; ask for a new one.')

/**
 * POST /v1/auth/forgot-password: with a mailer and a known person, a reset link (valid 1 hour; it
 * voids the earlier one) e-mailed to them. Nothing happens otherwise (no SMTP: whoever runs the
 * service prints a link with `cli users reset-password`).
 */
export async function sendPasswordReset(
  db: Db,
  mailer: Mailer | undefined,
  publicUrl: string,
  email: string,
): Promise<void> {
  if (mailer === undefined) return
  const person = await findPersonRowByEmailKey(db, emailKeyOf(email))
  if (!person) return
  const token = await db.transaction().execute((trx) => issueToken(trx, 'reset', person.id, null))
  await mailer.send({
    to: person.email,
    subject: 'Reset your password',
    text: [
      `Hello ${person.name},`,
      '',
      'Someone (you, we hope) asked to reset the password of your sign-in. To choose a new one, open this link within an hour:',
      '',
      linkUrl(publicUrl, 'reset-password', token),
      '',
      'If you did not ask, ignore this e-mail: your password stays as it is.',
    ].join('\n'),
  })
}

/**
 * POST /v1/auth/reset-password: a reset link's token (single use) sets the person's password and
 * ends every session of theirs; their failed sign-ins are forgotten (the link proves the mailbox).
 * Answers the person's id, whose cached sessions the caller forgets.
 */
export async function resetPassword(
  db: Db,
  input: { token: string; password: string; ip: string },
): Promise<string> {
  const link = await peekToken(db, ['reset'], input.token)
  const person = link?.userId ? await findPersonRow(db, link.userId) : undefined
  if (!person) throw invalidLink()
  checkPassword(input.password, person.email)
  const hash = await hashPassword(input.password)
  await db.transaction().execute(async (trx) => {
    const taken = await takeToken(trx, ['reset'], input.token)
    if (taken?.userId !== person.id) throw invalidLink()
    await setPasswordHash(trx, person.id, hash, clock.now())
    await endSessions(trx, person.id)
    await deleteSignInFailures(trx, emailKeyOf(person.email))
    const accounts = (await findMembershipRowsOf(trx, person.id)).filter((m) => m.status === 'active')
    await auditEachAccount(
      trx,
      { userId: person.id, name: person.name },
      accounts.map((m) => m.account_id),
      'password_reset',
      input.ip,
    )
  })
  return person.id
}

/**
 * POST /v1/auth/accept-invite: an invitation's token makes its membership active (a person who
 * already has a password gives it, else 401 `invalid_credentials`; a person without one sets it);
 * the owner's set-up link (no person yet) makes the person of `email` (or takes the one that
 * exists, checking their password) an active owner of its account. Then signs in as sign-in does.
 */
export async function acceptInvitation(
  db: Db,
  sessions: PersonSessions,
  input: { token: string; password: string; name?: string; email?: string; ip: string },
): Promise<StartedSession> {
  const link = await peekToken(db, ['invite', 'owner'], input.token)
  if (!link || link.accountId === null) throw invalidLink()
  const accountId = link.accountId
  let person: PersonRow | undefined
  let email: string
  if (link.kind === 'invite') {
    person = link.userId === null ? undefined : await findPersonRow(db, link.userId)
    if (!person) throw invalidLink()
    email = person.email
  } else {
    if (input.email === undefined)
      throw errors.missingParam(
        'email',
        'The set-up link makes the first owner: give the e-mail to sign in with.',
      )
    email = input.email
    person = await findPersonRowByEmailKey(db, emailKeyOf(email))
  }
  // The password's work (a check or a new hash) before the transaction, not under its write lock.
  let newHash: string | undefined
  if (person?.password_hash) {
    if (!(await verifyPassword(person.password_hash, input.password))) throw errors.invalidCredentials()
  } else {
    checkPassword(input.password, email)
    newHash = await hashPassword(input.password)
  }
  return db.transaction().execute(async (trx) => {
    const taken = await takeToken(trx, ['invite', 'owner'], input.token)
    if (!taken || taken.userId !== link.userId || taken.accountId !== accountId) throw invalidLink()
    const now = clock.now()
    const name = input.name ?? person?.name ?? email.slice(0, email.indexOf('@'))
    let user: PersonRow
    if (person) {
      user = { ...person, name }
      if (newHash !== undefined) await setPasswordHash(trx, person.id, newHash, now)
      if (input.name !== undefined && input.name !== person.name)
        await setPersonName(trx, person.id, name, now)
    } else {
      user = { id: newId('usr'), email, name, password_hash: newHash ?? null }
      await insertPerson(trx, { ...user, email_key: emailKeyOf(email), created_at: now, updated_at: now })
    }
    if (taken.kind === 'invite') {
      if (!(await activateMembership(trx, user.id, accountId, now))) throw invalidLink()
    } else {
      await upsertOwnerMembership(trx, {
        id: newId('mbr'),
        account_id: accountId,
        user_id: user.id,
        role: 'owner',
        location_ids: null,
        operator_id: null,
        status: 'active',
        last_sign_in_at: null,
        created_at: now,
        updated_at: now,
      })
    }
    return openSession(trx, sessions, user, input.ip)
  })
}
