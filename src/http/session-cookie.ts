import { serialize } from 'cookie'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { endOneSession, sessionCookieName } from '../modules/users/sessions.js'
import { sessionTokenOf } from './auth.js'

/**
 * The session cookie of every way in (a password, an accepted invitation, SSO): decisions.md,
 * "Sign-in". Readable by no script, sent to this site only, `Secure` (and `__Host-`) over https.
 */
function attributes(publicUrl: string) {
  return { httpOnly: true, sameSite: 'strict', path: '/', secure: publicUrl.startsWith('https://') } as const
}

/** The cookie of a new session: a new value at every sign-in; its answer is never cached. */
export function setSessionCookie(
  reply: FastifyReply,
  publicUrl: string,
  session: { token: string; expiresAt: number },
): void {
  reply.header(
    'set-cookie',
    serialize(sessionCookieName(publicUrl), session.token, {
      ...attributes(publicUrl),
      expires: new Date(session.expiresAt),
    }),
  )
  reply.header('cache-control', 'no-store')
}

/** A sign-out's: the browser drops the cookie. */
export function clearSessionCookie(reply: FastifyReply, publicUrl: string): void {
  reply.header(
    'set-cookie',
    serialize(sessionCookieName(publicUrl), '', { ...attributes(publicUrl), maxAge: 0 }),
  )
}

/**
 * A cookie sent with a sign-in is never promoted: when it is a live session's, that session ends,
 * so a cookie planted before (session fixation) signs nothing in after.
 */
export async function endSentSession(request: FastifyRequest): Promise<void> {
  const token = sessionTokenOf(request)
  if (!request.person || token === undefined) return
  await endOneSession(request.server.db, request.person.sessionId)
  request.server.personSessions.forget(token)
}
