import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashSecret } from '../../../src/modules/keys/service.js'
import { SESSION_CACHE_TTL_MS } from '../../../src/modules/users/sessions.js'
import type { ApiClient } from '../../helpers/app.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import {
  expectError,
  ISO_MS,
  type List,
  type Location,
  type Operator,
  uniq,
  waitUntil,
} from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import {
  addMembership,
  createPerson,
  freshAddress,
  type Person,
  SecretWatch,
  type SignedIn,
  signIn,
} from '../../helpers/people.js'
import { freePort } from '../../helpers/process.js'
import { created, ok } from '../../helpers/world.js'

interface User {
  object: 'user'
  id: string
  email: string
  name: string
  role: string
  location_ids: string[] | null
  operator_id: string | null
  status: 'invited' | 'active' | 'deactivated'
  last_sign_in_at: string | null
  created: string
  updated: string
}
type Invited = User & { invite_url: string }

const USER_KEYS = [
  'created',
  'email',
  'id',
  'last_sign_in_at',
  'location_ids',
  'name',
  'object',
  'operator_id',
  'role',
  'status',
  'updated',
]

/** The token of an invitation or reset link (`…#token=<token>`). */
function tokenOf(url: string): string {
  const token = new URL(url).hash.replace(/^#token=/, '')
  expect(token.length).toBeGreaterThan(20)
  return token
}

describe('people of an account: /v1/users', () => {
  const clock = useTestClock()
  let t: TestApp

  // Every log line, at the finest level, to look for the links' tokens in.
  const watch = new SecretWatch()

  beforeAll(async () => {
    t = await buildTestApp(
      { publicUrl: 'https://attendance.example.com', logLevel: 'trace' },
      { logStream: watch.logStream },
    )
  })
  afterAll(() => t.close())

  /** An account of its own with a signed-in owner, a key of each mode, a location of each and an operator. */
  async function team() {
    const owner = await createPerson(t, { role: 'owner', name: 'Olive Owner' })
    const browser = await signIn(t, owner)
    const api = browser.client(owner.accountId)
    const testKey = t.client((await t.key({ account: owner.account, mode: 'test' })).secret)
    const liveKey = t.client((await t.key({ account: owner.account, mode: 'live' })).secret)
    const hq = await created(testKey.post<Location>('/v1/locations', { name: 'HQ', timezone: 'UTC' }))
    const depot = await created(liveKey.post<Location>('/v1/locations', { name: 'Depot', timezone: 'UTC' }))
    const operator = await created(testKey.post<Operator>('/v1/operators', { ident: uniq('W') }))
    return { owner, browser, api, testKey, liveKey, hq, depot, operator }
  }

  const invite = (api: ApiClient, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    api.post<Invited>(
      '/v1/users',
      { email: `${uniq('new')}@example.com`, name: 'Nia New', role: 'manager', location_ids: null, ...body },
      headers,
    )

  it('invites a person: an invited user with the link in the create answer alone, an audit entry, and a listing', async () => {
    const { owner, api, hq, depot, operator } = await team()
    const email = `${uniq('Nia')}@Example.com`
    const res = await invite(api, {
      email,
      role: 'manager',
      location_ids: [hq.id, depot.id, hq.id],
      operator_id: operator.id,
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    const user = res.body
    expect(Object.keys(user).sort()).toEqual([...USER_KEYS, 'invite_url'].sort())
    expect(user).toMatchObject({
      object: 'user',
      email,
      name: 'Nia New',
      role: 'manager',
      location_ids: [hq.id, depot.id],
      operator_id: operator.id,
      status: 'invited',
      last_sign_in_at: null,
    })
    expect(user.id).toMatch(/^usr_[0-9A-Z]{26}$/)
    expect(user.created).toMatch(ISO_MS)
    expect(user.invite_url).toMatch(
      /^https:\/\/attendance\.example\.com\/console\/accept-invite#token=[\w-]+$/,
    )
    // ≥ 128 random bits, stored only as its SHA-256, valid 7 days.
    const token = tokenOf(user.invite_url)
    expect(token.length * 6).toBeGreaterThanOrEqual(128)
    const stored = await t.db.selectFrom('user_tokens').selectAll().where('user_id', '=', user.id).execute()
    expect(stored).toHaveLength(1)
    expect(stored[0]).toMatchObject({
      kind: 'invite',
      token_hash: hashSecret(token),
      account_id: owner.accountId,
    })
    expect(Number(stored[0]?.expires_at) - Number(stored[0]?.created_at)).toBe(7 * 24 * 60 * 60 * 1000)

    const { invite_url: _link, ...shown } = user
    expect(await ok(api.get<User>(`/v1/users/${user.id}`))).toEqual(shown)
    const list = await ok(api.get<List<User>>('/v1/users'))
    expect(list.data.map((u) => u.id)).toEqual([user.id, owner.userId])
    expect(list.data[0]).toEqual(shown)
    expect(JSON.stringify(list)).not.toContain(token)

    const log = await ok(api.get<List<Record<string, unknown>>>('/v1/audit-log?type=user_invited'))
    expect(log.data).toEqual([
      {
        object: 'audit_entry',
        id: expect.stringMatching(/^aud_/),
        type: 'user_invited',
        actor: { type: 'user', id: owner.userId, name: 'Olive Owner' },
        target: { type: 'user', id: user.id },
        ip: expect.any(String),
        created: expect.stringMatching(ISO_MS),
      },
    ])
  })

  it('an e-mail with a membership here already, in any case: 409 email_in_use; a person of another account is invited as they are', async () => {
    const { api } = await team()
    const elsewhere = await createPerson(t, { role: 'viewer', name: 'Eli Elsewhere' })
    const first = await created(invite(api, { email: elsewhere.email.toUpperCase(), name: 'Another Name' }))
    // The person exists: the same id, their e-mail and name as they are.
    expect(first).toMatchObject({ id: elsewhere.userId, email: elsewhere.email, name: 'Eli Elsewhere' })
    expectError(await invite(api, { email: elsewhere.email }), 409, 'conflict', 'email_in_use', 'email')
    const people = await t.db
      .selectFrom('users')
      .select('id')
      .where('email_key', '=', elsewhere.email.toLowerCase())
      .execute()
    expect(people).toHaveLength(1)
  })

  it('refuses empty sites, unknown locations and operators, another mode’s operator, and an unknown role', async () => {
    const { owner, api, liveKey } = await team()
    const other = await team()
    expectError(
      await invite(api, { location_ids: [] }),
      422,
      'validation_error',
      'invalid_value',
      'location_ids',
    )
    expectError(
      await invite(api, { location_ids: [other.hq.id] }),
      422,
      'validation_error',
      'unknown_location',
      'location_ids',
    )
    expectError(
      await invite(api, { operator_id: other.operator.id }),
      422,
      'validation_error',
      'unknown_operator',
      'operator_id',
    )
    const liveOperator = await created(liveKey.post<Operator>('/v1/operators', { ident: uniq('L') }))
    expectError(
      await invite(api, { operator_id: liveOperator.id }),
      422,
      'validation_error',
      'cross_mode_reference',
      'operator_id',
    )
    expectError(await invite(api, { role: 'superuser' }), 422, 'validation_error', 'invalid_value', 'role')
    expectError(
      await invite(api, { email: 'not-an-email' }),
      422,
      'validation_error',
      'invalid_value',
      'email',
    )
    expectError(await invite(api, { location_ids: undefined }), 422, 'validation_error', 'missing_param')
    // Nothing of the refused invitations was made.
    const members = await t.db
      .selectFrom('memberships')
      .select('user_id')
      .where('account_id', '=', owner.accountId)
      .execute()
    expect(members.map((m) => m.user_id)).toEqual([owner.userId])
  })

  it('only owners, unrestricted: an admin lacks users:*, an owner held to sites is refused, and no key holds users:*', async () => {
    const { owner, testKey, hq } = await team()
    const admin = await createPerson(t, { account: owner.account, role: 'admin' })
    const adminApi = (await signIn(t, admin)).client(admin.accountId)
    expectError(await adminApi.get('/v1/users'), 403, 'insufficient_scope', 'missing_scope')
    expectError(await invite(adminApi, {}), 403, 'insufficient_scope', 'missing_scope')
    expectError(await adminApi.get('/v1/audit-log'), 403, 'insufficient_scope', 'missing_scope')
    const restricted = await createPerson(t, { account: owner.account, role: 'owner', locationIds: [hq.id] })
    const restrictedApi = (await signIn(t, restricted)).client(restricted.accountId)
    expectError(await restrictedApi.get('/v1/users'), 403, 'insufficient_scope', 'location_restricted')
    expectError(await invite(restrictedApi, {}), 403, 'insufficient_scope', 'location_restricted')
    expectError(await testKey.get('/v1/users'), 403, 'insufficient_scope', 'missing_scope')
    expectError(await testKey.get('/v1/audit-log'), 403, 'insufficient_scope', 'missing_scope')
    expectError(await t.client(undefined).get('/v1/users'), 401, 'authentication_error')
  })

  it('an Idempotency-Key replays the invitation: one membership, one link', async () => {
    const { api } = await team()
    const body = { email: `${uniq('idem')}@example.com` }
    const headers = { 'idempotency-key': uniq('invite') }
    const first = await invite(api, body, headers)
    const second = await invite(api, body, headers)
    expect(first.status).toBe(201)
    expect(second.status).toBe(201)
    expect(second.headers['idempotent-replayed']).toBe('true')
    // The link's token is kept hashed only: the replay cannot show it, and no stored answer holds it.
    expect(first.body.invite_url).toMatch(/#token=/)
    expect(second.body).toEqual({ ...first.body, invite_url: null })
    const stored = await t.db.selectFrom('idempotency_keys').select('response_body').execute()
    const token = String(first.body.invite_url).split('#token=')[1] ?? 'none'
    expect(stored.some((row) => row.response_body?.includes(token))).toBe(false)
    const tokens = await t.db
      .selectFrom('user_tokens')
      .select('token_hash')
      .where('user_id', '=', first.body.id)
      .execute()
    expect(tokens).toHaveLength(1)
  })

  describe('changes', () => {
    it('PATCH changes name, role, sites and worker record; the same values change nothing; yourself: 403 self_change', async () => {
      const { owner, api, hq, operator } = await team()
      const member = await createPerson(t, { account: owner.account, role: 'viewer', name: 'Vic Viewer' })
      clock.advance(1000)
      const changed = await ok(
        api.patch<User>(`/v1/users/${member.userId}`, {
          name: 'Vic Manager',
          role: 'manager',
          location_ids: [hq.id],
          operator_id: operator.id,
        }),
      )
      expect(changed).toMatchObject({
        id: member.userId,
        name: 'Vic Manager',
        role: 'manager',
        location_ids: [hq.id],
        operator_id: operator.id,
        status: 'active',
      })
      expect(Date.parse(changed.updated)).toBeGreaterThan(Date.parse(changed.created))
      const again = await ok(
        api.patch<User>(`/v1/users/${member.userId}`, { role: 'manager', location_ids: [hq.id] }),
      )
      expect(again).toEqual(changed)
      const back = await ok(
        api.patch<User>(`/v1/users/${member.userId}`, { location_ids: null, operator_id: null }),
      )
      expect(back).toMatchObject({ location_ids: null, operator_id: null })

      for (const [param, value] of [
        ['role', 'admin'],
        ['location_ids', [hq.id]],
        ['operator_id', operator.id],
      ] as const) {
        expectError(
          await api.patch(`/v1/users/${owner.userId}`, { [param]: value }),
          403,
          'insufficient_scope',
          'self_change',
          param,
        )
      }
      // Your own name, and your own role unchanged, are yours to send.
      expect(
        await ok(api.patch<User>(`/v1/users/${owner.userId}`, { name: 'Olive O.', role: 'owner' })),
      ).toMatchObject({
        name: 'Olive O.',
        role: 'owner',
      })
      expectError(
        await api.post(`/v1/users/${owner.userId}/deactivate`),
        403,
        'insufficient_scope',
        'self_change',
      )
      expectError(
        await api.post(`/v1/users/${owner.userId}/reactivate`),
        403,
        'insufficient_scope',
        'self_change',
      )

      const types = (
        await ok(api.get<List<{ type: string }>>(`/v1/audit-log?user_id=${member.userId}`))
      ).data.map((e) => e.type)
      expect(types).toEqual(['user_updated', 'user_updated'])
      expectError(await api.patch('/v1/users/usr_missing', { name: 'X' }), 404, 'not_found')
    })

    it('a person of another account is not found here', async () => {
      const { api } = await team()
      const stranger = await createPerson(t, { role: 'viewer' })
      for (const res of [
        await api.get(`/v1/users/${stranger.userId}`),
        await api.patch(`/v1/users/${stranger.userId}`, { name: 'X' }),
        await api.post(`/v1/users/${stranger.userId}/deactivate`),
        await api.post(`/v1/users/${stranger.userId}/sign-out-everywhere`),
      ])
        expectError(res, 404, 'not_found', 'resource_missing')
    })

    it('the last active owner cannot be demoted or deactivated, even by an owner whose own demotion is not yet seen (5 s)', async () => {
      const { owner, api } = await team()
      const second = await createPerson(t, { account: owner.account, role: 'owner' })
      const secondApi = (await signIn(t, second)).client(second.accountId)
      // The second owner's session is cached as an owner's.
      await ok(secondApi.get('/v1/users'))
      await ok(api.patch(`/v1/users/${second.userId}`, { role: 'admin' }))
      expectError(
        await secondApi.patch(`/v1/users/${owner.userId}`, { role: 'admin' }),
        409,
        'conflict',
        'last_owner',
      )
      expectError(await secondApi.post(`/v1/users/${owner.userId}/deactivate`), 409, 'conflict', 'last_owner')
      clock.advance(SESSION_CACHE_TTL_MS + 1)
      expectError(await secondApi.get('/v1/users'), 403, 'insufficient_scope', 'missing_scope')
      expect(await ok(api.get<User>(`/v1/users/${owner.userId}`))).toMatchObject({
        role: 'owner',
        status: 'active',
      })
    })

    it('two owners demoting each other at once: one passes, the other is refused (last_owner)', async () => {
      const { owner, api } = await team()
      const second = await createPerson(t, { account: owner.account, role: 'owner' })
      const secondApi = (await signIn(t, second)).client(second.accountId)
      await ok(secondApi.get('/v1/users'))
      await ok(api.get('/v1/users'))
      const answers = await Promise.all([
        api.patch(`/v1/users/${second.userId}`, { role: 'admin' }),
        secondApi.patch(`/v1/users/${owner.userId}`, { role: 'admin' }),
      ])
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409])
      const owners = await t.db
        .selectFrom('memberships')
        .select('user_id')
        .where('account_id', '=', owner.accountId)
        .where('role', '=', 'owner')
        .execute()
      expect(owners).toHaveLength(1)
    })

    it('deactivation: the person acts here no more within 5 s; their last active membership ends their sessions; reactivation undoes it', async () => {
      const { owner, api } = await team()
      const member = await createPerson(t, { account: owner.account, role: 'manager' })
      const memberBrowser = await signIn(t, member)
      const memberApi = memberBrowser.client(member.accountId)
      await ok(memberApi.get('/v1/operators'))
      const deactivated = await ok(api.post<User>(`/v1/users/${member.userId}/deactivate`))
      expect(deactivated).toMatchObject({ id: member.userId, status: 'deactivated' })
      expect(await ok(api.post<User>(`/v1/users/${member.userId}/deactivate`))).toEqual(deactivated)
      const sessions = await t.db
        .selectFrom('auth_sessions')
        .select('ended_at')
        .where('user_id', '=', member.userId)
        .execute()
      expect(sessions.every((s) => s.ended_at !== null)).toBe(true)
      clock.advance(SESSION_CACHE_TTL_MS + 1)
      expectError(await memberApi.get('/v1/operators'), 401, 'authentication_error')
      // Deactivated: a sign-in finds no account to act in.
      const refused = await t.client(undefined).request({
        method: 'POST',
        url: '/v1/auth/sign-in',
        payload: { email: member.email, password: member.password },
        remoteAddress: freshAddress(),
      })
      expectError(refused, 401, 'authentication_error', 'invalid_credentials')

      const reactivated = await ok(api.post<User>(`/v1/users/${member.userId}/reactivate`))
      expect(reactivated).toMatchObject({ status: 'active' })
      await ok((await signIn(t, member)).client(member.accountId).get('/v1/operators'))
      const types = (
        await ok(api.get<List<{ type: string }>>(`/v1/audit-log?user_id=${member.userId}`))
      ).data.map((e) => e.type)
      expect(types.filter((type) => type.startsWith('user_'))).toEqual([
        'user_reactivated',
        'user_deactivated',
      ])
    })

    it('deactivation keeps the sessions of a person active in another account, who acts here no more', async () => {
      const { owner, api } = await team()
      const member = await createPerson(t, { account: owner.account, role: 'manager' })
      const elsewhere = await addMembership(t, member, { role: 'viewer' })
      const browser = await signIn(t, member)
      await ok(browser.client(member.accountId).get('/v1/operators'))
      await ok(api.post(`/v1/users/${member.userId}/deactivate`))
      clock.advance(SESSION_CACHE_TTL_MS + 1)
      // An account the person is no longer active in answers as a missing account.
      expectError(
        await browser.client(member.accountId).get('/v1/operators'),
        404,
        'not_found',
        'resource_missing',
      )
      await ok(browser.client(elsewhere.accountId).get('/v1/operators'))
    })

    it('an invitation deactivated before it was accepted: its link stops working, and reactivation makes it invited again', async () => {
      const { api } = await team()
      const user = await created(invite(api, {}))
      await ok(api.post(`/v1/users/${user.id}/deactivate`))
      const accept = await t.client(undefined).request({
        method: 'POST',
        url: '/v1/auth/accept-invite',
        payload: { token: tokenOf(user.invite_url), password: 'a long enough password' },
        remoteAddress: freshAddress(),
      })
      expectError(accept, 422, 'validation_error', 'invalid_value', 'token')
      expect(await ok(api.post<User>(`/v1/users/${user.id}/reactivate`))).toMatchObject({ status: 'invited' })
    })

    it('/invite: a new link voids the old one, for invited users only (409 not_invited); the link activates the membership', async () => {
      const { api } = await team()
      const user = await created(invite(api, {}))
      const again = await ok(api.post<Invited>(`/v1/users/${user.id}/invite`))
      expect(again.invite_url).not.toBe(user.invite_url)
      const accept = (url: string) =>
        t.client(undefined).request({
          method: 'POST',
          url: '/v1/auth/accept-invite',
          payload: { token: tokenOf(url), password: 'a long enough password' },
          remoteAddress: freshAddress(),
        })
      expectError(await accept(user.invite_url), 422, 'validation_error', 'invalid_value', 'token')
      expect((await accept(again.invite_url)).status).toBe(200)
      expect(await ok(api.get<User>(`/v1/users/${user.id}`))).toMatchObject({ status: 'active' })
      expectError(await api.post(`/v1/users/${user.id}/invite`), 409, 'conflict', 'not_invited')
    })

    it('sign-out-everywhere ends every session of the person (their cookies are refused within 5 s)', async () => {
      const { owner, api } = await team()
      const member = await createPerson(t, { account: owner.account, role: 'viewer' })
      const browsers: SignedIn[] = [await signIn(t, member), await signIn(t, member)]
      for (const browser of browsers) await ok(browser.client(member.accountId).get('/v1/operators'))
      expect(await ok(api.post<User>(`/v1/users/${member.userId}/sign-out-everywhere`))).toMatchObject({
        id: member.userId,
        status: 'active',
      })
      clock.advance(SESSION_CACHE_TTL_MS + 1)
      for (const browser of browsers)
        expectError(await browser.client(member.accountId).get('/v1/operators'), 401, 'authentication_error')
    })
  })

  it('no link token in the log, the audit log or the events: only the create and invite answers carry one', async () => {
    const { owner, api } = await team()
    const user = await created(invite(api, {}))
    const again = await ok(api.post<Invited>(`/v1/users/${user.id}/invite`))
    const tokens = [tokenOf(user.invite_url), tokenOf(again.invite_url)]
    watch.remember(...tokens)
    expect(watch.lines.length).toBeGreaterThan(0)
    expect(watch.leaked()).toEqual([])
    const audit = await t.db
      .selectFrom('audit_log')
      .selectAll()
      .where('account_id', '=', owner.accountId)
      .execute()
    const events = await t.db
      .selectFrom('events')
      .selectAll()
      .where('account_id', '=', owner.accountId)
      .execute()
    expect(watch.leaked([JSON.stringify(audit), JSON.stringify(events)])).toEqual([])
    const read = await ok(api.get(`/v1/users/${user.id}`))
    const log = await ok(api.get('/v1/audit-log'))
    expect(watch.leaked([JSON.stringify(read), JSON.stringify(log)])).toEqual([])
  })

  describe('GET /v1/users and GET /v1/audit-log', () => {
    it('pages newest first and filters by status and role', async () => {
      const { owner, api } = await team()
      const people: Person[] = []
      for (const role of ['viewer', 'manager', 'viewer'] as const)
        people.push(await createPerson(t, { account: owner.account, role }))
      const invited = await created(invite(api, { role: 'payroll' }))
      const ids = [invited.id, ...people.map((p) => p.userId).reverse(), owner.userId]
      const first = await ok(api.get<List<User>>('/v1/users?limit=2'))
      expect(first.has_more).toBe(true)
      const rest = await ok(
        api.get<List<User>>(`/v1/users?limit=10&cursor=${encodeURIComponent(first.next_cursor ?? '')}`),
      )
      expect([...first.data, ...rest.data].map((u) => u.id)).toEqual(ids)
      expect(rest.has_more).toBe(false)
      const viewers = await ok(api.get<List<User>>('/v1/users?role=viewer'))
      expect(viewers.data.map((u) => u.id)).toEqual([people[2]?.userId, people[0]?.userId])
      const pending = await ok(api.get<List<User>>('/v1/users?status=invited'))
      expect(pending.data.map((u) => u.id)).toEqual([invited.id])
      expectError(await api.get('/v1/users?status=gone'), 422, 'validation_error', 'invalid_value', 'status')
    })

    it('lists this account’s entries only, newest first, by type and by person as actor or target, paged', async () => {
      const { owner, api } = await team()
      const other = await team()
      await created(invite(other.api, {}))
      const member = await createPerson(t, { account: owner.account, role: 'owner', name: 'Max Member' })
      const memberApi = (await signIn(t, member)).client(member.accountId)
      const invitedByMember = await created(invite(memberApi, {}))
      const invitedByOwner = await created(invite(api, {}))
      await ok(api.patch(`/v1/users/${member.userId}`, { name: 'Max M.' }))

      const all = await ok(
        api.get<List<{ type: string; actor: { id: string }; target: { id: string } | null }>>(
          '/v1/audit-log',
        ),
      )
      const mine = all.data.filter((e) => e.type.startsWith('user_'))
      expect(mine.map((e) => [e.type, e.actor.id, e.target?.id])).toEqual([
        ['user_updated', owner.userId, member.userId],
        ['user_invited', owner.userId, invitedByOwner.id],
        ['user_invited', member.userId, invitedByMember.id],
      ])
      // The member as actor (an invitation) or as target (the rename, their sign-in).
      const byMember = await ok(
        api.get<List<{ id: string; type: string }>>(`/v1/audit-log?user_id=${member.userId}`),
      )
      expect(byMember.data.map((e) => e.type)).toEqual(['user_updated', 'user_invited', 'sign_in'])
      const invitations = await ok(
        api.get<List<{ type: string }>>(`/v1/audit-log?user_id=${member.userId}&type=user_invited`),
      )
      expect(invitations.data.map((e) => e.type)).toEqual(['user_invited'])
      const page = await ok(api.get<List<{ id: string }>>(`/v1/audit-log?user_id=${member.userId}&limit=2`))
      expect(page.has_more).toBe(true)
      const next = await ok(
        api.get<List<{ id: string }>>(
          `/v1/audit-log?user_id=${member.userId}&limit=2&cursor=${encodeURIComponent(page.next_cursor ?? '')}`,
        ),
      )
      expect([...page.data, ...next.data].map((e) => e.id)).toEqual(byMember.data.map((e) => e.id))
      expectError(
        await api.get('/v1/audit-log?type=unknown'),
        422,
        'validation_error',
        'invalid_value',
        'type',
      )
    })
  })
})

/** A mail server of the test's own: every message it receives, its recipients and text body. */
async function startMailbox() {
  const mails: Array<{ to: string[]; raw: string; text: string }> = []
  const server = new SMTPServer({
    // Plain SMTP on loopback: no STARTTLS (a self-signed certificate nodemailer would refuse), no login.
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw, text: bodyText(raw) })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address() as AddressInfo
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** A single-part message's body, quoted-printable decoded (how nodemailer sends long lines). */
function bodyText(raw: string): string {
  const [head = '', ...rest] = raw.split('\r\n\r\n')
  const body = rest.join('\r\n\r\n')
  if (!/content-transfer-encoding:\s*quoted-printable/i.test(head)) return body
  return Buffer.from(
    body
      .replace(/=\r\n/g, '')
      .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    'latin1',
  ).toString('utf8')
}

describe('invitations by e-mail (SMTP_URL)', () => {
  let t: TestApp
  let mailbox: Awaited<ReturnType<typeof startMailbox>>

  beforeAll(async () => {
    mailbox = await startMailbox()
    t = await buildTestApp({ smtpUrl: mailbox.url, smtpFrom: 'Attendance <attendance@example.com>' })
  })
  afterAll(async () => {
    await t.close()
    await mailbox.close()
  })

  it('e-mails the invitation and each new link to the person, once per create (not again on a replay)', async () => {
    const owner = await createPerson(t, { role: 'owner', name: 'Olive Owner' })
    const api = (await signIn(t, owner)).client(owner.accountId)
    const email = `${uniq('mail')}@example.com`
    const body = { email, name: 'Mia Mail', role: 'viewer', location_ids: null }
    const headers = { 'idempotency-key': uniq('invite') }
    const user = await created(api.post<Invited>('/v1/users', body, headers))
    const mail = await waitUntil(
      () => mailbox.mails.find((m) => m.to.includes(email)),
      (found) => found !== undefined,
    )
    expect(mail.raw).toMatch(new RegExp(`^Subject: You are invited to ${owner.account}`, 'm'))
    expect(mail.raw).toMatch(/^From: Attendance <attendance@example\.com>/m)
    expect(mail.text).toContain(user.invite_url)
    expect(mail.text).toContain('Olive Owner invited you')
    // A replay answers the stored invitation and sends nothing.
    expect((await api.post('/v1/users', body, headers)).headers['idempotent-replayed']).toBe('true')
    const again = await ok(api.post<Invited>(`/v1/users/${user.id}/invite`))
    await waitUntil(
      () => mailbox.mails.filter((m) => m.to.includes(email)),
      (found) => found.length === 2,
    )
    const second = mailbox.mails.filter((m) => m.to.includes(email))[1]
    expect(second?.text).toContain(again.invite_url)
  })

  it('a mail server that does not answer fails no invitation: the link is in the answer, the failure logged without it', async () => {
    const lines: string[] = []
    const down = await buildTestApp(
      { smtpUrl: `smtp://127.0.0.1:${await freePort()}`, logLevel: 'warn' },
      { database: t.database, logStream: { write: (line) => lines.push(line) } },
    )
    try {
      const owner = await createPerson(down, { role: 'owner' })
      const api = (await signIn(down, owner)).client(owner.accountId)
      const user = await created(
        api.post<Invited>('/v1/users', {
          email: `${uniq('down')}@example.com`,
          name: 'Dan Down',
          role: 'viewer',
          location_ids: null,
        }),
      )
      const failure = await waitUntil(
        () => lines.find((line) => line.includes('could not be e-mailed')),
        (line) => line !== undefined,
      )
      expect(failure).toContain(user.id)
      expect(lines.join('')).not.toContain(tokenOf(user.invite_url))
      expect(user.invite_url).toMatch(/\/console\/accept-invite#token=/)
    } finally {
      await down.app.close()
    }
  })
})
