import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type List, type Operator, uniq } from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import { addMembership, type createPerson, SecretWatch } from '../../helpers/people.js'

const HOUR_MS = 60 * 60 * 1000
/** The session cache's time to live (users/sessions.ts): a deactivation reaches every request within it. */
const CACHE_MS = 5000

describe('cookie requests: account, mode, role, CSRF, keys and timeouts', () => {
  const clock = useTestClock()
  const watch = new SecretWatch()
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ logLevel: 'trace' }, { logStream: watch.logStream })
  })
  afterAll(() => t.close())

  async function signedInPerson(options: Parameters<typeof createPerson>[1] = {}) {
    return watch.signedIn(t, options)
  }

  it('acts in the one account without Attendance-Account, in the mode Attendance-Mode names', async () => {
    const { person, browser } = await signedInPerson()
    const key = await t.key({ account: person.account, mode: 'live' })
    await t.client(key.secret).post('/v1/operators', { ident: 'LIVE-1' })
    const { cookie, csrf } = browser

    const api = t.client(undefined)
    expectError(await api.get('/v1/operators', { cookie }), 400, 'bad_request', 'missing_mode')
    expectError(
      await api.get('/v1/operators', { cookie, 'attendance-mode': 'prod' }),
      400,
      'bad_request',
      'missing_mode',
    )
    const test = await browser.client(null, 'test').get<List<Operator>>('/v1/operators')
    expect(test.status).toBe(200)
    expect(test.body.data).toEqual([])
    const live = await browser.client(null, 'live').get<List<Operator>>('/v1/operators')
    expect(live.body.data.map((o) => o.ident)).toEqual(['LIVE-1'])
    expect(live.body.data[0]?.livemode).toBe(true)
    // Naming its own account is allowed too; a change needs the token.
    const created = await api.post<Operator>(
      '/v1/operators',
      { ident: 'T-1' },
      { cookie, 'x-csrf-token': csrf, 'attendance-mode': 'test', 'attendance-account': person.accountId },
    )
    expect(created.status).toBe(201)
    expect(created.body.livemode).toBe(false)
  })

  it('needs Attendance-Account with several accounts, and answers 404 for an account not the person’s', async () => {
    const { person, browser } = await signedInPerson()
    const second = await addMembership(t, person, { role: 'viewer' })
    const stranger = await t.key({ account: uniq('stranger') })
    // The person's memberships are read at sign-in's cache; a new one shows within the cache's life.
    clock.advance(CACHE_MS + 1)
    expectError(await browser.client(null).get('/v1/operators'), 400, 'bad_request', 'missing_account')
    expect((await browser.client(person.accountId).get('/v1/operators')).status).toBe(200)
    expect((await browser.client(second.accountId).get('/v1/operators')).status).toBe(200)
    expectError(
      await browser.client(stranger.account_id).get('/v1/operators'),
      404,
      'not_found',
      'resource_missing',
    )
    expectError(await browser.client('acct_nonexistent').get('/v1/operators'), 404, 'not_found')
  })

  it('never reads another account: its objects answer 404 as missing ones', async () => {
    const a = await signedInPerson()
    const b = await signedInPerson()
    const bOperator = await b.browser.client().post<Operator>('/v1/operators', { ident: uniq('B') })
    expect(bOperator.status).toBe(201)
    expectError(await a.browser.client().get(`/v1/operators/${bOperator.body.id}`), 404, 'not_found')
    expect((await a.browser.client().get<List<Operator>>('/v1/operators')).body.data).toEqual([])
    expectError(
      await a.browser.client(b.person.accountId).get(`/v1/operators/${bOperator.body.id}`),
      404,
      'not_found',
    )
    expect((await b.browser.client().get(`/v1/operators/${bOperator.body.id}`)).status).toBe(200)
  })

  it('holds a person to the scopes of their role', async () => {
    const { browser } = await signedInPerson({ role: 'viewer' })
    expect((await browser.client().get('/v1/operators')).status).toBe(200)
    expectError(
      await browser.client().post('/v1/operators', { ident: uniq('V') }),
      403,
      'insufficient_scope',
      'missing_scope',
    )
    expectError(
      await browser.client().get('/v1/webhook-endpoints'),
      403,
      'insufficient_scope',
      'missing_scope',
    )
  })

  it('refuses a change without the CSRF token, or with a wrong one, from any origin, and changes nothing', async () => {
    const { browser } = await signedInPerson()
    const { cookie, csrf } = browser
    const api = t.client(undefined)
    const mode = { 'attendance-mode': 'test' }
    const attempts: Array<Record<string, string>> = [
      { cookie, ...mode },
      { cookie, ...mode, 'x-csrf-token': '' },
      { cookie, ...mode, 'x-csrf-token': `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}` },
      { cookie, ...mode, 'x-csrf-token': csrf.slice(0, 10) },
      // A cross-site page's request carries the cookie but cannot read the token.
      { cookie, ...mode, origin: 'https://evil.example', referer: 'https://evil.example/page' },
    ]
    for (const headers of attempts) {
      const res = await api.post('/v1/operators', { ident: uniq('X') }, headers)
      expectError(res, 403, 'insufficient_scope', 'csrf_token_invalid')
      expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([])
      expectError(
        await api.patch('/v1/operators/op_whatever', { name: 'x' }, headers),
        403,
        'insufficient_scope',
        'csrf_token_invalid',
      )
    }
    // Another session's token is no token for this one.
    const other = await signedInPerson()
    expectError(
      await api.post(
        '/v1/operators',
        { ident: uniq('X') },
        { cookie, ...mode, 'x-csrf-token': other.browser.csrf },
      ),
      403,
      'insufficient_scope',
      'csrf_token_invalid',
    )
    expect((await browser.client().get<List<Operator>>('/v1/operators')).body.data).toEqual([])
  })

  it('answers cookie requests with no CORS header, whatever the Origin', async () => {
    const { browser } = await signedInPerson()
    const headers = { origin: 'https://evil.example' }
    const answers = [
      await browser.client().get('/v1/operators', headers),
      await browser.client().post('/v1/operators', { ident: uniq('C') }, headers),
      await t.client(undefined).get('/v1/auth/session', { cookie: browser.cookie, ...headers }),
      await t.client(undefined).request({
        method: 'OPTIONS',
        url: '/v1/operators',
        headers: {
          cookie: browser.cookie,
          ...headers,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'x-csrf-token',
        },
      }),
    ]
    for (const res of answers)
      expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([])
  })

  it('judges a request with both a key and a cookie by the key', async () => {
    const viewer = await signedInPerson({ role: 'viewer' })
    const other = await freshKeyAccount()
    // The key's account, its scopes: the viewer's cookie neither restricts nor lends anything.
    const created = await t
      .client(other.secret)
      .post<Operator>(
        '/v1/operators',
        { ident: uniq('K') },
        { cookie: viewer.browser.cookie, 'attendance-mode': 'test' },
      )
    expect(created.status).toBe(201)
    const listed = await t
      .client(other.secret)
      .get<List<Operator>>('/v1/operators', { cookie: viewer.browser.cookie, 'attendance-mode': 'test' })
    expect(listed.body.data.map((o) => o.id)).toEqual([created.body.id])
    // A bad key is refused even beside a good cookie.
    expectError(
      await t.client(`sk_test_${'x'.repeat(32)}`).get('/v1/operators', viewer.browser.headers()),
      401,
      'authentication_error',
    )
  })

  it('keeps the Idempotency-Keys of a person and of a key of the same account apart', async () => {
    const { person, browser } = await signedInPerson()
    const key = await t.key({ account: person.account })
    const idem = { 'idempotency-key': uniq('idem') }
    const body = { ident: uniq('I') }
    const byKey = await t.client(key.secret).post<Operator>('/v1/operators', body, idem)
    expect(byKey.status).toBe(201)
    const byPerson = await browser.client().post<Operator>('/v1/operators', body, idem)
    // Not a replay of the key's answer: the person's own create, which meets the ident taken.
    expect(byPerson.headers['idempotent-replayed']).toBeUndefined()
    expectError(byPerson, 409, 'conflict', 'duplicate_ident')
    const otherBody = { ident: uniq('J') }
    const first = await browser
      .client()
      .post<Operator>('/v1/operators', otherBody, { 'idempotency-key': 'shared' })
    const second = await t
      .client(key.secret)
      .post<Operator>('/v1/operators', otherBody, { 'idempotency-key': 'shared' })
    expect(first.status).toBe(201)
    expect(second.headers['idempotent-replayed']).toBeUndefined()
    expectError(second, 409, 'conflict', 'duplicate_ident')
    const replay = await browser
      .client()
      .post<Operator>('/v1/operators', otherBody, { 'idempotency-key': 'shared' })
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body.id).toBe(first.body.id)
  })

  it('ends a session after 12 hours without a request', async () => {
    const { browser } = await signedInPerson()
    const session = () => t.client(undefined).get('/v1/auth/session', { cookie: browser.cookie })
    for (let i = 0; i < 3; i++) {
      clock.advance(12 * HOUR_MS - 60_000)
      expect((await session()).status).toBe(200)
    }
    clock.advance(12 * HOUR_MS)
    expectError(await session(), 401, 'authentication_error')
    expectError(await browser.client().get('/v1/operators'), 401, 'authentication_error')
  })

  it('ends a session 7 days after sign-in, however busy', async () => {
    const { browser } = await signedInPerson()
    const session = () => t.client(undefined).get('/v1/auth/session', { cookie: browser.cookie })
    const end = Date.parse(browser.session.expires_at)
    while (clock.now() + 11 * HOUR_MS < end) {
      clock.advance(11 * HOUR_MS)
      expect((await session()).status).toBe(200)
    }
    clock.set(end - 1)
    expect((await session()).status).toBe(200)
    clock.set(end)
    expectError(await session(), 401, 'authentication_error')
  })

  it('refuses a deactivated membership within 5 s', async () => {
    const { person, browser } = await signedInPerson()
    expect((await browser.client().get('/v1/operators')).status).toBe(200)
    await t.db
      .updateTable('memberships')
      .set({ status: 'deactivated' })
      .where('user_id', '=', person.userId)
      .where('account_id', '=', person.accountId)
      .execute()
    clock.advance(CACHE_MS + 1)
    expectError(await browser.client().get('/v1/operators'), 401, 'authentication_error')
    expectError(
      await t.client(undefined).get('/v1/auth/session', { cookie: browser.cookie }),
      401,
      'authentication_error',
    )
  })

  it('writes no password, cookie or CSRF token to the log', () => {
    expect(watch.size).toBeGreaterThan(10)
    expect(watch.leaked()).toEqual([])
  })

  async function freshKeyAccount() {
    return t.key({ account: uniq('keyed') })
  }
})
