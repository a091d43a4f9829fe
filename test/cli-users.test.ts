import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashSecret } from '../src/modules/keys/service.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { expectError, type List, type Location, uniq } from './helpers/assertions.js'
import { freshAddress } from './helpers/people.js'
import { builtScript, killAll, type RunResult, run, START_MS } from './helpers/process.js'
import { created, ok } from './helpers/world.js'

/**
 * `npm run cli -- users invite` and `users reset-password` (decisions.md, "Owner set-up",
 * "Password reset"), run as `npm run cli` runs them (`node dist/src/cli.js`), on the database of an
 * app that then takes the links over HTTP.
 */

const PUBLIC_URL = 'https://people.example.com'
const ONE_COMMAND = START_MS + 10_000

interface Invitation {
  user: {
    object: 'user'
    id: string
    email: string
    name: string
    role: string
    location_ids: string[] | null
    operator_id: string | null
    status: string
  }
  invite_url: string
}

let t: TestApp

function cli(args: string[]): Promise<RunResult> {
  return run(process.execPath, [builtScript('cli'), ...args], {
    env: { DATABASE_URL: t.database.url, PUBLIC_URL },
  })
}

/** One line of JSON on stdout, exit 0. */
function oneJsonLine<T>(result: RunResult): T {
  expect(result.code, result.stderr).toBe(0)
  const lines = result.stdout.trimEnd().split('\n')
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0] ?? '') as T
}

/** A refused command: exit 2 (a usage error), nothing on stdout, one line on stderr, no stack. */
function expectUsageError(result: RunResult, message: RegExp): void {
  expect(result.code, result.stdout).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr).toMatch(message)
  expect(result.stderr.trim().split('\n')).toHaveLength(1)
}

/** The token of a link (`…#token=<token>`). */
const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, '')

function acceptInvite(token: string, body: Record<string, unknown> = {}) {
  return t
    .client(undefined)
    .request<{ user: { id: string }; accounts: Array<{ id: string; role: string }> }>({
      method: 'POST',
      url: '/v1/auth/accept-invite',
      payload: { token, password: 'a long enough password', ...body },
      remoteAddress: freshAddress(),
    })
}

beforeAll(async () => {
  t = await buildTestApp({ publicUrl: PUBLIC_URL })
})
afterAll(async () => {
  await killAll()
  await t.close()
})

describe('cli users invite', () => {
  it('prints { user, invite_url } as one JSON line; the link makes the person active in the account, as the role', {
    timeout: ONE_COMMAND,
  }, async () => {
    const account = uniq('acme')
    const email = `${uniq('Ada')}@example.com`
    const invited = oneJsonLine<Invitation>(
      await cli(['users', 'invite', '--account', account, '--email', email, '--role', 'owner', '--json']),
    )
    expect(Object.keys(invited).sort()).toEqual(['invite_url', 'user'])
    expect(invited.user).toMatchObject({
      object: 'user',
      email,
      // Without --name, the e-mail's local part until the person gives theirs.
      name: email.slice(0, email.indexOf('@')),
      role: 'owner',
      location_ids: null,
      operator_id: null,
      status: 'invited',
    })
    expect(invited.invite_url).toMatch(
      /^https:\/\/people\.example\.com\/console\/accept-invite#token=[\w-]{43,}$/,
    )
    const stored = await t.db
      .selectFrom('user_tokens')
      .select(['kind', 'token_hash'])
      .where('user_id', '=', invited.user.id)
      .execute()
    expect(stored).toEqual([{ kind: 'invite', token_hash: hashSecret(tokenOf(invited.invite_url)) }])

    const accepted = await acceptInvite(tokenOf(invited.invite_url), { name: 'Ada Lovelace' })
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200)
    expect(accepted.body.user.id).toBe(invited.user.id)
    expect(accepted.body.accounts).toEqual([expect.objectContaining({ name: account, role: 'owner' })])

    // The service itself is the invitation's actor in the account's log.
    const log = await t.db
      .selectFrom('audit_log')
      .select(['type', 'actor_type', 'actor_id', 'target_id', 'ip'])
      .where('type', '=', 'user_invited')
      .where('target_id', '=', invited.user.id)
      .execute()
    expect(log).toEqual([
      {
        type: 'user_invited',
        actor_type: 'service',
        actor_id: 'service',
        target_id: invited.user.id,
        ip: null,
      },
    ])
  })

  it("holds the person to --locations (the account's, of either mode), and prints the link in text without --json", {
    timeout: 2 * ONE_COMMAND,
  }, async () => {
    const account = uniq('sites')
    const test = t.client((await t.key({ account, mode: 'test' })).secret)
    const live = t.client((await t.key({ account, mode: 'live' })).secret)
    const hq = await created(test.post<Location>('/v1/locations', { name: 'HQ', timezone: 'UTC' }))
    const depot = await created(live.post<Location>('/v1/locations', { name: 'Depot', timezone: 'UTC' }))
    const email = `${uniq('site')}@example.com`
    const args = ['users', 'invite', '--account', account, '--email', email, '--role', 'manager']
    const text = await cli([...args, '--locations', `${hq.id},${depot.id}`, '--name', 'Sam Site'])
    expect(text.code, text.stderr).toBe(0)
    const [said, link] = text.stdout.trimEnd().split('\n')
    expect(said).toMatch(new RegExp(`^Invited ${email} to ${account} as manager \\(usr_\\w+\\)`))
    expect(link).toMatch(/^https:\/\/people\.example\.com\/console\/accept-invite#token=/)
    const row = await t.db
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select(['memberships.location_ids', 'users.name'])
      .where('users.email', '=', email)
      .executeTakeFirstOrThrow()
    expect(row).toEqual({ location_ids: `${hq.id},${depot.id}`, name: 'Sam Site' })

    expectUsageError(await cli([...args, '--locations', 'loc_unknown']), /No such location: 'loc_unknown'/)
  })

  it('refuses, with exit 2 and one line, an e-mail already in the account (any case), a bad role or e-mail, a missing option', {
    timeout: 6 * ONE_COMMAND,
  }, async () => {
    const account = uniq('dup')
    const email = `${uniq('dup')}@example.com`
    oneJsonLine(
      await cli(['users', 'invite', '--account', account, '--email', email, '--role', 'viewer', '--json']),
    )
    expectUsageError(
      await cli([
        'users',
        'invite',
        '--account',
        account,
        '--email',
        email.toUpperCase(),
        '--role',
        'viewer',
      ]),
      /already belongs to this account/,
    )
    expectUsageError(
      await cli(['users', 'invite', '--account', account, '--email', 'x@example.com', '--role', 'boss']),
      /--role must be one of owner, admin, payroll, manager, viewer/,
    )
    expectUsageError(
      await cli(['users', 'invite', '--account', account, '--email', 'not-an-address', '--role', 'viewer']),
      /--email must be an e-mail address/,
    )
    expectUsageError(
      await cli(['users', 'invite', '--email', 'x@example.com', '--role', 'viewer']),
      /Missing --account/,
    )
    // An unknown command is told with the usage, which lists the users commands.
    const unknown = await cli(['users', 'remove'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/^Unknown command: users remove/)
    expect(unknown.stderr).toContain('users invite --account <name> --email <e> --role')
    expect(unknown.stderr).toContain('users reset-password --email <e>')
  })
})

describe('cli users reset-password', () => {
  it("prints { reset_url }: a link (1 hour) that sets the person's password, which the person then signs in with", {
    timeout: 2 * ONE_COMMAND,
  }, async () => {
    const account = uniq('reset')
    const email = `${uniq('Rae')}@example.com`
    const invited = oneJsonLine<Invitation>(
      await cli(['users', 'invite', '--account', account, '--email', email, '--role', 'viewer', '--json']),
    )
    expect((await acceptInvite(tokenOf(invited.invite_url))).status).toBe(200)

    const printed = oneJsonLine<{ reset_url: string }>(
      await cli(['users', 'reset-password', '--email', email.toUpperCase(), '--json']),
    )
    expect(Object.keys(printed)).toEqual(['reset_url'])
    expect(printed.reset_url).toMatch(
      /^https:\/\/people\.example\.com\/console\/reset-password#token=[\w-]{43,}$/,
    )
    const stored = await t.db
      .selectFrom('user_tokens')
      .select(['kind', 'expires_at', 'created_at'])
      .where('token_hash', '=', hashSecret(tokenOf(printed.reset_url)))
      .executeTakeFirstOrThrow()
    expect(stored.kind).toBe('reset')
    expect(Number(stored.expires_at) - Number(stored.created_at)).toBe(60 * 60 * 1000)

    const password = 'a brand new password'
    const reset = await t.client(undefined).request({
      method: 'POST',
      url: '/v1/auth/reset-password',
      payload: { token: tokenOf(printed.reset_url), password },
      remoteAddress: freshAddress(),
    })
    expect(reset.status, JSON.stringify(reset.body)).toBeLessThan(300)
    const signIn = await t.client(undefined).request({
      method: 'POST',
      url: '/v1/auth/sign-in',
      payload: { email, password },
      remoteAddress: freshAddress(),
    })
    expect(signIn.status, JSON.stringify(signIn.body)).toBe(200)
    // Used once.
    const again = await t.client(undefined).request({
      method: 'POST',
      url: '/v1/auth/reset-password',
      payload: { token: tokenOf(printed.reset_url), password: 'yet another password' },
      remoteAddress: freshAddress(),
    })
    expectError(again, 422, 'validation_error', 'invalid_value', 'token')
  })

  it('an e-mail nobody has: exit 2, nothing printed; no --email: exit 2', {
    timeout: 2 * ONE_COMMAND,
  }, async () => {
    expectUsageError(
      await cli(['users', 'reset-password', '--email', `${uniq('nobody')}@example.com`, '--json']),
      /No person has the e-mail/,
    )
    expectUsageError(await cli(['users', 'reset-password']), /Missing --email/)
  })
})

describe('what the command line made, over HTTP', () => {
  it('an owner made by the command line lists the account’s people', { timeout: ONE_COMMAND }, async () => {
    const account = uniq('owned')
    const email = `${uniq('own')}@example.com`
    const invited = oneJsonLine<Invitation>(
      await cli(['users', 'invite', '--account', account, '--email', email, '--role', 'owner', '--json']),
    )
    const accepted = await acceptInvite(tokenOf(invited.invite_url))
    expect(accepted.status).toBe(200)
    const cookie = String([accepted.headers['set-cookie']].flat()[0]).split(';')[0] ?? ''
    const csrf = (accepted.body as unknown as { csrf_token: string }).csrf_token
    const list = await ok(
      t.client(undefined).get<List<{ id: string; status: string }>>('/v1/users', {
        cookie,
        'x-csrf-token': csrf,
        'attendance-mode': 'live',
      }),
    )
    expect(list.data).toEqual([expect.objectContaining({ id: invited.user.id, status: 'active' })])
  })
})
