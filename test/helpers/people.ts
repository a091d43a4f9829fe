import { randomBytes } from 'node:crypto'
import type { InjectOptions } from 'fastify'
import type { MembershipStatus, Role } from '../../src/db/schema.js'
import { clock } from '../../src/lib/clock.js'
import { newId } from '../../src/lib/ids.js'
import { ensureAccount } from '../../src/modules/keys/service.js'
import { hashPassword } from '../../src/modules/users/passwords.js'
import { sessionCookieName } from '../../src/modules/users/sessions.js'
import { ApiClient, type ApiResponse, type TestApp } from './app.js'
import { uniq } from './assertions.js'

/** A person written straight to the tables (no API, no audit entry), with one membership. */
export interface Person {
  userId: string
  email: string
  name: string
  /** Their password in clear, to sign in with; null when they have none (invited, SSO only). */
  password: string | null
  /** The membership's account: its id and its name (as `t.key({ account })` takes it). */
  accountId: string
  account: string
}

export interface PersonOptions {
  /** The account's name (made when new); a fresh one by default. */
  account?: string
  email?: string
  name?: string
  /** Null: no password. A fresh one of 24 characters by default. */
  password?: string | null
  role?: Role
  /** The membership's sites; null (every location) by default. */
  locationIds?: readonly string[] | null
  operatorId?: string | null
  status?: MembershipStatus
}

/** A password nobody else has, long enough for the rules (12–256 characters). */
export const freshPassword = () => `pw-${randomBytes(12).toString('base64url')}`

/** Makes a person with a membership of `role` (owner by default, active, every location) in an account. */
export async function createPerson(t: TestApp, options: PersonOptions = {}): Promise<Person> {
  const email = options.email ?? `${uniq('person')}@example.com`
  const password = options.password === undefined ? freshPassword() : options.password
  const name = options.name ?? email.slice(0, email.indexOf('@'))
  const now = clock.now()
  const userId = newId('usr')
  await t.db
    .insertInto('users')
    .values({
      id: userId,
      email,
      email_key: email.toLowerCase(),
      name,
      password_hash: password === null ? null : await hashPassword(password),
      created_at: now,
      updated_at: now,
    })
    .execute()
  const person = { userId, email, name, password }
  const membership = await addMembership(t, person, options)
  return { ...person, ...membership }
}

/** Gives a person (another) membership: in `options.account` (a fresh one by default). */
export async function addMembership(
  t: TestApp,
  person: { userId: string },
  options: Pick<PersonOptions, 'account' | 'role' | 'locationIds' | 'operatorId' | 'status'> = {},
): Promise<{ accountId: string; account: string }> {
  const account = options.account ?? uniq('acct')
  const accountId = await ensureAccount(t.db, account)
  const now = clock.now()
  await t.db
    .insertInto('memberships')
    .values({
      id: newId('mbr'),
      account_id: accountId,
      user_id: person.userId,
      role: options.role ?? 'owner',
      location_ids:
        options.locationIds === undefined || options.locationIds === null
          ? null
          : options.locationIds.join(','),
      operator_id: options.operatorId ?? null,
      status: options.status ?? 'active',
      last_sign_in_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute()
  return { accountId, account }
}

/** A signed-in browser: its cookie and CSRF token, and the headers of its requests. */
export interface SignedIn {
  /** The `Cookie` request header (`<name>=<token>`). */
  cookie: string
  /** The cookie's value alone (the session's token). */
  token: string
  csrf: string
  /** The sign-in's answer (`auth_session`). */
  session: AuthSessionAnswer
  /**
   * The headers of a cookie request: the cookie, the CSRF token, `Attendance-Mode` (test by default)
   * and, when given, `Attendance-Account` (needed when the person has several accounts).
   */
  headers(accountId?: string | null, mode?: 'test' | 'live'): Record<string, string>
  /** An ApiClient (no key) that sends those headers with every request. */
  client(accountId?: string | null, mode?: 'test' | 'live'): ApiClient
}

export interface AuthSessionAnswer {
  object: 'auth_session'
  user: { id: string; email: string; name: string }
  accounts: Array<{ id: string; name: string; role: Role }>
  csrf_token: string
  expires_at: string
}

/** The cookie a Set-Cookie header sets, by name: its value, or undefined when none is set. */
export function setCookieValue(res: ApiResponse, name: string): string | undefined {
  const header = res.headers['set-cookie']
  for (const line of [header ?? []].flat()) {
    const [pair] = line.split(';')
    const at = pair?.indexOf('=') ?? -1
    if (pair !== undefined && at > 0 && pair.slice(0, at) === name)
      return decodeURIComponent(pair.slice(at + 1))
  }
  return undefined
}

/** An address of its own for each sign-in, so the limit of 20 sign-ins a minute per address never bites. */
export const freshAddress = () => `10.${[...randomBytes(3)].join('.')}`

/**
 * Signs a person in through POST /v1/auth/sign-in (from an address of its own unless given) and
 * answers the browser it makes. Fails when the sign-in does not succeed.
 */
export async function signIn(
  t: TestApp,
  person: { email: string; password: string | null },
  options: { remoteAddress?: string } = {},
): Promise<SignedIn> {
  const res = await t.client(undefined).request<AuthSessionAnswer>({
    method: 'POST',
    url: '/v1/auth/sign-in',
    payload: { email: person.email, password: person.password },
    remoteAddress: options.remoteAddress ?? freshAddress(),
  })
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${JSON.stringify(res.body)}`)
  return signedInFrom(t, res)
}

/** The browser a successful sign-in (or accept-invite) answer makes. */
export function signedInFrom(t: TestApp, res: ApiResponse<AuthSessionAnswer>): SignedIn {
  const name = sessionCookieName(t.config.publicUrl)
  const token = setCookieValue(res, name)
  if (token === undefined) throw new Error(`the answer set no ${name} cookie`)
  const cookie = `${name}=${token}`
  const csrf = res.body.csrf_token
  const headers = (accountId?: string | null, mode: 'test' | 'live' = 'test') => ({
    cookie,
    'x-csrf-token': csrf,
    'attendance-mode': mode,
    ...(accountId ? { 'attendance-account': accountId } : {}),
  })
  return {
    cookie,
    token,
    csrf,
    session: res.body,
    headers,
    client: (accountId, mode) => new HeaderClient(t, headers(accountId, mode)),
  }
}

/** An ApiClient without a key that adds fixed headers (a signed-in browser's) to each request. */
export class HeaderClient extends ApiClient {
  constructor(
    t: TestApp,
    private readonly fixed: Record<string, string>,
  ) {
    super(t.app, undefined)
  }

  override request<T>(options: InjectOptions): Promise<ApiResponse<T>> {
    return super.request<T>({
      ...options,
      headers: { ...this.fixed, ...(options.headers as Record<string, string> | undefined) },
    })
  }
}

/**
 * An app's log lines, gathered with the secrets a test used (passwords, link tokens, cookie
 * values, CSRF tokens), so that it can check none of them was ever written to the log or answered
 * where it should not be. Build the app with `{ logLevel: 'trace' }` and `{ logStream: watch.logStream }`.
 */
export class SecretWatch {
  readonly lines: string[] = []
  readonly logStream = { write: (line: string) => void this.lines.push(line) }
  private readonly secrets = new Set<string>()

  /** Adds secrets to look for (a missing one is skipped). */
  remember(...values: Array<string | null | undefined>): void {
    for (const value of values) if (value) this.secrets.add(value)
  }

  /** The remembered secrets that appear in any of `texts` (the log lines by default). */
  leaked(texts: readonly string[] = this.lines): string[] {
    return [...this.secrets].filter((secret) => texts.some((text) => text.includes(secret)))
  }

  get size(): number {
    return this.secrets.size
  }

  /** A person made and signed in, whose password, cookie and CSRF token this watch remembers. */
  async signedIn(t: TestApp, options: PersonOptions = {}): Promise<{ person: Person; browser: SignedIn }> {
    const person = await createPerson(t, options)
    const browser = await signIn(t, person)
    this.remember(person.password, browser.token, browser.csrf)
    return { person, browser }
  }
}
