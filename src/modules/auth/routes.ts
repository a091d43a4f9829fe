import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../../core/errors.js'
import { ref } from '../../core/schemas.js'
import { sessionTokenOf } from '../../http/auth.js'
import { perAddressLimit } from '../../http/rate-limit.js'
import { errorResponses } from '../../http/schemas.js'
import { clearSessionCookie, endSentSession, setSessionCookie } from '../../http/session-cookie.js'
import { createMailer } from '../users/mailer.js'
import type { SignedInPerson } from '../users/sessions.js'
import {
  acceptInvitation,
  changePassword,
  describeSession,
  resetPassword,
  SIGN_INS_PER_MINUTE,
  sendPasswordReset,
  signIn,
  signOut,
} from '../users/sign-in.js'
import {
  AcceptInviteBody,
  AuthMethods,
  AuthSession,
  ChangePasswordBody,
  ForgotPasswordBody,
  ResetPasswordBody,
  SignInBody,
} from './schemas.js'

const tags = ['Auth']

/** An answer without a body (204, or the 202 of a request taken): the reply untyped, whose body is none. */
function answerEmpty(reply: FastifyReply, status: 202 | 204): FastifyReply {
  return reply.code(status).send()
}

/**
 * The signed-in person's side of people and access (decisions.md, "Sign-in", "Password reset"): the
 * session cookie's start and end, passwords, and accepting an invitation or the owner's set-up link.
 */
export function authRoutes(config: {
  publicUrl: string
  smtpUrl: string | undefined
  smtpFrom: string
  /** Set when single sign-on is (its settings are sso/routes.ts's): only whether it is, is told here. */
  oidc: object | undefined
}) {
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>()
    const mailer = createMailer(config)
    instance.addHook('onClose', async () => mailer?.close())

    const signedIn = (request: FastifyRequest): SignedInPerson => {
      if (!request.person) throw errors.authentication('Sign in first.')
      return request.person
    }

    // The public routes each count a client address's requests apart (guesses of passwords and
    // link tokens, and e-mails sent, stay slow), beside the app-wide limit.
    const limit = (name: string) => perAddressLimit(instance, name, SIGN_INS_PER_MINUTE, 60_000)

    app.post(
      '/v1/auth/sign-in',
      {
        config: { public: true },
        onRequest: limit('sign-in'),
        schema: {
          tags,
          summary: 'Sign in with e-mail and password (no key; sets the session cookie)',
          description:
            'Sets the session cookie (`HttpOnly`, `SameSite=Strict`, `Path=/`; `__Host-att_session` and `Secure` when the service is served over https, else `att_session`), a new one at every sign-in. A wrong password, an unknown e-mail and a person active in no account: 401 `invalid_credentials`, alike. 5 failures in a row for an e-mail from one address lock that address out of it, 50 within an hour lock everybody out of it, for 15 minutes: 429 `sign_in_locked` with `Retry-After`. At most 20 sign-ins a minute per address.',
          security: [],
          body: SignInBody,
          response: {
            200: ref(AuthSession, 'Signed in: the session (its cookie is in Set-Cookie).'),
            ...errorResponses(401),
          },
        },
      },
      async (request, reply) => {
        const session = await signIn(app.db, app.personSessions, {
          email: request.body.email,
          password: request.body.password,
          ip: request.ip,
        })
        await endSentSession(request)
        setSessionCookie(reply, config.publicUrl, session)
        return session.answer
      },
    )

    app.get(
      '/v1/auth/methods',
      {
        config: { public: true },
        schema: {
          tags,
          summary: 'How people sign in here (no key): what the sign-in page offers',
          description:
            'Always e-mail and password; `sso` when single sign-on is set up (OIDC_*), started in the browser at GET /v1/auth/sso/start. The console asks before showing "Sign in with SSO".',
          security: [],
          response: { 200: ref(AuthMethods, 'The ways to sign in.') },
        },
      },
      async () => ({
        object: 'auth_methods' as const,
        password: true as const,
        sso: config.oidc !== undefined,
      }),
    )

    app.get(
      '/v1/auth/session',
      {
        config: { signedIn: true },
        schema: {
          // The person's own session: the cookie, never a key.
          security: [{ cookieAuth: [] }],
          tags,
          summary: 'The signed-in session (the cookie; no key, no Attendance-Account)',
          description:
            'The same `csrf_token` for the whole session. 401 once the session has ended (signed out, idle 12 hours, 7 days after sign-in, or the person no longer active anywhere).',
          response: { 200: ref(AuthSession, 'The session of the cookie.') },
        },
      },
      async (request, reply) => {
        const person = signedIn(request)
        // A session whose person is active in no account any more signs nothing in (decisions.md).
        if (person.memberships.length === 0)
          throw errors.authentication('You are no longer active in any account; ask an owner.')
        reply.header('cache-control', 'no-store')
        return describeSession(app.db, app.personSessions, person)
      },
    )

    app.post(
      '/v1/auth/sign-out',
      {
        config: { signedIn: true },
        schema: {
          // The person's own session: the cookie, never a key.
          security: [{ cookieAuth: [] }],
          tags,
          summary: 'Sign out: the session ends and its cookie is cleared',
          description: 'Needs `X-CSRF-Token`. The cookie stops working at once.',
          response: { 204: Type.Null({ description: 'Signed out.' }) },
        },
      },
      async (request, reply) => {
        const person = signedIn(request)
        await signOut(app.db, person, request.ip)
        const token = sessionTokenOf(request)
        if (token !== undefined) app.personSessions.forget(token)
        clearSessionCookie(reply, config.publicUrl)
        return answerEmpty(reply, 204)
      },
    )

    app.post(
      '/v1/auth/password',
      {
        config: { signedIn: true },
        schema: {
          // The person's own session: the cookie, never a key.
          security: [{ cookieAuth: [] }],
          tags,
          summary: "Change the signed-in person's password; their other sessions end",
          description:
            'Needs `X-CSRF-Token`. A wrong `current_password`: 401 `invalid_credentials`. The new one: 12 to 256 characters, not the e-mail (422 `invalid_value`, param `new_password`). This session goes on.',
          body: ChangePasswordBody,
          response: { 204: Type.Null({ description: 'Changed.' }) },
        },
      },
      async (request, reply) => {
        const person = signedIn(request)
        await changePassword(app.db, person, {
          currentPassword: request.body.current_password,
          newPassword: request.body.new_password,
          ip: request.ip,
        })
        app.personSessions.forgetPerson(person.userId)
        return answerEmpty(reply, 204)
      },
    )

    app.post(
      '/v1/auth/forgot-password',
      {
        config: { public: true },
        onRequest: limit('forgot-password'),
        schema: {
          tags,
          summary: 'E-mail a password reset link (no key; 202 whatever the e-mail)',
          description:
            'With e-mail set up (SMTP_URL), a person with this e-mail gets a link `<PUBLIC_URL>/console/reset-password#token=…`, valid 1 hour (a newer one voids it). The answer is the same whether or not the e-mail is known. Without e-mail, whoever runs the service prints a link: `npm run --silent cli -- users reset-password --email <e> --json`.',
          security: [],
          body: ForgotPasswordBody,
          response: { 202: Type.Null({ description: 'Taken; an e-mail follows if the e-mail is known.' }) },
        },
      },
      async (request, reply) => {
        // After the answer, so that neither its time nor its status tells a known e-mail from an
        // unknown one. The error is logged by its code alone: a mailer's message may quote the mail.
        sendPasswordReset(app.db, mailer, config.publicUrl, request.body.email).catch((error: unknown) =>
          request.log.error(
            { code: (error as { code?: unknown }).code ?? null },
            'sending a password reset e-mail failed',
          ),
        )
        return answerEmpty(reply, 202)
      },
    )

    app.post(
      '/v1/auth/reset-password',
      {
        config: { public: true },
        onRequest: limit('reset-password'),
        schema: {
          tags,
          summary: "Set a new password with a reset link's token; every session of the person ends",
          description:
            'An unknown, used or expired token: 422 `invalid_value`, param `token`. The password: 12 to 256 characters, not the e-mail. Does not sign in.',
          security: [],
          body: ResetPasswordBody,
          response: { 204: Type.Null({ description: 'The password is set.' }) },
        },
      },
      async (request, reply) => {
        const userId = await resetPassword(app.db, {
          token: request.body.token,
          password: request.body.password,
          ip: request.ip,
        })
        app.personSessions.forgetPerson(userId)
        return answerEmpty(reply, 204)
      },
    )

    app.post(
      '/v1/auth/accept-invite',
      {
        config: { public: true },
        onRequest: limit('accept-invite'),
        schema: {
          tags,
          summary: "Accept an invitation (or the owner's set-up link) and sign in",
          description:
            "An invitation's membership becomes active; a person who already has a password gives it (401 `invalid_credentials` otherwise), one without sets it. The owner's set-up link needs `email` (422 `missing_param`): that login (made when new) becomes an owner of the link's account. `name` renames the person. Then signs in as POST /v1/auth/sign-in does. An unknown, used or expired token: 422 `invalid_value`, param `token`.",
          security: [],
          body: AcceptInviteBody,
          response: {
            200: ref(AuthSession, 'Signed in: the session (its cookie is in Set-Cookie).'),
            ...errorResponses(401),
          },
        },
      },
      async (request, reply) => {
        const session = await acceptInvitation(app.db, app.personSessions, {
          token: request.body.token,
          password: request.body.password,
          ...(request.body.name === undefined ? {} : { name: request.body.name }),
          ...(request.body.email === undefined ? {} : { email: request.body.email }),
          ip: request.ip,
        })
        await endSentSession(request)
        setSessionCookie(reply, config.publicUrl, session)
        return session.answer
      },
    )
  }
}
