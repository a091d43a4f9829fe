import { type Static, Type } from 'typebox'
import { Timestamp } from '../../core/schemas.js'
import { MAX_PASSWORD_LENGTH } from '../users/passwords.js'
import { ROLES, type Role } from '../users/roles.js'

/**
 * A password as a body carries it: no longer than any password can be, so no longer one is ever
 * hashed. The other rules (at least 12 characters, not the e-mail) are the service's, where a new
 * one is set, so a sign-in with a short password is refused as any wrong one is.
 */
const password = (description: string) =>
  Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH, description })

/** The token of a link (`#token=…`), as the console reads it from the link's fragment. */
const token = Type.String({ minLength: 1, maxLength: 200, description: 'The `token` of the link.' })

const email = Type.String({
  format: 'email',
  maxLength: 254,
  description: 'The login: compared case-insensitively.',
})

export const AuthSession = Type.Object(
  {
    object: Type.Literal('auth_session'),
    user: Type.Object(
      {
        id: Type.String({ description: 'Prefix `usr_`.' }),
        email: Type.String(),
        name: Type.String(),
      },
      { additionalProperties: false, description: 'The signed-in person.' },
    ),
    accounts: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: 'Prefix `acct_`: what the `Attendance-Account` header names.' }),
          name: Type.String(),
          role: Type.Unsafe<Role>({
            type: 'string',
            enum: [...ROLES],
            description: "The person's role there.",
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'The accounts the person is active in (at least one).' },
    ),
    csrf_token: Type.String({
      description:
        'Send it as `X-CSRF-Token` with every POST, PATCH and DELETE made with the cookie; the same for the whole session.',
    }),
    expires_at: Timestamp,
  },
  {
    $id: 'AuthSession',
    additionalProperties: false,
    description:
      "A signed-in person's session: who, in which accounts with which role, and the CSRF token of its cookie requests. The cookie itself is never in a body.",
  },
)
export type AuthSession = Static<typeof AuthSession>

/** What the console's sign-in page offers, asked before anyone signs in. */
export const AuthMethods = Type.Object(
  {
    object: Type.Literal('auth_methods'),
    password: Type.Literal(true, { description: 'E-mail and password (POST /v1/auth/sign-in): always.' }),
    sso: Type.Boolean({
      description:
        'Whether single sign-on is set up (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET): a browser then starts it at GET /v1/auth/sso/start.',
    }),
  },
  {
    $id: 'AuthMethods',
    additionalProperties: false,
    description: 'How people sign in to this service: what the sign-in page offers.',
  },
)

export const SignInBody = Type.Object(
  {
    email: Type.String({
      minLength: 1,
      maxLength: 254,
      description: 'The login: compared case-insensitively.',
    }),
    password: password('The password.'),
  },
  { additionalProperties: false },
)

export const ChangePasswordBody = Type.Object(
  {
    current_password: password('The password now, which proves it is you.'),
    new_password: password('The new password: 12 to 256 characters, not the e-mail.'),
  },
  { additionalProperties: false },
)

export const ForgotPasswordBody = Type.Object({ email }, { additionalProperties: false })

export const ResetPasswordBody = Type.Object(
  { token, password: password('The new password: 12 to 256 characters, not the e-mail.') },
  { additionalProperties: false },
)

export const AcceptInviteBody = Type.Object(
  {
    token,
    password: password(
      'The password of the login: a new one (12 to 256 characters, not the e-mail), or, when the e-mail already has a login with a password, that password.',
    ),
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Changes the display name.' }),
    ),
    email: Type.Optional(
      Type.String({
        ...email,
        description:
          "The owner's set-up link only (required there): the first owner's login. An invitation's e-mail is the one it was sent to.",
      }),
    ),
  },
  { additionalProperties: false },
)

/** The module's named schemas (see keys/schemas.ts). */
export const COMPONENT_SCHEMAS = [AuthSession, AuthMethods]
