import { errors } from '../../core/errors.js'
import type { Trx } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { recordAudit } from './audit.js'
import { voidTokens } from './session-repository.js'
import type { PersonSessions } from './sessions.js'
import { emailKeyOf, openSession, type StartedSession } from './sign-in.js'
import {
  activateMembership,
  findMembershipRowsOf,
  findPersonRow,
  findPersonRowByEmailKey,
} from './sign-in-repository.js'
import { findIdentityUserId, insertIdentity } from './sso-repository.js'

/** What a sign-in by SSO knows of the person: the ID token's claims, as the provider signed them. */
export interface SsoClaims {
  issuer: string
  subject: string
  email: string | undefined
  /** Only `true` links: an address the provider has not checked proves nothing here. */
  emailVerified: boolean
}

/**
 * Signs in the person an identity names (decisions.md, "Single sign-on"), in the caller's
 * transaction: the person it is linked to, or else, at its first sign-in, the person whose e-mail
 * the provider verified, which links it (`sso_linked` in each of their accounts). Either way the
 * person needs an active or invited membership (an invited one becomes active, and its invitation
 * link is void: SSO accepted it), else 403 `sso_user_unknown`. Then a session, as a password opens one.
 */
export async function signInWithSso(
  trx: Trx,
  sessions: PersonSessions,
  claims: SsoClaims,
  ip: string,
): Promise<StartedSession> {
  const linkedTo = await findIdentityUserId(trx, claims.issuer, claims.subject)
  const person =
    linkedTo !== undefined
      ? await findPersonRow(trx, linkedTo)
      : claims.emailVerified && claims.email !== undefined
        ? await findPersonRowByEmailKey(trx, emailKeyOf(claims.email))
        : undefined
  const memberships = person
    ? (await findMembershipRowsOf(trx, person.id)).filter((m) => m.status !== 'deactivated')
    : []
  if (!person || memberships.length === 0) throw errors.ssoUserUnknown()

  const now = clock.now()
  if (linkedTo === undefined) {
    await insertIdentity(trx, {
      issuer: claims.issuer,
      subject: claims.subject,
      user_id: person.id,
      created_at: now,
    })
    for (const { account_id: accountId } of memberships)
      await recordAudit(trx, {
        accountId,
        type: 'sso_linked',
        actor: { type: 'user', id: person.id, name: person.name },
        target: { type: 'user', id: person.id },
        ip,
      })
  }
  for (const m of memberships.filter((m) => m.status === 'invited')) {
    await activateMembership(trx, person.id, m.account_id, now)
    await voidTokens(trx, person.id, 'invite', m.account_id, now)
  }
  return openSession(trx, sessions, person, ip)
}
