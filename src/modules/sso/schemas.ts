import { Type } from 'typebox'

/** A redirect: no body, the next page in `Location`. */
export const Redirect = (description: string, location: string) =>
  Type.Null({ description, headers: { Location: Type.String({ description: location }) } })

const param = (description: string) => Type.Optional(Type.String({ maxLength: 4096, description }))

/**
 * What the provider sends back (OpenID Connect Core, 3.1.2.5 and 3.1.2.6; RFC 9207's `iss`).
 * Providers add their own parameters (`session_state`, …): they are let through, unread.
 */
export const CallbackQuery = Type.Object(
  {
    code: param('The authorization code, exchanged once for the ID token.'),
    state: param('Must equal the `state` of the sign-in this browser started.'),
    iss: param("The provider's issuer identifier (RFC 9207), checked when the provider sends it."),
    error: param('Set instead of `code` when the provider refused (e.g. `access_denied`).'),
    error_description: param("The provider's words about `error`."),
  },
  { additionalProperties: true },
)
