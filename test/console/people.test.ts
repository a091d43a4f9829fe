import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { setKeyLabel } from '../../src/modules/keys/service.js'
import { issueToken } from '../../src/modules/users/sessions.js'
import type { List, Location } from '../helpers/assertions.js'
import {
  chromiumAvailable,
  expectUsablePage,
  SCREENS,
  sessionStorageOf,
  useConsole,
} from '../helpers/browser.js'
import { consolePage, openFromMenu } from '../helpers/console.js'
import { addMembership, createPerson, freshPassword, type Person, signIn } from '../helpers/people.js'

const ACCOUNT = 'northwind'

interface ApiKeyAnswer {
  id: string
  label: string | null
  revoked_at: string | null
  scopes: string[]
  location_ids: string[] | null
  expires_at: string | null
}

interface UserAnswer {
  id: string
  email: string
  status: string
  role: string
  location_ids: string[] | null
}

/**
 * Issue 36, item 7: people in the console, in Debian's Chromium against the real service, on a
 * desktop's screen and a phone's: signing in with e-mail and password, the header (account, person,
 * role) and the test/live switch, the Users and API keys pages of an owner, an invitation's link
 * opened in another browser, My account, what a viewer is not offered, the reset and set-up links,
 * and signing out.
 */
describe.runIf(chromiumAvailable()).each(SCREENS)('people in the console, on a $name', (screen) => {
  let owner: Person
  let viewer: Person
  let liveDepot: Location
  const inviteeEmail = 'mia@northwind.example'
  const inviteePassword = freshPassword()
  const ownerNewPassword = freshPassword()
  let invitationUrl: string
  let firstInvitationUrl: string

  const testApi = () => ui.t.client(ui.key)
  const expectUsable = (name: string) =>
    expectUsablePage(ui.page, screen, name, ['sign-in-people', 'users', 'api-key-secret'])

  const ui = useConsole(screen, {
    // Single sign-on set up, at a provider that does not answer: the link is offered, and its
    // failure comes back to the sign-in page in words.
    app: { oidc: { issuer: 'http://127.0.0.1:9/oidc', clientId: 'console', clientSecret: 'not-a-secret' } },
    account: ACCOUNT,
    keyLabel: 'Roster import',
    signIn: false,
    // A step that waits in vain fails as itself, within the test's time.
    beforeSignIn: async (page) => page.setDefaultTimeout(10_000),
    seed: async () => {
      // Each mode's own data: the switch shows one or the other.
      await testApi().post('/v1/operators', { ident: 'T-001', name: 'Tess Testdata' })
      await testApi().post('/v1/locations', { name: 'Head office', timezone: 'Europe/Paris' })
      const liveKey = await ui.t.key({ account: ACCOUNT, mode: 'live' })
      await setKeyLabel(ui.t.db, liveKey.id, 'Payroll sync')
      const live = ui.t.client(liveKey.secret)
      await live.post('/v1/operators', { ident: 'L-001', name: 'Lena Livedata' })
      liveDepot = (
        await live.post<Location>('/v1/locations', { name: 'Live depot', timezone: 'Europe/London' })
      ).body
      owner = await createPerson(ui.t, {
        account: ACCOUNT,
        email: 'olivia@northwind.example',
        name: 'Olivia Owner',
        role: 'owner',
      })
      viewer = await createPerson(ui.t, {
        account: ACCOUNT,
        email: 'victor@northwind.example',
        name: 'Victor Viewer',
        role: 'viewer',
      })
    },
    timeoutMs: 90_000,
  })

  const header = () => ui.page.locator('header.top-bar')
  const main = () => ui.page.locator('main')

  async function signInAs(page: Page, email: string, password: string): Promise<void> {
    await page.getByLabel('E-mail', { exact: true }).fill(email)
    await page.getByLabel('Password', { exact: true }).fill(password)
    await page.getByRole('button', { name: 'Sign in' }).click()
  }

  async function signOut(): Promise<void> {
    // On a phone the button is in the header's first line, not behind the menu.
    await header().getByRole('button', { name: 'Sign out' }).click()
    await ui.page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor()
  }

  it('signs a person in with e-mail and password, the API key behind its link', async () => {
    await ui.page.goto(`${ui.base}/console/`)
    await ui.page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor()
    // Integrators' key sign-in is a link away; nothing of it shows until then.
    expect(await ui.page.getByLabel('API key', { exact: true }).count()).toBe(0)
    await ui.page.getByRole('link', { name: 'Use an API key' }).waitFor()
    // SSO is set up: offered, as a navigation to the service's start of it.
    const sso = ui.page.getByRole('link', { name: 'Sign in with SSO' })
    expect(await sso.getAttribute('href')).toBe('/v1/auth/sso/start')

    await signInAs(ui.page, owner.email, 'not the password at all')
    const alert = ui.page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.innerText()).toMatch(/^The e-mail or the password is wrong\./)
    await expectUsable('sign-in-people')

    await signInAs(ui.page, owner.email, owner.password as string)
    await ui.page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
    // Who, in which account, as what, and which data: on every page, phone or desktop.
    expect(await header().locator('.account').innerText()).toBe(`Account ${ACCOUNT} · live mode`)
    expect(await header().locator('.who').innerText()).toMatch(/^Olivia Owner · Owner · My account$/)
    expect(await header().locator('.who').isVisible()).toBe(true)
    await ui.page.getByText('Live mode: real data.').waitFor()
    // The session is the HttpOnly cookie: no key in the tab's storage, none in the address.
    expect(await sessionStorageOf(ui.page)).toBe('{}')
    const cookies = await ui.page.context().cookies()
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([['att_session', true, 'Strict']])
    await expectUsable('home-person')
  })

  it('comes back from a single sign-on that failed with why, and signs in from there to the home page', async () => {
    await signOut()
    await ui.page.getByRole('link', { name: 'Sign in with SSO' }).click()
    // The provider cannot be reached: the service sends the browser back to the sign-in page.
    await ui.page.waitForURL(`${ui.base}/console/sign-in?sso_error=sso_failed`)
    const alert = ui.page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.innerText()).toMatch(/^Single sign-on did not finish/)
    await signInAs(ui.page, owner.email, owner.password as string)
    await ui.page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
    expect(new URL(ui.page.url()).pathname).toBe('/console/')
  })

  it('switches between live and test data, each request naming its mode', async () => {
    await openFromMenu(ui.page, 'Operators')
    await ui.page.getByRole('row', { name: /L-001/ }).waitFor()
    expect(await ui.page.getByRole('row', { name: /T-001/ }).count()).toBe(0)

    const modeSwitch = header().getByRole('switch', { name: 'Test data' })
    expect(await modeSwitch.isChecked()).toBe(false)
    const [request] = await Promise.all([
      ui.page.waitForRequest((r) => r.url().includes('/v1/operators?')),
      modeSwitch.click(),
    ])
    const sent = request.headers()
    expect(sent['attendance-mode']).toBe('test')
    expect(sent['attendance-account']).toBe(owner.accountId)
    expect(sent.authorization).toBeUndefined()
    await ui.page.getByRole('row', { name: /T-001/ }).waitFor()
    expect(await ui.page.getByRole('row', { name: /L-001/ }).count()).toBe(0)
    await ui.page.getByText('Test mode: you are viewing test data.').waitFor()
    expect(await header().locator('.account').innerText()).toBe(`Account ${ACCOUNT} · test mode`)
    await expectUsable('operators-person-test')

    // Kept across a reload (a choice of this browser), then back to live.
    await ui.page.reload()
    await ui.page.getByRole('row', { name: /T-001/ }).waitFor()
    await header().getByRole('switch', { name: 'Test data' }).click()
    await ui.page.getByRole('row', { name: /L-001/ }).waitFor()
  })

  it('invites a person from the Users page and copies their link', async () => {
    await ui.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.base })
    await openFromMenu(ui.page, 'Users')
    await ui.page.getByRole('heading', { name: 'Users', level: 1 }).waitFor()
    const ownRow = ui.page.getByRole('row', { name: /Olivia Owner/ })
    await ownRow.waitFor()
    // One's own role, sites and status are not one's own to change: the row offers nothing.
    expect(await ownRow.getByRole('button').count()).toBe(0)
    expect(await ownRow.getByRole('combobox').count()).toBe(0)

    const form = ui.page.getByRole('form', { name: 'Invite a person' })
    await form.getByLabel('E-mail', { exact: true }).fill(inviteeEmail)
    await form.getByLabel('Name', { exact: true }).fill('Mia Manager')
    await form.getByLabel('Role', { exact: true }).selectOption('manager')
    await form.getByRole('radio', { name: 'Only these locations' }).check()
    // The live mode's locations: the console is in live mode.
    await form.getByRole('checkbox', { name: 'Live depot' }).waitFor()
    expect(await form.getByRole('checkbox', { name: 'Live depot' }).isChecked()).toBe(true)
    await form.getByRole('button', { name: 'Invite' }).click()

    const panel = ui.page.getByRole('region', { name: 'Invitation link for Mia Manager' })
    await panel.waitFor()
    invitationUrl = await panel.getByLabel(`Invitation link for ${inviteeEmail}`).inputValue()
    // Where PUBLIC_URL says the service is (the test's app keeps the default, not its port).
    expect(invitationUrl).toMatch(
      new RegExp(`^${ui.t.config.publicUrl}/console/accept-invite#token=[A-Za-z0-9_-]{20,}$`),
    )
    await panel.getByRole('button', { name: 'Copy' }).click()
    await panel.getByText('Copied.').waitFor()
    expect(await ui.page.evaluate<string>('navigator.clipboard.readText()')).toBe(invitationUrl)
    await expectUsable('users-invite-link')

    await panel.getByRole('button', { name: 'Done' }).click()
    const row = ui.page.getByRole('row', { name: /Mia Manager/ })
    await row.waitFor()
    expect(await row.innerText()).toMatch(/Live depot[\s\S]*invited[\s\S]*never/)
    expect(await row.getByRole('combobox', { name: 'Role of Mia Manager' }).inputValue()).toBe('manager')
    const users = await (await signIn(ui.t, owner as { email: string; password: string }))
      .client(owner.accountId, 'live')
      .get<List<UserAnswer>>('/v1/users')
    expect(users.body.data.find((u) => u.email === inviteeEmail)).toMatchObject({
      role: 'manager',
      status: 'invited',
      location_ids: [liveDepot.id],
    })
    // The link is shown once: not in the page any more.
    expect(await main().innerText()).not.toContain(invitationUrl)
    await expectUsable('users')
  })

  it('says in words why an invitation is refused, under its field', async () => {
    const form = ui.page.getByRole('form', { name: 'Invite a person' })
    await form.getByLabel('E-mail', { exact: true }).fill(viewer.email.toUpperCase())
    await form.getByLabel('Name', { exact: true }).fill('Victor again')
    await form.getByRole('button', { name: 'Invite' }).click()
    const refusal = form.locator('#invite-email-error')
    await refusal.waitFor()
    expect(await refusal.innerText()).toBe('A person with this e-mail already belongs to this account.')
    expect(await form.getByLabel('E-mail', { exact: true }).getAttribute('aria-invalid')).toBe('true')
    await form.getByLabel('E-mail', { exact: true }).fill('')
    await form.getByLabel('Name', { exact: true }).fill('')
  })

  it('sends an invitation a new link, which voids the first', async () => {
    firstInvitationUrl = invitationUrl
    await ui.page.getByRole('button', { name: 'New link for Mia Manager' }).click()
    const panel = ui.page.getByRole('region', { name: 'Invitation link for Mia Manager' })
    await panel.waitFor()
    invitationUrl = await panel.getByLabel(`Invitation link for ${inviteeEmail}`).inputValue()
    expect(invitationUrl).toMatch(/\/console\/accept-invite#token=/)
    expect(invitationUrl).not.toBe(firstInvitationUrl)
    await panel.getByRole('button', { name: 'Done' }).click()
    expect(await main().innerText()).not.toContain(invitationUrl)
  })

  it('lets the invitee open the link in another browser, choose a password and land signed in', async () => {
    const other = await consolePage(ui.browser, screen)
    other.page.setDefaultTimeout(10_000)
    const open = async (url: string) => {
      const link = new URL(url)
      await other.page.goto(`${ui.base}${link.pathname}${link.hash}`)
    }
    try {
      // The first link no longer works, and the page says so.
      await open(firstInvitationUrl)
      await other.page.getByLabel('Password', { exact: true }).fill(inviteePassword)
      await other.page.getByRole('button', { name: 'Join and sign in' }).click()
      expect(await other.page.getByRole('alert').innerText()).toMatch(
        /^This link is unknown, used or expired/,
      )

      await open(invitationUrl)
      await other.page.getByRole('heading', { name: 'Join the attendance console', level: 1 }).waitFor()
      // An invitation knows its e-mail: only the set-up link asks for it.
      expect(await other.page.getByLabel(/Your e-mail/).count()).toBe(0)
      await other.page.getByLabel('Your name', { exact: true }).fill('Mia Manager-Jones')
      await other.page.getByLabel('Password', { exact: true }).fill(inviteePassword)
      await other.page.getByRole('button', { name: 'Join and sign in' }).click()
      await other.page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
      // The token is gone from the address once used.
      expect(new URL(other.page.url()).pathname).toBe('/console/')
      expect(other.page.url()).not.toContain('token')
      const otherHeader = other.page.locator('header.top-bar')
      expect(await otherHeader.locator('.who').innerText()).toMatch(/^Mia Manager-Jones · Manager · /)
      // A manager: no people, no keys, no webhooks in the menu; devices to read, not to add.
      const menu = other.page.getByRole('navigation', { name: 'Main' })
      for (const absent of ['Users', 'API keys', 'Webhooks']) {
        expect(await menu.getByRole('link', { name: absent, exact: true }).count()).toBe(0)
      }
      await openFromMenu(other.page, 'Devices')
      await other.page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor()
      await other.page.getByText('No device yet.').waitFor()
      expect(await other.page.getByRole('form', { name: 'New device' }).count()).toBe(0)
      // The refused first link is the one failed request.
      expect(other.errors.filter((text) => !/status of 422/.test(text))).toEqual([])
    } finally {
      await other.page.context().close()
    }
    // The owner's list says so.
    await ui.page.reload()
    const row = ui.page.getByRole('row', { name: /Mia Manager-Jones/ })
    await row.waitFor()
    expect(await row.innerText()).toMatch(/active/)
  })

  it("changes a person's role and sites, deactivates and reactivates them", async () => {
    const row = ui.page.getByRole('row', { name: /Mia Manager-Jones/ })
    const asApi = async () => {
      const users = await (await signIn(ui.t, owner as { email: string; password: string }))
        .client(owner.accountId, 'live')
        .get<List<UserAnswer>>('/v1/users')
      return users.body.data.find((u) => u.email === inviteeEmail)
    }
    await row.getByRole('combobox', { name: 'Role of Mia Manager-Jones' }).selectOption('payroll')
    await expect.poll(async () => (await asApi())?.role).toBe('payroll')

    await row.getByRole('button', { name: 'Sites of Mia Manager-Jones' }).click()
    const sites = ui.page.getByRole('form', { name: 'Sites of Mia Manager-Jones' })
    await sites.getByRole('radio', { name: 'Every location' }).check()
    await sites.getByRole('button', { name: 'Save the sites' }).click()
    await row.getByText('Every location').waitFor()
    expect((await asApi())?.location_ids).toBeNull()

    await row.getByRole('button', { name: 'Deactivate Mia Manager-Jones' }).click()
    await ui.page.getByRole('button', { name: 'Deactivate', exact: true }).click()
    await row.getByText('deactivated').waitFor()
    expect((await asApi())?.status).toBe('deactivated')
    await row.getByRole('button', { name: 'Reactivate Mia Manager-Jones' }).click()
    await row.getByText('active', { exact: true }).waitFor()
    expect((await asApi())?.status).toBe('active')
  })

  it('creates an API key with scopes, sites and expiry, shows its secret once, and revokes it', async () => {
    await openFromMenu(ui.page, 'API keys')
    await ui.page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor()
    const form = ui.page.getByRole('form', { name: 'New live key' })
    await form.getByLabel('Label', { exact: true }).fill('Payroll export')
    await form.getByRole('radio', { name: 'Only these', exact: true }).check()
    await form.getByLabel('Operators', { exact: true }).selectOption('read')
    await form.getByLabel('Timesheets and pay', { exact: true }).selectOption('read')
    await form.getByRole('radio', { name: 'Only these locations' }).check()
    await form.getByLabel('Stops working on (optional)', { exact: true }).fill('2099-12-31')
    await form.getByRole('button', { name: 'Create the key' }).click()

    const panel = ui.page.getByRole('region', { name: 'New key Payroll export: its secret' })
    await panel.waitFor()
    const secret = await panel.getByLabel('Secret of Payroll export', { exact: true }).inputValue()
    expect(secret).toMatch(/^sk_live_/)
    await expectUsable('api-key-secret')
    // The secret works, with what it was given and no more.
    const client = ui.t.client(secret)
    expect((await client.get('/v1/operators')).status).toBe(200)
    expect((await client.get('/v1/sessions')).status).toBe(403)
    // As the API keeps it: held to the live depot, until the start of that day (the browser's zone, UTC).
    const keys = await (await signIn(ui.t, owner as { email: string; password: string }))
      .client(owner.accountId, 'live')
      .get<List<ApiKeyAnswer>>('/v1/api-keys')
    expect(keys.body.data.find((k) => k.label === 'Payroll export')).toMatchObject({
      scopes: ['operators:read', 'timesheets:read'],
      location_ids: [liveDepot.id],
      expires_at: '2099-12-31T00:00:00.000Z',
      revoked_at: null,
    })

    await panel.getByRole('button', { name: 'Done, the secret is kept' }).click()
    expect(await main().innerText()).not.toContain(secret)
    const row = ui.page.getByRole('row', { name: /Payroll export/ })
    await row.waitFor()
    expect(await row.innerText()).toMatch(
      /operators:read, timesheets:read[\s\S]*Live depot[\s\S]*2099[\s\S]*active/,
    )
    await expectUsable('api-keys')

    await row.getByRole('button', { name: 'Revoke Payroll export' }).click()
    await ui.page.getByRole('button', { name: 'Revoke the key' }).click()
    await row.getByText('revoked').waitFor()
    expect(await row.getByRole('button', { name: 'Revoke Payroll export' }).count()).toBe(0)
  })

  it('changes the password on My account, a wrong current one refused in words', async () => {
    await header().getByRole('link', { name: 'My account' }).click()
    await ui.page.getByRole('heading', { name: 'My account', level: 1 }).waitFor()
    expect(await main().innerText()).toMatch(new RegExp(`${owner.email}[\\s\\S]*Owner in ${ACCOUNT}`))
    await ui.page.getByLabel('Current password', { exact: true }).fill('not my password at all')
    await ui.page.getByLabel('New password', { exact: true }).fill(ownerNewPassword)
    await ui.page.getByRole('button', { name: 'Change the password' }).click()
    const alert = ui.page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.innerText()).toMatch(/^The e-mail or the password is wrong\./)
    // Still signed in: a wrong current password ends nothing.
    expect(await header().locator('.who').isVisible()).toBe(true)

    await ui.page.getByLabel('Current password', { exact: true }).fill(owner.password as string)
    await ui.page.getByRole('button', { name: 'Change the password' }).click()
    await ui.page.getByText('Your password is changed.').waitFor()
    await expectUsable('my-account')
  })

  it('signs out, and the new password signs in again', async () => {
    await signOut()
    expect(await ui.page.context().cookies()).toEqual([])
    await signInAs(ui.page, owner.email, owner.password as string)
    await ui.page.getByRole('alert').waitFor()
    await signInAs(ui.page, owner.email, ownerNewPassword)
    await ui.page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
    await signOut()
  })

  it('offers a viewer nothing it cannot do, and a page outside its role reads as such', async () => {
    // Victor is a manager in a second account: the header offers the account to work in.
    await addMembership(ui.t, viewer, { account: 'southwind', role: 'manager' })
    await signInAs(ui.page, viewer.email, viewer.password as string)
    await ui.page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
    const accountMenu = header().getByRole('combobox', { name: 'Account' })
    await accountMenu.selectOption({ label: 'southwind' })
    expect(await header().locator('.account').innerText()).toBe('Account southwind · live mode')
    expect(await header().locator('.who').innerText()).toMatch(/^Victor Viewer · Manager · /)
    await accountMenu.selectOption({ label: ACCOUNT })
    expect(await header().locator('.account').innerText()).toBe(`Account ${ACCOUNT} · live mode`)
    expect(await header().locator('.who').innerText()).toMatch(/^Victor Viewer · Viewer · /)
    const menu = ui.page.getByRole('navigation', { name: 'Main' })
    for (const absent of ['Users', 'API keys', 'Webhooks']) {
      expect(await menu.getByRole('link', { name: absent, exact: true }).count()).toBe(0)
    }
    await openFromMenu(ui.page, 'Operators')
    await ui.page.getByRole('row', { name: /L-001/ }).waitFor()
    expect(await main().getByRole('button').count()).toBe(0)
    expect(
      await main()
        .getByRole('combobox', { name: /Pay rule of/ })
        .count(),
    ).toBe(0)
    await expectUsable('operators-viewer')

    for (const [label, heading] of [
      ['Devices', 'Devices'],
      ['Pay rules', 'Pay rules'],
      ['Pay periods', 'Pay periods'],
      ['Review', 'Review queue'],
    ] as const) {
      await openFromMenu(ui.page, label)
      await ui.page.getByRole('heading', { name: heading, level: 1 }).waitFor()
      await ui.page.waitForLoadState('networkidle')
      // Filters and Load more only: nothing that creates, changes or approves.
      const buttons = await main().getByRole('button').allInnerTexts()
      expect(
        buttons.filter((text) => !/^(Apply filters|Load more)$/.test(text)),
        label,
      ).toEqual([])
      expect(await main().getByRole('form', { name: /^New / }).count(), label).toBe(0)
    }

    await ui.page.goto(`${ui.base}/console/users`)
    await ui.page.getByRole('heading', { name: 'Not available', level: 1 }).waitFor()
    expect(await main().innerText()).toMatch(/not part of what you may do in this account/)
  })

  it('says so when the sign-in ends elsewhere, at the next request', async () => {
    // A reset of the password through its link ends every session of the person at once.
    const token = await issueToken(ui.t.db, 'reset', viewer.userId, null)
    const password = freshPassword()
    const reset = await ui.t.client(undefined).post('/v1/auth/reset-password', { token, password })
    expect(reset.status).toBe(204)
    await openFromMenu(ui.page, 'Sessions')
    await ui.page.getByText('Your sign-in has ended: sign in again.').waitFor()
    await ui.page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor()
    await signInAs(ui.page, viewer.email, password)
    await ui.page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor()
    await signOut()
  })

  it('sets a new password from a reset link, then signs in with it', async () => {
    const token = await issueToken(ui.t.db, 'reset', viewer.userId, null)
    await ui.page.goto(`${ui.base}/console/reset-password#token=${token}`)
    await ui.page.getByRole('heading', { name: 'Set a new password', level: 1 }).waitFor()
    const password = freshPassword()
    await ui.page.getByLabel('New password', { exact: true }).fill(password)
    await ui.page.getByRole('button', { name: 'Set the password' }).click()
    await ui.page.getByText('Your new password is set: sign in with it.').waitFor()
    expect(ui.page.url()).not.toContain(token)
    await signInAs(ui.page, viewer.email, password)
    await ui.page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
    await signOut()

    // Used once: the same link again is refused in words.
    await ui.page.goto(`${ui.base}/console/reset-password#token=${token}`)
    await ui.page.getByLabel('New password', { exact: true }).fill(freshPassword())
    await ui.page.getByRole('button', { name: 'Set the password' }).click()
    await ui.page.getByRole('alert').or(ui.page.locator('.field-error')).first().waitFor()
  })

  it('makes the first owner from the set-up link, which asks for the e-mail too', async () => {
    const accountId = owner.accountId
    const token = await issueToken(ui.t.db, 'owner', null, accountId)
    await ui.page.goto(`${ui.base}/console/accept-invite#token=${token}`)
    await ui.page.getByLabel('Your name', { exact: true }).fill('Sam Setup')
    await ui.page.getByLabel('Password', { exact: true }).fill(freshPassword())
    await ui.page.getByRole('button', { name: 'Join and sign in' }).click()
    // The link names nobody: the API asks for the e-mail, and the page for it.
    const email = ui.page.getByLabel('Your e-mail (you sign in with it)', { exact: true })
    await email.waitFor()
    await email.fill('sam@northwind.example')
    await ui.page.getByRole('button', { name: 'Join and sign in' }).click()
    await ui.page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
    expect(await header().locator('.who').innerText()).toMatch(/^Sam Setup · Owner · /)
    expect(await header().locator('.account').innerText()).toBe(`Account ${ACCOUNT} · live mode`)
    await signOut()
  })

  it('ran without a script error or a CSP refusal', () => {
    // The refused sign-ins, password and invitation, and the used link, answer 401 and 422 (logged).
    expect(ui.errors.filter((text) => !/status of (401|409|422)/.test(text))).toEqual([])
  })
})
