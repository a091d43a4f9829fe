import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { parse as parseCookies, serialize } from 'cookie'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, errors } from '../../core/errors.js'
import { errorResponses } from '../../http/schemas.js'
import { endSentSession, setSessionCookie } from '../../http/session-cookie.js'
import { CallbackQuery, Redirect } from './schemas.js'
import {
  createSsoClient,
  type OidcSettings,
  SSO_STATE_LIFETIME_MS,
  type SsoClient,
  signIn,
} from './service.js'

const tags = ['Auth']
const PREFIX = '/v1/auth/sso'
const START_PATH = `${PREFIX}/start`
const CALLBACK_PATH = `${PREFIX}/callback`
/** Where the browser lands: the console, signed in, or its sign-in page saying why not. */
const SIGNED_IN_PAGE = '/console/'
const refusedPage = (code: string) => `/console/sign-in?sso_error=${code}`

/**
 * "Sign in with SSO" (decisions.md, "Single sign-on (OIDC), optional"): documented whether or not
 * OIDC_* are set, and 404 `route_not_found` when they are not, as if absent.
 */
export function ssoRoutes(options: { oidc: OidcSettings | undefined; publicUrl: string }) {
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>()
    const client = options.oidc
      ? await createSsoClient(app.db, options.oidc, `${options.publicUrl}${CALLBACK_PATH}`)
      : undefined
    // The pending sign-in's cookie goes only to these two routes. Lax, not Strict: it must come back
    // with the provider's redirect to the callback, a navigation from another site.
    const stateCookie = options.publicUrl.startsWith('https://') ? '__Secure-att_sso' : 'att_sso'
    const stateAttributes = {
      httpOnly: true,
      sameSite: 'lax',
      path: PREFIX,
      secure: options.publicUrl.startsWith('https://'),
    } as const

    const configured = (request: FastifyRequest): SsoClient => {
      if (!client) throw errors.routeNotFound(request.method, request.url.split('?')[0] ?? request.url)
      return client
    }

    /** A refusal the browser can read: the sign-in page, with the error's code; the reason goes to the log. */
    const refuse = (request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply => {
      if (!(error instanceof ApiError) || (error.code !== 'sso_failed' && error.code !== 'sso_user_unknown'))
        throw error
      request.log.warn({ code: error.code, reason: error.message }, 'sign-in with SSO refused')
      return reply.redirect(refusedPage(error.code), 302)
    }

    app.get(
      START_PATH,
      {
        config: { public: true },
        schema: {
          tags,
          summary: 'Start a sign-in with SSO (a browser navigation; no key)',
          description: `Redirects to the OpenID provider (OIDC_ISSUER) for an authorization code with PKCE (S256), \`state\` and \`nonce\`, scope \`openid email profile\`, coming back to \`${CALLBACK_PATH}\`. What the callback needs is kept sealed (AES-256-GCM) in an \`HttpOnly\`, \`SameSite=Lax\` cookie for ${SSO_STATE_LIFETIME_MS / 60_000} minutes. A provider that cannot be reached: redirects to \`/console/sign-in?sso_error=sso_failed\`. 404 when SSO is not configured.`,
          security: [],
          response: {
            302: Redirect(
              "To the provider's authorization endpoint (to the console's sign-in page with `sso_error` when the provider cannot be reached).",
              "The provider's authorization URL, or `/console/sign-in?sso_error=sso_failed`.",
            ),
            ...errorResponses(404),
          },
        },
      },
      async (request, reply) => {
        const sso = configured(request)
        try {
          const { authorizationUrl, sealed } = await sso.start()
          reply.header(
            'set-cookie',
            serialize(stateCookie, sealed, { ...stateAttributes, maxAge: SSO_STATE_LIFETIME_MS / 1000 }),
          )
          return reply.header('cache-control', 'no-store').redirect(authorizationUrl, 302)
        } catch (error) {
          return refuse(request, reply, error)
        }
      },
    )

    app.get(
      CALLBACK_PATH,
      {
        config: { public: true },
        // The request's URL holds the provider's code: no "incoming request" or "request completed"
        // line (info) writes it to the log. Refusals (warn) and failures (error) are still logged.
        logLevel: 'warn',
        schema: {
          tags,
          summary: 'Where the OpenID provider sends the browser back (no key)',
          description:
            "Exchanges the code (with PKCE's verifier), checks `state` and the ID token's `nonce` against the sign-in this browser started, and signs in the person the identity (`iss`, `sub`) is linked to, or on its first sign-in the person whose e-mail the ID token says is verified (`email_verified: true`), with an active or invited membership (an invited one becomes active). Then sets the session cookie as `POST /v1/auth/sign-in` does and redirects to `/console/`. Refused (to `/console/sign-in?sso_error=<code>`): `sso_user_unknown` (no such person, an unverified e-mail, no active or invited membership), `sso_failed` (no sign-in started in this browser or started over 10 minutes ago, a `state` or `nonce` that differs, a code used before, the provider's refusal). The pending sign-in's cookie is cleared either way: a callback works once.",
          security: [],
          querystring: CallbackQuery,
          response: {
            302: Redirect(
              'To the console, signed in; or to its sign-in page with `sso_error`.',
              '`/console/`, or `/console/sign-in?sso_error=<code>`.',
            ),
            ...errorResponses(404),
          },
        },
      },
      async (request, reply) => {
        const sso = configured(request)
        reply.header('set-cookie', serialize(stateCookie, '', { ...stateAttributes, maxAge: 0 }))
        reply.header('cache-control', 'no-store')
        const at = request.url.indexOf('?')
        try {
          const claims = await sso.finish(
            parseCookies(request.headers.cookie ?? '')[stateCookie],
            at === -1 ? '' : request.url.slice(at),
          )
          const session = await signIn(app.db, app.personSessions, claims, request.ip)
          await endSentSession(request)
          setSessionCookie(reply, options.publicUrl, session)
          return reply.redirect(SIGNED_IN_PAGE, 302)
        } catch (error) {
          return refuse(request, reply, error)
        }
      },
    )
  }
}
