import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAccount } from '../../../src/modules/keys/service.js'
import { issueToken } from '../../../src/modules/users/sessions.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, uniq, waitUntil } from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import {
  type AuthSessionAnswer,
  addMembership,
  createPerson,
  freshAddress,
  freshPassword,
  type Person,
  SecretWatch,
  setCookieValue,
  signedInFrom,
  signIn,
} from '../../helpers/people.js'

const MINUTE_MS = 60 * 1000

/** A local SMTP server that keeps every message it is sent, raw. */
async function startMailbox() {
  const messages: string[] = []
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on the loopback: no certificate for nodemailer to refuse.
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      let data = ''
      stream.setEncoding('utf8')
      stream.on('data', (chunk: string) => {
        data += chunk
      })
      stream.on('end', () => {
        messages.push(data)
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address() as AddressInfo
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

/** A message's text as written (quoted-printable soft breaks and escapes undone). */
function textOf(message: string): string {
  return message
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
}

describe('password reset and accepting invitations', () => {
  const clock = useTestClock()
  const watch = new SecretWatch()
  let mailbox: Awaited<ReturnType<typeof startMailbox>>
  let t: TestApp
  beforeAll(async () => {
    mailbox = await startMailbox()
    t = await buildTestApp(
      { logLevel: 'trace', smtpUrl: mailbox.url, publicUrl: 'https://attendance.example.com' },
      { logStream: watch.logStream },
    )
  })
  afterAll(async () => {
    await t?.close()
    await mailbox?.close()
  })

  const cookieName = '__Host-att_session'
  const api = () => t.client(undefined)
  const post = <T = Record<string, unknown>>(
    url: string,
    body: object,
    headers: Record<string, string> = {},
  ) => api().request<T>({ method: 'POST', url, payload: body, headers, remoteAddress: freshAddress() })
  const session = (cookie: string) => api().get('/v1/auth/session', { cookie })

  /** Asks for a reset link for `email` and reads it from the e-mail that follows. */
  async function resetLinkFor(person: Person): Promise<string> {
    const before = mailbox.messages.length
    const res = await post('/v1/auth/forgot-password', { email: person.email.toUpperCase() })
    expect(res.status).toBe(202)
    expect(res.raw.body).toBe('')
    const messages = await waitUntil(
      () => mailbox.messages,
      (all) => all.length > before,
    )
    const message = textOf(messages[before] as string)
    expect(message).toMatch(new RegExp(`^To: ${person.email}`, 'mi'))
    const match = /https:\/\/attendance\.example\.com\/console\/reset-password#token=([A-Za-z0-9_-]+)/.exec(
      message,
    )
    expect(match, message).not.toBeNull()
    const token = (match as RegExpExecArray)[1] as string
    watch.remember(token)
    return token
  }

  async function person(options: Parameters<typeof createPerson>[1] = {}) {
    const created = await createPerson(t, options)
    watch.remember(created.password)
    return created
  }

  it('e-mails a reset link, single use, that sets the password and ends every session', async () => {
    const someone = await person()
    const browser = await signIn(t, someone)
    watch.remember(browser.token, browser.csrf)
    const token = await resetLinkFor(someone)
    const password = freshPassword()
    watch.remember(password)

    // The rules of a new password, and the token is not used up by a refusal.
    expectError(
      await post('/v1/auth/reset-password', { token, password: 'short' }),
      422,
      'validation_error',
      'invalid_value',
      'password',
    )
    expectError(
      await post('/v1/auth/reset-password', { token, password: someone.email }),
      422,
      'validation_error',
      'invalid_value',
      'password',
    )
    const res = await post('/v1/auth/reset-password', { token, password })
    expect(res.status).toBe(204)
    expect(res.headers['set-cookie']).toBeUndefined()
    // At once in this process.
    expectError(await session(browser.cookie), 401, 'authentication_error')
    expectError(
      await post('/v1/auth/sign-in', { email: someone.email, password: someone.password }),
      401,
      'authentication_error',
      'invalid_credentials',
    )
    expect((await post('/v1/auth/sign-in', { email: someone.email, password })).status).toBe(200)

    const again = await post('/v1/auth/reset-password', { token, password: freshPassword() })
    const error = expectError(again, 422, 'validation_error', 'invalid_value', 'token')
    expect(error.message).toBe('This link is unknown, used or expired; ask for a new one.')
    expect(
      (
        await t.db
          .selectFrom('audit_log')
          .selectAll()
          .where('type', '=', 'password_reset')
          .where('actor_id', '=', someone.userId)
          .execute()
      ).length,
    ).toBe(1)
  })

  it('answers 202 for an unknown e-mail and sends nothing; a newer link voids the older', async () => {
    const before = mailbox.messages.length
    const unknown = await post('/v1/auth/forgot-password', { email: `${uniq('nobody')}@example.com` })
    expect(unknown.status).toBe(202)
    const someone = await person()
    const first = await resetLinkFor(someone)
    const second = await resetLinkFor(someone)
    // Only the two messages of the known person arrived.
    expect(mailbox.messages.length).toBe(before + 2)
    expect(first).not.toBe(second)
    expectError(
      await post('/v1/auth/reset-password', { token: first, password: freshPassword() }),
      422,
      'validation_error',
      'invalid_value',
      'token',
    )
    const password = freshPassword()
    watch.remember(password)
    expect((await post('/v1/auth/reset-password', { token: second, password })).status).toBe(204)
  })

  it('lets a reset link work for an hour, no longer', async () => {
    const someone = await person()
    const late = await resetLinkFor(someone)
    clock.advance(60 * MINUTE_MS)
    expectError(
      await post('/v1/auth/reset-password', { token: late, password: freshPassword() }),
      422,
      'validation_error',
      'invalid_value',
      'token',
    )
    const timely = await resetLinkFor(someone)
    clock.advance(59 * MINUTE_MS)
    const password = freshPassword()
    watch.remember(password)
    expect((await post('/v1/auth/reset-password', { token: timely, password })).status).toBe(204)
  })

  it('lifts a lockout of the e-mail: the link proves the mailbox', async () => {
    const someone = await person()
    const address = freshAddress()
    const attempt = (password: string) =>
      api().request({
        method: 'POST',
        url: '/v1/auth/sign-in',
        payload: { email: someone.email, password },
        remoteAddress: address,
      })
    for (let i = 0; i < 5; i++) expectError(await attempt(freshPassword()), 401, 'authentication_error')
    expectError(await attempt(String(someone.password)), 429, 'rate_limited', 'sign_in_locked')
    const password = freshPassword()
    watch.remember(password)
    expect(
      (await post('/v1/auth/reset-password', { token: await resetLinkFor(someone), password })).status,
    ).toBe(204)
    expect((await attempt(password)).status).toBe(200)
  })

  it('accepts an invitation: the membership becomes active, the password and name are set, and it signs in', async () => {
    const invited = await person({ status: 'invited', password: null, role: 'manager' })
    const token = await issueToken(t.db, 'invite', invited.userId, invited.accountId)
    watch.remember(token)
    expectError(
      await post('/v1/auth/accept-invite', { token, password: 'short' }),
      422,
      'validation_error',
      'invalid_value',
      'password',
    )
    const password = freshPassword()
    watch.remember(password)
    const res = await post<AuthSessionAnswer>('/v1/auth/accept-invite', {
      token,
      password,
      name: 'Morgan Manager',
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      object: 'auth_session',
      user: { id: invited.userId, email: invited.email, name: 'Morgan Manager' },
      accounts: [{ id: invited.accountId, name: invited.account, role: 'manager' }],
    })
    const browser = signedInFrom(t, res)
    watch.remember(browser.token, browser.csrf)
    expect(String([res.headers['set-cookie']].flat()[0])).toMatch(/^__Host-att_session=.*; Secure/)
    expect((await browser.client().get('/v1/operators')).status).toBe(200)
    const membership = await t.db
      .selectFrom('memberships')
      .select(['status', 'last_sign_in_at'])
      .where('user_id', '=', invited.userId)
      .executeTakeFirstOrThrow()
    expect(membership.status).toBe('active')
    expect(membership.last_sign_in_at).not.toBeNull()
    expect((await post('/v1/auth/sign-in', { email: invited.email, password })).status).toBe(200)
    expectError(
      await post('/v1/auth/accept-invite', { token, password }),
      422,
      'validation_error',
      'invalid_value',
      'token',
    )
  })

  it('asks a person who already has a password for it, and keeps the link until it is given', async () => {
    const member = await person({ role: 'viewer' })
    const joining = await addMembership(t, member, { role: 'payroll', status: 'invited' })
    const token = await issueToken(t.db, 'invite', member.userId, joining.accountId)
    watch.remember(token)
    const wrong = freshPassword()
    watch.remember(wrong)
    const refused = await post('/v1/auth/accept-invite', { token, password: wrong })
    expectError(refused, 401, 'authentication_error', 'invalid_credentials')
    expect(refused.headers['set-cookie']).toBeUndefined()
    const res = await post<AuthSessionAnswer>('/v1/auth/accept-invite', { token, password: member.password })
    expect(res.status).toBe(200)
    expect(res.body.accounts).toEqual(
      expect.arrayContaining([
        { id: member.accountId, name: member.account, role: 'viewer' },
        { id: joining.accountId, name: joining.account, role: 'payroll' },
      ]),
    )
    expect(res.body.user.name).toBe(member.name)
  })

  it('refuses an invitation to a membership deactivated since', async () => {
    const invited = await person({ status: 'invited', password: null })
    const token = await issueToken(t.db, 'invite', invited.userId, invited.accountId)
    watch.remember(token)
    await t.db
      .updateTable('memberships')
      .set({ status: 'deactivated' })
      .where('user_id', '=', invited.userId)
      .execute()
    expectError(
      await post('/v1/auth/accept-invite', { token, password: freshPassword() }),
      422,
      'validation_error',
      'invalid_value',
      'token',
    )
  })

  it('makes the first owner with the set-up link and its e-mail', async () => {
    const account = uniq('first')
    const accountId = await ensureAccount(t.db, account)
    const token = await issueToken(t.db, 'owner', null, accountId)
    watch.remember(token)
    const email = `${uniq('owner')}@example.com`
    const password = freshPassword()
    watch.remember(password)
    expectError(
      await post('/v1/auth/accept-invite', { token, password }),
      422,
      'validation_error',
      'missing_param',
      'email',
    )
    const res = await post<AuthSessionAnswer>('/v1/auth/accept-invite', { token, password, email })
    expect(res.status).toBe(200)
    expect(res.body.user).toMatchObject({ email, name: email.slice(0, email.indexOf('@')) })
    expect(res.body.accounts).toEqual([{ id: accountId, name: account, role: 'owner' }])
    const browser = signedInFrom(t, res)
    watch.remember(browser.token, browser.csrf)
    // An owner: even the people-only scopes.
    expect((await browser.client().get('/v1/operators')).status).toBe(200)
    expectError(
      await post('/v1/auth/accept-invite', { token, password, email }),
      422,
      'validation_error',
      'invalid_value',
      'token',
    )
    expect((await post('/v1/auth/sign-in', { email, password })).status).toBe(200)
  })

  it('makes an existing login the owner with the set-up link, given its password', async () => {
    const existing = await person({ role: 'viewer' })
    const accountId = await ensureAccount(t.db, uniq('second'))
    const token = await issueToken(t.db, 'owner', null, accountId)
    watch.remember(token)
    const wrong = freshPassword()
    watch.remember(wrong)
    expectError(
      await post('/v1/auth/accept-invite', { token, password: wrong, email: existing.email }),
      401,
      'authentication_error',
      'invalid_credentials',
    )
    const res = await post<AuthSessionAnswer>('/v1/auth/accept-invite', {
      token,
      password: existing.password,
      email: existing.email.toUpperCase(),
      name: 'Olive Owner',
    })
    expect(res.status).toBe(200)
    expect(res.body.user).toEqual({ id: existing.userId, email: existing.email, name: 'Olive Owner' })
    expect(res.body.accounts).toEqual(
      expect.arrayContaining([{ id: accountId, name: expect.any(String), role: 'owner' }]),
    )
  })

  it('never promotes a cookie sent with an accept: its session ends', async () => {
    const other = await person()
    const planted = await signIn(t, other)
    watch.remember(planted.token, planted.csrf)
    const invited = await person({ status: 'invited', password: null })
    const token = await issueToken(t.db, 'invite', invited.userId, invited.accountId)
    const password = freshPassword()
    watch.remember(token, password)
    const res = await post<AuthSessionAnswer>(
      '/v1/auth/accept-invite',
      { token, password },
      { cookie: planted.cookie },
    )
    expect(res.status).toBe(200)
    expect(setCookieValue(res, cookieName)).not.toBe(planted.token)
    expectError(await session(planted.cookie), 401, 'authentication_error')
  })

  it('writes no password, token or cookie to the log, an answer of another, the audit log or the events', async () => {
    expect(watch.size).toBeGreaterThan(20)
    expect(watch.leaked()).toEqual([])
    const stored = [
      JSON.stringify(await t.db.selectFrom('audit_log').selectAll().execute()),
      JSON.stringify(await t.db.selectFrom('events').selectAll().execute()),
      JSON.stringify(await t.db.selectFrom('user_tokens').selectAll().execute()),
      JSON.stringify(await t.db.selectFrom('auth_sessions').selectAll().execute()),
    ]
    expect(watch.leaked(stored)).toEqual([])
  })
})

describe('password reset without e-mail', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it('answers 202 and makes no link: whoever runs the service prints one (cli users reset-password)', async () => {
    const someone = await createPerson(t)
    const res = await t.client(undefined).post('/v1/auth/forgot-password', { email: someone.email })
    expect(res.status).toBe(202)
    expect(
      await t.db.selectFrom('user_tokens').selectAll().where('user_id', '=', someone.userId).execute(),
    ).toEqual([])
  })
})
