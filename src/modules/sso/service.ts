import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import ipaddr from 'ipaddr.js'
import * as oidc from 'openid-client'
import { errors } from '../../core/errors.js'
import { loadSecret } from '../../db/settings.js'
import type { Db } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import type { PersonSessions } from '../users/sessions.js'
import type { StartedSession } from '../users/sign-in.js'
import { type SsoClaims, signInWithSso } from '../users/sso-identities.js'

/** OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET. */
export interface OidcSettings {
  issuer: string
  clientId: string
  clientSecret: string
}

/** How long a browser has from "Sign in with SSO" to coming back from the provider. */
export const SSO_STATE_LIFETIME_MS = 10 * 60 * 1000
const SCOPE = 'openid email profile'
/** Discovery and the code's exchange: a provider that does not answer in this fails the sign-in. */
const PROVIDER_TIMEOUT_S = 10

/** What a started sign-in keeps in the browser until its callback: PKCE's verifier, `state`, `nonce`. */
interface PendingSignIn {
  verifier: string
  state: string
  nonce: string
  expiresAt: number
}

/**
 * The relying party: the provider's configuration, discovered once on first use and kept (a failed
 * discovery is tried again next time), and the sealing of a pending sign-in into its cookie.
 */
export class SsoClient {
  private configuration: Promise<oidc.Configuration> | undefined

  /**
   * `stateKey`: 32 bytes (AES-256-GCM) kept in the database, so any process sharing it can finish a
   * sign-in another one started.
   */
  constructor(
    private readonly settings: OidcSettings,
    readonly redirectUri: string,
    private readonly stateKey: Buffer,
  ) {}

  /**
   * A new sign-in: the provider's authorization URL to send the browser to (PKCE S256, `state`,
   * `nonce`) and the sealed pending sign-in its cookie keeps. Throws `sso_failed` when the provider
   * cannot be discovered.
   */
  async start(): Promise<{ authorizationUrl: string; sealed: string }> {
    const configuration = await this.provider()
    const pending: PendingSignIn = {
      verifier: oidc.randomPKCECodeVerifier(),
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      expiresAt: clock.now() + SSO_STATE_LIFETIME_MS,
    }
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: SCOPE,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    })
    return { authorizationUrl: url.href, sealed: this.seal(pending) }
  }

  /**
   * The callback: the code exchanged with the pending sign-in's verifier, its `state` and the ID
   * token's `nonce` checked by openid-client against the sealed ones; the ID token's claims. No
   * pending sign-in (no cookie, a forged or expired one), a `state` or `nonce` that differs, a code
   * used before or any refusal of the provider: `sso_failed`, whose message says which.
   */
  async finish(sealed: string | undefined, query: string): Promise<SsoClaims> {
    const pending = sealed === undefined ? undefined : this.unseal(sealed)
    if (pending === undefined) throw errors.ssoFailed('no sign-in was started in this browser')
    if (pending.expiresAt <= clock.now()) throw errors.ssoFailed('the sign-in was started too long ago')
    const configuration = await this.provider()
    const callbackUrl = new URL(this.redirectUri)
    callbackUrl.search = query
    let claims: oidc.IDToken | undefined
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
      })
      claims = tokens.claims()
    } catch (error) {
      throw errors.ssoFailed(`the provider's answer was refused (${reasonOf(error)})`)
    }
    if (claims === undefined) throw errors.ssoFailed('the provider sent no ID token')
    return {
      issuer: claims.iss,
      subject: claims.sub,
      email: typeof claims.email === 'string' ? claims.email : undefined,
      emailVerified: claims.email_verified === true,
    }
  }

  private provider(): Promise<oidc.Configuration> {
    this.configuration ??= discover(this.settings).catch((error: unknown) => {
      this.configuration = undefined
      throw errors.ssoFailed(`the provider could not be reached (${reasonOf(error)})`)
    })
    return this.configuration
  }

  /** base64url(IV ‖ ciphertext ‖ tag): AES-256-GCM, so the browser can neither read nor alter it. */
  private seal(pending: PendingSignIn): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.stateKey, iv)
    const body = Buffer.concat([cipher.update(JSON.stringify(pending), 'utf8'), cipher.final()])
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')
  }

  private unseal(sealed: string): PendingSignIn | undefined {
    const bytes = Buffer.from(sealed, 'base64url')
    if (bytes.length < 12 + 16 + 2 || bytes.length > 2048) return undefined
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.stateKey, bytes.subarray(0, 12))
      decipher.setAuthTag(bytes.subarray(bytes.length - 16))
      const text = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()])
      return JSON.parse(text.toString('utf8')) as PendingSignIn
    } catch {
      // Altered, or sealed under another key: no sign-in of ours.
      return undefined
    }
  }
}

/** The app's client, when OIDC_* are set; its sealing key is made on first use and shared by every process. */
export async function createSsoClient(
  db: Db,
  settings: OidcSettings,
  redirectUri: string,
): Promise<SsoClient> {
  return new SsoClient(settings, redirectUri, await loadSecret(db, 'sso_state_secret'))
}

function discover(settings: OidcSettings): Promise<oidc.Configuration> {
  const issuer = new URL(settings.issuer)
  // client_secret_basic: what OpenID Connect registers a client with unless told otherwise.
  const authentication = oidc.ClientSecretBasic(settings.clientSecret)
  return oidc.discovery(issuer, settings.clientId, undefined, authentication, {
    timeout: PROVIDER_TIMEOUT_S,
    // openid-client speaks only https, rightly: the code, the tokens and the client secret cross
    // this connection. A provider on this machine (the tests' oidc-provider, a developer's) has no
    // network in between, so plain http is allowed for a loopback address and nowhere else.
    ...(isLoopbackHttp(issuer) ? { execute: [oidc.allowInsecureRequests] } : {}),
  })
}

function isLoopbackHttp(url: URL): boolean {
  if (url.protocol !== 'http:') return false
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  return host === 'localhost' || (ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback')
}

/**
 * An openid-client failure in a few words for the log: its message, and its cause's, which names
 * what differed (`unexpected "state" response parameter value`) or what the provider answered
 * (`invalid_grant`); never a token or a code.
 */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  // The provider's own error code (ResponseBodyError, AuthorizationResponseError), else the cause's.
  const said = (error as { error?: unknown }).error
  const detail =
    typeof said === 'string' ? said : error.cause instanceof Error ? error.cause.message : undefined
  return detail !== undefined && detail !== error.message ? `${error.message}: ${detail}` : error.message
}

/**
 * A sign-in by SSO, in one transaction: the person the claims name (linked now or before; see
 * `signInWithSso`) and their new session, as a password sign-in makes it.
 */
export function signIn(
  db: Db,
  sessions: PersonSessions,
  claims: SsoClaims,
  ip: string,
): Promise<StartedSession> {
  return db.transaction().execute((trx) => signInWithSso(trx, sessions, claims, ip))
}
