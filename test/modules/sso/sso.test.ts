import { generateKeyPairSync, randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'
import type { Browser, BrowserContext, Cookie, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SSO_STATE_LIFETIME_MS } from '../../../src/modules/sso/service.js'
import { issueToken, takeToken } from '../../../src/modules/users/sessions.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, uniq } from '../../helpers/assertions.js'
import { chromiumAvailable, launchChromium } from '../../helpers/chromium.js'
import { useTestClock } from '../../helpers/clock.js'
import { createPerson, type Person, SecretWatch, setCookieValue } from '../../helpers/people.js'
import { freePort } from '../../helpers/process.js'

const CLIENT_ID = 'attendance'
const CLIENT_SECRET = randomBytes(24).toString('base64url')
const CALLBACK = '/v1/auth/sso/callback'

/** The provider's people: what each login's ID token says about them (the test changes them). */
interface ProviderAccount {
  email: string
  email_verified: boolean
  name: string
}

/**
 * A real OpenID provider on a loopback port: one client (this service, PKCE required) and the
 * accounts of `accounts`, signed in through oidc-provider's own login and consent pages (any
 * password). The ID token carries the scope's claims (email, email_verified, name), as the
 * providers SSO is set up with do.
 */
async function startProvider(redirectUri: string, accounts: Map<string, ProviderAccount>, port = 0) {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: false,
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'test', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    // Lifetimes of its own (in seconds), so that it does not notice each default it uses.
    ttl: {
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      AccessToken: 600,
      IdToken: 600,
    },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id, ...accounts.get(id) }),
    }),
  })
  server.on('request', provider.callback())
  return { issuer, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

/** What a browser's sign-in by SSO came to: the callback's URL and where it sent the browser. */
interface SsoOutcome {
  context: BrowserContext
  page: Page
  callbackUrl: string
  location: string
  /** The pending sign-in's cookie as the start set it (a replay puts it back). */
  stateCookie: Cookie
}

describe.runIf(chromiumAvailable())('sign-in with SSO (OpenID Connect) in a browser', () => {
  const clock = useTestClock()
  const accounts = new Map<string, ProviderAccount>()
  const watch = new SecretWatch()
  let t: TestApp
  let base: string
  let provider: Awaited<ReturnType<typeof startProvider>>
  let browser: Browser

  beforeAll(async () => {
    // The service is `localhost`, the provider `127.0.0.1`: two sites, so the state cookie must
    // come back with a navigation from another site (SameSite=Lax), as it does in production.
    const port = await freePort()
    base = `http://localhost:${port}`
    provider = await startProvider(`${base}${CALLBACK}`, accounts)
    t = await buildTestApp(
      {
        publicUrl: base,
        oidc: { issuer: provider.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
        logLevel: 'trace',
      },
      { logStream: watch.logStream },
    )
    watch.remember(CLIENT_SECRET)
    await t.app.listen({ host: '127.0.0.1', port })
    browser = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    // Nothing the flows used (the client secret, codes, states, sealed state cookies, session
    // cookies) was ever written to the log.
    expect(watch.size).toBeGreaterThan(1)
    expect(watch.leaked()).toEqual([])
    await browser?.close()
    await t?.close()
    await provider?.close()
  })

  /** A person of the service and the provider's account for them (same e-mail, verified, unless told). */
  async function personAtProvider(
    options: Parameters<typeof createPerson>[1] = {},
    claims: Partial<ProviderAccount> = {},
  ): Promise<{ person: Person; login: string }> {
    const person = await createPerson(t, { password: null, ...options })
    const login = uniq('sub')
    accounts.set(login, { email: person.email, email_verified: true, name: person.name, ...claims })
    return { person, login }
  }

  /** The callback's answer to the navigation `navigate` sets off in `page`. */
  async function callbackAnswer(page: Page, navigate: () => Promise<unknown>) {
    const answer = page.waitForResponse((r) => r.url().startsWith(`${base}${CALLBACK}`))
    await navigate()
    const response = await answer
    await page.waitForLoadState()
    return { callbackUrl: response.url(), location: response.headers().location ?? '' }
  }

  /**
   * At the provider's pages (the page is on its login form): signs in as `login` with any password
   * and consents; answers the callback's answer. `beforeLogin` runs before the login is sent.
   */
  async function atProvider(page: Page, login: string, beforeLogin?: () => void) {
    await page.locator('input[name=login]').fill(login)
    await page.locator('input[name=password]').fill('anything')
    beforeLogin?.()
    await page.locator('button[type=submit]').click()
    return callbackAnswer(page, () => page.getByRole('button', { name: 'Continue' }).click())
  }

  /**
   * "Sign in with SSO" in a fresh browser: the service's start, the provider's login (as `login`)
   * and consent, and the callback's answer.
   */
  async function signInWithSso(
    login: string,
    options: { beforeLogin?: () => void } = {},
  ): Promise<SsoOutcome> {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${base}/v1/auth/sso/start`)
    // Path=/v1/auth/sso: not among the cookies of the site's root.
    const stateCookie = (await context.cookies()).find((c) => c.name === 'att_sso')
    if (!stateCookie) throw new Error('the start set no att_sso cookie')
    const outcome = { context, page, stateCookie, ...(await atProvider(page, login, options.beforeLogin)) }
    const callback = new URL(outcome.callbackUrl).searchParams
    watch.remember(
      stateCookie.value,
      callback.get('code'),
      callback.get('state'),
      (await sessionCookieOf(context))?.value,
    )
    return outcome
  }

  /** The reasons the log gives for refused sign-ins, from the `index`-th line on. */
  const reasonsSince = (index: number) =>
    watch.lines
      .slice(index)
      .map((line) => JSON.parse(line) as { msg: string; code?: string; reason?: string })
      .filter((entry) => entry.msg === 'sign-in with SSO refused')
      .map((entry) => `${entry.code}: ${entry.reason}`)

  /** GET /v1/auth/session from the page, as the console asks it. */
  function sessionOf(page: Page): Promise<{ status: number; body: { user?: { id: string } } }> {
    return page.evaluate(
      "fetch('/v1/auth/session').then(async (r) => ({ status: r.status, body: await r.json() }))",
    )
  }

  const sessionCookieOf = async (context: BrowserContext) =>
    (await context.cookies(base)).find((c) => c.name === 'att_session')

  const identitiesOf = (userId: string) =>
    t.db.selectFrom('sso_identities').selectAll().where('user_id', '=', userId).execute()
  const auditOf = (userId: string) =>
    t.db
      .selectFrom('audit_log')
      .select(['type', 'account_id', 'actor_id'])
      .where('target_id', '=', userId)
      .orderBy('id')
      .execute()
  const sessionCountOf = async (userId: string) =>
    (await t.db.selectFrom('auth_sessions').select('id').where('user_id', '=', userId).execute()).length
  const membershipOf = (userId: string) =>
    t.db
      .selectFrom('memberships')
      .select(['status', 'last_sign_in_at'])
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow()

  it('starts at the provider: code flow with PKCE S256, state, nonce, the scope and the callback; the state sealed in a Lax cookie', async () => {
    const res = await t.client(undefined).get('/v1/auth/sso/start')
    expect(res.status).toBe(302)
    const to = new URL(String(res.headers.location))
    expect(`${to.origin}`).toBe(provider.issuer)
    const params = Object.fromEntries(to.searchParams)
    expect(params).toMatchObject({
      client_id: CLIENT_ID,
      response_type: 'code',
      scope: 'openid email profile',
      redirect_uri: `${base}${CALLBACK}`,
      code_challenge_method: 'S256',
    })
    for (const name of ['state', 'nonce', 'code_challenge']) expect(params[name]).toMatch(/^[\w-]{43,}$/)
    const cookie = String(res.headers['set-cookie'])
    expect(cookie).toMatch(/^att_sso=[\w-]+; Max-Age=600; Path=\/v1\/auth\/sso; HttpOnly; SameSite=Lax$/)
    // The cookie holds the verifier, state and nonce sealed: none of them can be read from it.
    const sealed = setCookieValue(res, 'att_sso') as string
    for (const name of ['state', 'nonce']) expect(sealed).not.toContain(params[name])

    // Each start is a sign-in of its own.
    const again = new URL(String((await t.client(undefined).get('/v1/auth/sso/start')).headers.location))
    for (const name of ['state', 'nonce', 'code_challenge'])
      expect(again.searchParams.get(name)).not.toBe(params[name])
  })

  it('signs in an active person whose e-mail the provider verified (any case), links the identity and lands on the console signed in', async () => {
    const { person, login } = await personAtProvider({ email: `${uniq('Ada')}@Example.COM` })
    accounts.set(login, { ...(accounts.get(login) as ProviderAccount), email: person.email.toLowerCase() })
    const { context, page, location } = await signInWithSso(login)
    expect(location).toBe('/console/')
    expect(new URL(page.url()).pathname).toBe('/console/')

    const session = await sessionOf(page)
    expect(session.status).toBe(200)
    expect(session.body.user).toMatchObject({ id: person.userId, email: person.email })
    const cookie = await sessionCookieOf(context)
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' })
    // The pending sign-in's cookie is gone: its callback worked once.
    expect((await context.cookies()).map((c) => c.name)).not.toContain('att_sso')

    expect(await identitiesOf(person.userId)).toEqual([
      expect.objectContaining({ issuer: provider.issuer, subject: login }),
    ])
    expect(await auditOf(person.userId)).toEqual([
      { type: 'sso_linked', account_id: person.accountId, actor_id: person.userId },
      { type: 'sign_in', account_id: person.accountId, actor_id: person.userId },
    ])
    expect((await membershipOf(person.userId)).last_sign_in_at).toBe(clock.now())
    await context.close()
  })

  it('makes an invited person active, and their invitation link void', async () => {
    const { person, login } = await personAtProvider({ status: 'invited' })
    const invitation = await issueToken(t.db, 'invite', person.userId, person.accountId)
    const { context, page, location } = await signInWithSso(login)
    expect(location).toBe('/console/')
    expect((await sessionOf(page)).body.user?.id).toBe(person.userId)
    expect((await membershipOf(person.userId)).status).toBe('active')
    expect(await takeToken(t.db, ['invite'], invitation)).toBeUndefined()
    await context.close()
  })

  it('refuses an e-mail nobody here has, an unverified one and a deactivated membership (sso_user_unknown), linking nothing', async () => {
    accounts.set('stranger', { email: `${uniq('stranger')}@example.com`, email_verified: true, name: 'S' })
    const unverified = await personAtProvider({}, { email_verified: false })
    const deactivated = await personAtProvider({ status: 'deactivated' })
    for (const login of ['stranger', unverified.login, deactivated.login]) {
      const { context, page, location } = await signInWithSso(login)
      expect(location, login).toBe('/console/sign-in?sso_error=sso_user_unknown')
      expect(await sessionCookieOf(context), login).toBeUndefined()
      expect((await sessionOf(page)).status, login).toBe(401)
      await context.close()
    }
    for (const { person } of [unverified, deactivated]) {
      expect(await identitiesOf(person.userId)).toEqual([])
      expect(await sessionCountOf(person.userId)).toBe(0)
    }
    const linked = await t.db.selectFrom('sso_identities').select('subject').execute()
    expect(linked.map((row) => row.subject)).not.toContain('stranger')
  })

  it('refuses a replayed callback: without its cookie, and with it (the code is used)', async () => {
    const { person, login } = await personAtProvider()
    const first = await signInWithSso(login)
    expect(first.location).toBe('/console/')
    const sessions = await sessionCountOf(person.userId)

    // The same URL again in the same browser: the pending sign-in's cookie is gone.
    const logged = watch.lines.length
    const replay = await callbackAnswer(first.page, () => first.page.goto(first.callbackUrl))
    expect(replay.location).toBe('/console/sign-in?sso_error=sso_failed')

    // And with the cookie put back (copied off the browser before): the provider refuses the code.
    await first.context.addCookies([first.stateCookie])
    const withCookie = await callbackAnswer(first.page, () => first.page.goto(first.callbackUrl))
    expect(withCookie.location).toBe('/console/sign-in?sso_error=sso_failed')
    expect(reasonsSince(logged)).toEqual([
      expect.stringContaining('no sign-in was started in this browser'),
      expect.stringContaining('invalid_grant'),
    ])
    expect(await sessionCountOf(person.userId)).toBe(sessions)
    await first.context.close()
  })

  it("refuses a forged callback: another browser's code and state, and a callback with no sign-in started", async () => {
    const victim = await personAtProvider()
    const attacker = await personAtProvider()
    // The attacker starts a sign-in outside the browser (keeping its cookie) and signs in at the
    // provider: the callback reaches the attacker's browser, which started nothing, and is refused
    // before its code is used.
    const start = await t.client(undefined).get('/v1/auth/sso/start')
    const attackerState = setCookieValue(start, 'att_sso') as string
    const attackerPage = await browser.newPage()
    await attackerPage.goto(String(start.headers.location))
    const beforeStolen = watch.lines.length
    const stolen = await atProvider(attackerPage, attacker.login)
    expect(stolen.location).toBe('/console/sign-in?sso_error=sso_failed')
    expect(reasonsSince(beforeStolen)).toEqual([
      expect.stringContaining('no sign-in was started in this browser'),
    ])
    watch.remember(attackerState, new URL(stolen.callbackUrl).searchParams.get('code'))

    // The victim's browser, with a sign-in of its own under way, is sent the attacker's callback.
    const victimContext = await browser.newContext()
    const page = await victimContext.newPage()
    await page.goto(`${base}/v1/auth/sso/start`)
    expect((await victimContext.cookies()).map((c) => c.name)).toContain('att_sso')
    const logged = watch.lines.length
    const forged = await callbackAnswer(page, () => page.goto(stolen.callbackUrl))
    expect(forged.location).toBe('/console/sign-in?sso_error=sso_failed')
    expect(reasonsSince(logged)).toEqual([
      expect.stringMatching(/^sso_failed: .*unexpected "state" response parameter value/),
    ])
    expect(await sessionCookieOf(victimContext)).toBeUndefined()
    expect(await sessionCountOf(victim.person.userId)).toBe(0)
    expect(await sessionCountOf(attacker.person.userId)).toBe(0)

    // The code itself was good all along: with the state it was issued for, it signs the attacker in.
    const url = new URL(stolen.callbackUrl)
    const own = await t
      .client(undefined)
      .get(`${url.pathname}${url.search}`, { cookie: `att_sso=${attackerState}` })
    expect(own.headers.location).toBe('/console/')
    expect(await sessionCountOf(attacker.person.userId)).toBe(1)
    await Promise.all([attackerPage.context().close(), victimContext.close()])
  })

  it('refuses a sign-in started more than 10 minutes before its callback', async () => {
    const { person, login } = await personAtProvider()
    const logged = watch.lines.length
    const { context, location } = await signInWithSso(login, {
      beforeLogin: () => clock.advance(SSO_STATE_LIFETIME_MS),
    })
    expect(location).toBe('/console/sign-in?sso_error=sso_failed')
    expect(reasonsSince(logged)).toEqual([expect.stringContaining('the sign-in was started too long ago')])
    expect(await sessionCountOf(person.userId)).toBe(0)
    await context.close()
  })

  it('signs in by the identity later, though the e-mail changed here and at the provider', async () => {
    const { person, login } = await personAtProvider()
    const first = await signInWithSso(login)
    expect(first.location).toBe('/console/')
    await first.context.close()

    const renamed = `${uniq('renamed')}@example.com`
    await t.db
      .updateTable('users')
      .set({ email: renamed, email_key: renamed })
      .where('id', '=', person.userId)
      .execute()
    accounts.set(login, {
      email: `${uniq('elsewhere')}@example.com`,
      email_verified: false,
      name: person.name,
    })
    const later = await signInWithSso(login)
    expect(later.location).toBe('/console/')
    expect((await sessionOf(later.page)).body.user).toMatchObject({ id: person.userId, email: renamed })
    // Linked once: later sign-ins only sign in.
    expect((await auditOf(person.userId)).map((entry) => entry.type)).toEqual([
      'sso_linked',
      'sign_in',
      'sign_in',
    ])
    await later.context.close()
  })

  it('refuses a callback whose cookie was tampered with, clearing it (in-process)', async () => {
    const start = await t.client(undefined).get('/v1/auth/sso/start')
    const sealed = setCookieValue(start, 'att_sso') as string
    const state = new URL(String(start.headers.location)).searchParams.get('state')
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith('AA') ? 'BB' : 'AA'}`
    const res = await t.client(undefined).get(`${CALLBACK}?code=abc&state=${state}`, {
      cookie: `att_sso=${tampered}`,
    })
    expect(res.status).toBe(302)
    expect(res.headers.location).toBe('/console/sign-in?sso_error=sso_failed')
    expect(String(res.headers['set-cookie'])).toMatch(
      /^att_sso=; Max-Age=0; Path=\/v1\/auth\/sso; HttpOnly; SameSite=Lax$/,
    )
  })
})

describe('SSO with a provider that cannot be reached', () => {
  let t: TestApp
  let port: number
  let provider: Awaited<ReturnType<typeof startProvider>> | undefined
  beforeAll(async () => {
    port = await freePort()
    t = await buildTestApp({
      oidc: { issuer: `http://127.0.0.1:${port}`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
    })
  })
  afterAll(async () => {
    await t.close()
    await provider?.close()
  })

  it('sends the browser back to the sign-in page (sso_failed), and asks the provider again next time', async () => {
    const down = await t.client(undefined).get('/v1/auth/sso/start')
    expect(down.status).toBe(302)
    expect(down.headers.location).toBe('/console/sign-in?sso_error=sso_failed')
    expect(down.headers['set-cookie']).toBeUndefined()

    provider = await startProvider(`${t.config.publicUrl}${CALLBACK}`, new Map(), port)
    const up = await t.client(undefined).get('/v1/auth/sso/start')
    expect(String(up.headers.location)).toMatch(new RegExp(`^${provider.issuer}/`))
  })
})

describe('SSO without OIDC_* set', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it('answers 404 at both routes, as if they did not exist', async () => {
    for (const url of ['/v1/auth/sso/start', `${CALLBACK}?code=a&state=b`]) {
      expectError(await t.client(undefined).get(url), 404, 'not_found', 'route_not_found')
    }
  })
})
