import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, uniq } from '../../helpers/assertions.js'
import {
  type AuthSessionAnswer,
  addMembership,
  createPerson,
  freshAddress,
  freshPassword,
  SecretWatch,
  setCookieValue,
  signIn,
} from '../../helpers/people.js'

const WEEK_MS = 7 * 24 * 60 * 60 * 1000

function signInRequest(t: TestApp, body: object, options: { cookie?: string; remoteAddress?: string } = {}) {
  return t.client(undefined).request<AuthSessionAnswer>({
    method: 'POST',
    url: '/v1/auth/sign-in',
    payload: body,
    headers: options.cookie === undefined ? {} : { cookie: options.cookie },
    remoteAddress: options.remoteAddress ?? freshAddress(),
  })
}

function auditOf(t: TestApp, type: string) {
  return t.db.selectFrom('audit_log').selectAll().where('type', '=', type).orderBy('id').execute()
}

describe('POST /v1/auth/sign-in, GET /v1/auth/session, sign-out and password change', () => {
  const watch = new SecretWatch()
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ logLevel: 'trace' }, { logStream: watch.logStream })
  })
  afterAll(() => t.close())

  it('answers the session and sets an HttpOnly, SameSite=Strict cookie for the whole site', async () => {
    const person = await createPerson(t, { role: 'payroll', name: 'Pat Payroll' })
    const second = await addMembership(t, person, { role: 'viewer' })
    // Neither an invitation nor a deactivated membership is an account the person acts in.
    await addMembership(t, person, { status: 'invited' })
    await addMembership(t, person, { status: 'deactivated' })
    watch.remember(person.password)
    const before = Date.now()
    const res = await signInRequest(t, { email: person.email.toUpperCase(), password: person.password })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      object: 'auth_session',
      user: { id: person.userId, email: person.email, name: 'Pat Payroll' },
      accounts: expect.arrayContaining([
        { id: person.accountId, name: person.account, role: 'payroll' },
        { id: second.accountId, name: second.account, role: 'viewer' },
      ]),
      csrf_token: expect.any(String),
      expires_at: expect.any(String),
    })
    expect(res.body.accounts).toHaveLength(2)
    const expiresAt = Date.parse(res.body.expires_at)
    expect(expiresAt).toBeGreaterThanOrEqual(before + WEEK_MS)
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + WEEK_MS)

    const header = [res.headers['set-cookie']].flat()
    expect(header).toHaveLength(1)
    const attributes = String(header[0])
      .split(';')
      .map((part) => part.trim())
    expect(attributes[0]).toMatch(/^att_session=[A-Za-z0-9_-]{43,}$/)
    expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/']))
    expect(attributes).not.toContain('Secure')
    expect(attributes.some((a) => /^Domain=/i.test(a))).toBe(false)
    expect(res.headers['cache-control']).toBe('no-store')
    const token = setCookieValue(res, 'att_session')
    watch.remember(token, res.body.csrf_token)
    // Only the cookie's SHA-256 is stored.
    const stored = await t.db
      .selectFrom('auth_sessions')
      .selectAll()
      .where('user_id', '=', person.userId)
      .execute()
    expect(stored).toHaveLength(1)
    expect(JSON.stringify(stored)).not.toContain(String(token))

    const memberships = await t.db
      .selectFrom('memberships')
      .select(['account_id', 'status', 'last_sign_in_at'])
      .where('user_id', '=', person.userId)
      .execute()
    for (const m of memberships) {
      if (m.status === 'active') expect(Number(m.last_sign_in_at)).toBeGreaterThanOrEqual(before)
      else expect(m.last_sign_in_at).toBeNull()
    }
    const entries = (await auditOf(t, 'sign_in')).filter((e) => e.actor_id === person.userId)
    expect(entries.map((e) => e.account_id).sort()).toEqual([person.accountId, second.accountId].sort())
    expect(entries[0]).toMatchObject({
      actor_type: 'user',
      actor_name: 'Pat Payroll',
      target_id: person.userId,
    })
  })

  it('over https names the cookie __Host-att_session and marks it Secure', async () => {
    const https = await buildTestApp({ publicUrl: 'https://attendance.example.com' })
    try {
      const person = await createPerson(https)
      const res = await signInRequest(https, { email: person.email, password: person.password })
      expect(res.status).toBe(200)
      const attributes = String([res.headers['set-cookie']].flat()[0])
        .split(';')
        .map((part) => part.trim())
      expect(attributes[0]).toMatch(/^__Host-att_session=/)
      expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/', 'Secure']))
      expect(attributes.some((a) => /^Domain=/i.test(a))).toBe(false)
      // The plain name is not read over https.
      const token = setCookieValue(res, '__Host-att_session')
      const plain = await https.client(undefined).get('/v1/auth/session', { cookie: `att_session=${token}` })
      expectError(plain, 401, 'authentication_error')
      const named = await https
        .client(undefined)
        .get('/v1/auth/session', { cookie: `__Host-att_session=${token}` })
      expect(named.status).toBe(200)
    } finally {
      await https.close()
    }
  })

  it('answers a wrong password and an unknown e-mail alike, and records both failures', async () => {
    const person = await createPerson(t)
    const wrong = freshPassword()
    watch.remember(person.password, wrong)
    const address = freshAddress()
    const badPassword = await signInRequest(
      t,
      { email: person.email, password: wrong },
      { remoteAddress: address },
    )
    const unknownEmail = await signInRequest(
      t,
      { email: `${uniq('nobody')}@example.com`, password: wrong },
      { remoteAddress: address },
    )
    const one = expectError(badPassword, 401, 'authentication_error', 'invalid_credentials')
    const other = expectError(unknownEmail, 401, 'authentication_error', 'invalid_credentials')
    expect({ ...one, request_id: '' }).toEqual({ ...other, request_id: '' })
    expect(badPassword.headers['set-cookie']).toBeUndefined()
    expect(unknownEmail.headers['set-cookie']).toBeUndefined()

    const failed = (await auditOf(t, 'sign_in_failed')).filter((e) => e.ip === address)
    expect(failed).toHaveLength(2)
    expect(failed[0]).toMatchObject({ account_id: person.accountId, target_id: person.userId })
    expect(failed[1]).toMatchObject({ account_id: null, target_id: null })
  })

  it('refuses a person active in no account, with the right password, as a wrong one', async () => {
    const invited = await createPerson(t, { status: 'invited' })
    const deactivated = await createPerson(t, { status: 'deactivated' })
    watch.remember(invited.password, deactivated.password)
    for (const person of [invited, deactivated]) {
      const res = await signInRequest(t, { email: person.email, password: person.password })
      expectError(res, 401, 'authentication_error', 'invalid_credentials')
      expect(res.headers['set-cookie']).toBeUndefined()
    }
    const noPassword = await createPerson(t, { password: null })
    const res = await signInRequest(t, { email: noPassword.email, password: freshPassword() })
    expectError(res, 401, 'authentication_error', 'invalid_credentials')
  })

  it('sets a new cookie at every sign-in: a cookie sent before is never promoted (fixation)', async () => {
    const person = await createPerson(t)
    watch.remember(person.password)
    // A value an attacker chose and planted.
    const planted = 'planted-value-chosen-by-an-attacker-0123456789'
    const first = await signInRequest(
      t,
      { email: person.email, password: person.password },
      { cookie: `att_session=${planted}` },
    )
    expect(first.status).toBe(200)
    const firstToken = setCookieValue(first, 'att_session')
    expect(firstToken).toBeDefined()
    expect(firstToken).not.toBe(planted)
    expectError(
      await t.client(undefined).get('/v1/auth/session', { cookie: `att_session=${planted}` }),
      401,
      'authentication_error',
    )

    // A live session's cookie sent with a sign-in (the attacker's own, planted) ends: it signs nothing in after.
    const attacker = await createPerson(t)
    watch.remember(attacker.password)
    const attackerSession = await signIn(t, attacker)
    const second = await signInRequest(
      t,
      { email: person.email, password: person.password },
      { cookie: attackerSession.cookie },
    )
    expect(second.status).toBe(200)
    const secondToken = setCookieValue(second, 'att_session')
    expect(secondToken).not.toBe(attackerSession.token)
    expect(secondToken).not.toBe(firstToken)
    watch.remember(firstToken, secondToken, attackerSession.token)
    expectError(
      await t.client(undefined).get('/v1/auth/session', { cookie: attackerSession.cookie }),
      401,
      'authentication_error',
    )
    const now = await t
      .client(undefined)
      .get<AuthSessionAnswer>('/v1/auth/session', { cookie: `att_session=${secondToken}` })
    expect(now.body.user.id).toBe(person.userId)
  })

  it('GET /v1/auth/session answers the same object and CSRF token for the session’s life, and sets no cookie', async () => {
    const person = await createPerson(t, { role: 'manager' })
    const browser = await signIn(t, person)
    watch.remember(person.password, browser.token, browser.csrf)
    for (let i = 0; i < 2; i++) {
      const res = await t
        .client(undefined)
        .get<AuthSessionAnswer>('/v1/auth/session', { cookie: browser.cookie })
      expect(res.status).toBe(200)
      expect(res.body).toEqual(browser.session)
      expect(res.headers['set-cookie']).toBeUndefined()
    }
    // Another session of the same person has its own token.
    const other = await signIn(t, person)
    watch.remember(other.token, other.csrf)
    expect(other.csrf).not.toBe(browser.csrf)

    expectError(await t.client(undefined).get('/v1/auth/session'), 401, 'authentication_error')
    // A key is no sign-in, and beats the cookie sent beside it.
    const key = await t.key({ account: person.account })
    expectError(await t.client(key.secret).get('/v1/auth/session'), 401, 'authentication_error')
    expectError(
      await t.client(key.secret).get('/v1/auth/session', { cookie: browser.cookie }),
      401,
      'authentication_error',
    )
  })

  it('signs out with the CSRF token: the cookie stops working at once and is cleared', async () => {
    const person = await createPerson(t)
    const browser = await signIn(t, person)
    watch.remember(person.password, browser.token, browser.csrf)
    const api = t.client(undefined)
    expectError(
      await api.post('/v1/auth/sign-out', undefined, { cookie: browser.cookie }),
      403,
      'insufficient_scope',
      'csrf_token_invalid',
    )
    expectError(
      await api.post('/v1/auth/sign-out', undefined, {
        cookie: browser.cookie,
        'x-csrf-token': `${browser.csrf}x`,
      }),
      403,
      'insufficient_scope',
      'csrf_token_invalid',
    )
    expect((await api.get('/v1/auth/session', { cookie: browser.cookie })).status).toBe(200)

    const out = await api.post('/v1/auth/sign-out', undefined, {
      cookie: browser.cookie,
      'x-csrf-token': browser.csrf,
    })
    expect(out.status).toBe(204)
    expect(out.raw.body).toBe('')
    const cleared = String([out.headers['set-cookie']].flat()[0])
    expect(cleared).toMatch(/^att_session=;/)
    expect(cleared).toContain('Max-Age=0')
    // At once, in this process: no wait for the 5 s cache.
    expectError(await api.get('/v1/auth/session', { cookie: browser.cookie }), 401, 'authentication_error')
    const entries = (await auditOf(t, 'sign_out')).filter((e) => e.actor_id === person.userId)
    expect(entries.map((e) => e.account_id)).toEqual([person.accountId])
  })

  it('changes the password with the current one: other sessions end, this one goes on', async () => {
    const person = await createPerson(t)
    const here = await signIn(t, person)
    const elsewhere = await signIn(t, person)
    const next = freshPassword()
    const wrong = freshPassword()
    watch.remember(person.password, next, wrong, here.token, here.csrf, elsewhere.token, elsewhere.csrf)
    const api = here.client()
    const change = (body: object, headers: Record<string, string> = {}) =>
      api.post('/v1/auth/password', body, headers)

    expectError(
      await change({ current_password: person.password, new_password: next }, { 'x-csrf-token': 'nope' }),
      403,
      'insufficient_scope',
      'csrf_token_invalid',
    )
    expectError(
      await change({ current_password: wrong, new_password: next }),
      401,
      'authentication_error',
      'invalid_credentials',
    )
    expectError(
      await change({ current_password: person.password, new_password: 'short' }),
      422,
      'validation_error',
      'invalid_value',
      'new_password',
    )
    expectError(
      await change({ current_password: person.password, new_password: person.email }),
      422,
      'validation_error',
      'invalid_value',
      'new_password',
    )
    // Nothing changed so far, and a wrong current password counts toward no lockout.
    expect((await t.client(undefined).get('/v1/auth/session', { cookie: elsewhere.cookie })).status).toBe(200)
    expect(
      await t.db
        .selectFrom('sign_in_failures')
        .selectAll()
        .where('email_key', '=', person.email.toLowerCase())
        .execute(),
    ).toEqual([])

    const res = await change({ current_password: person.password, new_password: next })
    expect(res.status).toBe(204)
    expect((await t.client(undefined).get('/v1/auth/session', { cookie: here.cookie })).status).toBe(200)
    expectError(
      await t.client(undefined).get('/v1/auth/session', { cookie: elsewhere.cookie }),
      401,
      'authentication_error',
    )
    expectError(
      await signInRequest(t, { email: person.email, password: person.password }),
      401,
      'authentication_error',
      'invalid_credentials',
    )
    expect((await signInRequest(t, { email: person.email, password: next })).status).toBe(200)
    const entries = (await auditOf(t, 'password_changed')).filter((e) => e.actor_id === person.userId)
    expect(entries).toHaveLength(1)
  })

  it('writes no password, cookie or CSRF token to the log, the audit log or the events', async () => {
    expect(watch.size).toBeGreaterThan(10)
    expect(watch.lines.length).toBeGreaterThan(0)
    expect(watch.leaked()).toEqual([])
    const stored = [
      JSON.stringify(await t.db.selectFrom('audit_log').selectAll().execute()),
      JSON.stringify(await t.db.selectFrom('events').selectAll().execute()),
    ]
    expect(watch.leaked(stored)).toEqual([])
  })
})
