import { afterAll, describe, expect, it } from 'vitest'
import type {
  WebhookDelivery as Delivery,
  List,
  Location,
  Operator,
  Scan,
  Session,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from '../helpers/assertions.js'
import {
  chromiumAvailable,
  expectUsablePage,
  horizontalOverflow,
  SCREENS,
  sessionStorageOf,
  useConsole,
} from '../helpers/browser.js'
import { openFromMenu, signIn, utcDate } from '../helpers/console.js'
import { WebhookReceiver } from '../helpers/webhook-receiver.js'

/** Operators made for the file, one delivery each: 20 deliveries, as the delivery log had. */
const OPERATORS = 20
const HOUR = 60 * 60 * 1000

/**
 * The console in Debian's Chromium against the real service on a real port: one browser for the
 * file, and for each screen (a desktop's and a phone's) a service and a page walked through the
 * pages in order, as a manager would.
 */
describe.runIf(chromiumAvailable()).each(SCREENS)('the console in a browser, on a $name', (screen) => {
  let receiver: WebhookReceiver
  let sessionId: string
  let endpointId: string
  const hookPath = '/console/hook'
  const phone = screen.name === 'phone'
  // The current pay period: it began ten days ago and ends in ten.
  const period = {
    start_date: utcDate(Date.now() - 10 * 24 * HOUR),
    end_date: utcDate(Date.now() + 10 * 24 * HOUR),
  }

  const api = () => ui.t.client(ui.key)

  const expectUsable = (name: string) => expectUsablePage(ui.page, screen, name, ['home', 'deliveries'])

  async function waitForDeliveriesAttempted(count: number): Promise<Delivery[]> {
    return receiver.waitFor(
      async () => {
        const list = await api().get<List<Delivery>>(
          `/v1/webhook-deliveries?endpoint_id=${endpointId}&limit=100`,
        )
        const attempted = list.body.data.filter((d) => d.attempts.length > 0)
        return attempted.length >= count ? attempted : undefined
      },
      20_000,
      `${count} deliveries with an attempt`,
    )
  }

  const ui = useConsole(screen, {
    // The inline worker delivers; a large backoff keeps the schedule's retries out of the test.
    app: { worker: 'inline', webhookAllowPrivateUrls: true, webhookBackoffScale: 100 },
    // As `cli keys label` sets it: the history names the key by it.
    keyLabel: 'Ops manager',
    // The first test signs in itself, after an unknown key is refused.
    signIn: false,
    seed: async () => {
      receiver = await WebhookReceiver.start()
      // The first two deliveries fail; the ones after them, and resends, succeed.
      receiver.respond(hookPath, [
        { status: 500, body: 'receiver down' },
        { status: 500, body: 'receiver down' },
        {},
      ])
      const endpoint = await api().post<WebhookEndpointWithSecret>('/v1/webhook-endpoints', {
        url: receiver.url(hookPath),
        enabled_events: ['operator.created'],
        description: 'Payroll sync',
      })
      endpointId = endpoint.body.id
      await api().post('/v1/operators', { ident: 'W-001', name: 'Ada Lovelace', employee_id: 'HR-7' })
      await api().post('/v1/operators', { ident: 'W-002', name: 'Grace Hopper' })
      for (let n = 3; n <= OPERATORS; n++) {
        await api().post('/v1/operators', { ident: `W-${String(n).padStart(3, '0')}`, name: `Operator ${n}` })
      }
      const location = await api().post<Location>('/v1/locations', {
        name: 'Head office',
        timezone: 'Europe/Paris',
      })
      await api().post('/v1/devices', { code: 'GATE-1', name: 'Front gate', location_id: location.body.id })
      const session = await api().post<Session>('/v1/sessions', {
        operator_ident: 'W-001',
        device_id: 'GATE-1',
        check_in: { time: '2026-10-20T08:00:00Z' },
        check_out: { time: '2026-10-20T16:30:00Z' },
      })
      sessionId = session.body.id
      await api().patch(`/v1/sessions/${sessionId}`, { break_minutes: 30 })
      // This period's: 8 hours awaiting review. And Grace, checked in two hours ago, still at work.
      expect((await api().post('/v1/pay-periods', period)).status).toBe(201)
      await api().post('/v1/sessions', {
        operator_ident: 'W-001',
        device_id: 'GATE-1',
        check_in: { time: new Date(Date.now() - 9 * HOUR).toISOString() },
        check_out: { time: new Date(Date.now() - HOUR).toISOString() },
      })
      const scan = await api().post<Scan>('/v1/scans', {
        device_id: 'GATE-1',
        operator_ident: 'W-002',
        time: new Date(Date.now() - 2 * HOUR).toISOString(),
      })
      expect(scan.body.result).toBe('checked_in')
      await waitForDeliveriesAttempted(OPERATORS)
    },
    timeoutMs: 90_000,
  })

  afterAll(async () => {
    await receiver?.close()
  })

  it('refuses an unknown key with the API message and what to check', async () => {
    await ui.page.goto(`${ui.base}/console/`)
    await ui.page.getByRole('link', { name: 'Use an API key' }).click()
    await ui.page.getByLabel('API key').fill(`sk_test_${'x'.repeat(24)}`)
    await ui.page.getByRole('button', { name: 'Sign in' }).click()
    const alert = ui.page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.innerText()).toMatch(/Invalid API key provided[\s\S]*whole key was pasted/)
    await expectUsable('sign-in')
    // The failed attempt keeps nothing.
    expect(await sessionStorageOf(ui.page)).toBe('{}')
  })

  it('signs in from the keyboard alone onto the home page, in test mode', async () => {
    await ui.page.getByLabel('API key').fill('')
    await ui.page.getByLabel('API key').focus()
    await ui.page.keyboard.type(ui.key)
    await ui.page.keyboard.press('Enter')
    await ui.page.getByText('Test mode: you are viewing test data').waitFor()
    await ui.page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
    // The home page is the console's address itself: nothing moves elsewhere.
    expect(new URL(ui.page.url()).pathname).toBe('/console/')
    // The key lives in sessionStorage alone: not in the address, not in a cookie.
    expect(ui.page.url()).not.toContain(ui.key)
    expect(await sessionStorageOf(ui.page)).toContain(ui.key)
    expect(await ui.page.context().cookies()).toEqual([])
  })

  it('shows on the home page what needs doing: reviews, who is in, the hours of this period', async () => {
    const card = (name: string) => ui.page.getByRole('region', { name })
    await card('Pending reviews').getByText('2 sessions await review').waitFor()
    await card('Open sessions').getByText('1 session open now').waitFor()
    const hoursCard = card('Hours this period')
    await hoursCard.getByText(`Pay period ${period.start_date} to ${period.end_date}`).waitFor()
    expect(await hoursCard.innerText()).toMatch(
      /Approved or needing no review\s+0\.00 h\s+Pending review\s+8\.00 h/,
    )
    await expectUsable('home')

    await card('Open sessions').getByRole('link', { name: 'See who is checked in' }).click()
    await ui.page.getByRole('heading', { name: 'Sessions' }).waitFor()
    expect(await ui.page.getByLabel('Status').inputValue()).toBe('open')
    const row = ui.page.getByRole('row', { name: /Grace Hopper/ })
    await row.waitFor()
    expect(await row.innerText()).toMatch(/still open\s+Grace Hopper W-002\s+Head office\s+—\s+open/)
    await ui.page.getByText('1 session shown.').waitFor()

    await openFromMenu(ui.page, 'Home')
    await card('Pending reviews').getByRole('link', { name: 'Open the review queue' }).click()
    await ui.page.getByRole('heading', { name: 'Review queue' }).waitFor()
  })

  it('folds the menu behind a button on a phone, and shows it whole on a desktop', async () => {
    const menu = ui.page.getByRole('button', { name: 'Menu' })
    const sessions = ui.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sessions' })
    expect(await menu.isVisible()).toBe(phone)
    expect(await sessions.isVisible()).toBe(!phone)
    if (phone) {
      expect(await menu.getAttribute('aria-expanded')).toBe('false')
      await menu.focus()
      await ui.page.keyboard.press('Enter')
      expect(await menu.getAttribute('aria-expanded')).toBe('true')
      await sessions.waitFor()
      expect(await horizontalOverflow(ui.page)).toBeLessThanOrEqual(0)
    }
    await sessions.click()
    await ui.page.getByRole('heading', { name: 'Sessions' }).waitFor()
    // Opening a page folds the menu again.
    expect(await sessions.isVisible()).toBe(!phone)
  })

  it('lists sessions with operator, location, local times, hours and flag in words', async () => {
    // The row's times wait for its location's zone, which comes with its name.
    const row = ui.page.getByRole('row', { name: /20 Oct 2026.*Head office/ })
    await row.waitFor()
    // 08:00Z is 10:00 in Paris in October (summer time).
    expect(await row.innerText()).toMatch(
      /20 Oct 2026, 10:00 CEST\s+20 Oct 2026, 18:30 CEST\s+Ada Lovelace W-001\s+Head office\s+8\.00 h\s+completed\s+edited by hand/,
    )
    await ui.page.getByText('3 sessions shown.').waitFor()
    await expectUsable('sessions')
  })

  it('shows a session, its review and its history with location names and key labels', async () => {
    await ui.page.getByRole('link', { name: '20 Oct 2026, 10:00 CEST' }).click()
    // Titled by whose session it is and its work date, not its id.
    await ui.page.getByRole('heading', { name: 'Ada Lovelace (W-001), Tue 20 Oct 2026', level: 1 }).waitFor()
    expect(new URL(ui.page.url()).pathname).toBe(`/console/sessions/${sessionId}`)
    await ui.page.getByText('Head office (Europe/Paris)').waitFor()
    expect(await ui.page.getByText('awaiting review', { exact: true }).first().isVisible()).toBe(true)
    expect(await ui.page.locator('.fields').innerText()).toMatch(/Flag\s+flagged: edited by hand/)
    const timeline = ui.page.getByRole('list').filter({ has: ui.page.getByText(/ by Ops manager/) })
    await timeline.getByRole('listitem').nth(1).waitFor()
    const entries = await timeline.getByRole('listitem').allInnerTexts()
    expect(entries).toHaveLength(2)
    expect(entries[0]).toMatch(
      /^updated .* by Ops manager[\s\S]*Break \(min\)\s+0 → 30[\s\S]*Hours\s+8\.5 → 8/,
    )
    expect(entries[1]).toMatch(
      /^created .* by Ops manager[\s\S]*Location\s+— → Head office[\s\S]*Check-in\s+— → 20 Oct 2026, 10:00 CEST/,
    )
    // Names, not ids: no loc_… and no key_… left for a manager to decode.
    expect(entries.join('\n')).not.toMatch(/loc_|key_/)
    await expectUsable('session')
  })

  it('says once that an unknown session does not exist', async () => {
    await ui.page.goto(`${ui.base}/console/sessions/ses_unknown`)
    await ui.page.getByRole('alert').waitFor()
    // Its history is refused the same way: let that answer come too, then count.
    await ui.page.waitForLoadState('networkidle')
    expect(await ui.page.getByRole('alert').count()).toBe(1)
    expect(await ui.page.getByRole('alert').innerText()).toMatch(/ses_unknown/)
    expect(await ui.page.getByRole('heading', { name: 'History' }).count()).toBe(0)
  })

  it('searches operators in honest words, deactivates one from the keyboard alone and reactivates it', async () => {
    await openFromMenu(ui.page, 'Operators')
    await ui.page.getByText(`${OPERATORS} operators shown.`).waitFor()
    const search = ui.page.getByLabel('Search by ident or name')
    await search.fill('grace')
    await ui.page.getByText('1 operator matches “grace”.').waitFor()
    expect(await ui.page.getByRole('row', { name: /W-0\d\d/ }).allInnerTexts()).toEqual([
      expect.stringMatching(/^W-002\s+Grace Hopper/),
    ])
    await search.fill('nobody')
    await ui.page.getByText('No operator matches “nobody”.').waitFor()
    expect(await ui.page.getByRole('row', { name: /W-0\d\d/ }).count()).toBe(0)
    expect(await ui.page.locator('main').innerText()).not.toMatch(/The API|exact ident only|loaded shown/)
    await search.fill('')
    await ui.page.getByText(`${OPERATORS} operators shown.`).waitFor()
    await expectUsable('operators')

    // Tab from the search box to the button, then Enter: the action needs no mouse.
    await search.fill('Ada')
    await search.focus()
    const deactivate = ui.page.getByRole('button', { name: 'Deactivate W-001' })
    for (
      let presses = 0;
      presses < 10 && !(await deactivate.evaluate((b) => b === b.ownerDocument.activeElement));
      presses++
    ) {
      await ui.page.keyboard.press('Tab')
    }
    await ui.page.keyboard.press('Enter')
    const reactivate = ui.page.getByRole('button', { name: 'Reactivate W-001' })
    await reactivate.waitFor()
    const operators = await api().get<List<Operator>>('/v1/operators?ident=W-001')
    expect(operators.body.data[0]?.is_active).toBe(false)

    await reactivate.click()
    await deactivate.waitFor()
    const again = await api().get<List<Operator>>('/v1/operators?ident=W-001')
    expect(again.body.data[0]?.is_active).toBe(true)
  })

  it('re-enables a disabled webhook endpoint', async () => {
    await api().patch(`/v1/webhook-endpoints/${endpointId}`, { status: 'disabled' })
    await openFromMenu(ui.page, 'Webhooks')
    await ui.page.getByText('disabled: manual').waitFor()
    await expectUsable('webhooks')
    await ui.page.getByRole('button', { name: /^Re-enable / }).click()
    await ui.page.getByText('enabled', { exact: true }).waitFor()
    expect((await api().get<WebhookEndpoint>(`/v1/webhook-endpoints/${endpointId}`)).body.status).toBe(
      'enabled',
    )
  })

  it('shows the delivery log as one compact row a delivery, with attempts and payload on request', async () => {
    await ui.page.getByRole('link', { name: /^Delivery log of / }).click()
    await ui.page.getByRole('heading', { name: 'Delivery log' }).waitFor()
    const rows = ui.page.getByRole('row', { name: /operator\.created/ })
    await ui.page.getByText(`${OPERATORS} deliveries shown.`).waitFor()
    expect(await rows.count()).toBe(OPERATORS)
    const failed = ui.page.getByRole('row', { name: /HTTP 500/ })
    expect(await failed.first().innerText()).toMatch(
      /operator\.created\s+Payroll sync\s+(pending|failed)\s+1 attempt, last HTTP 500/,
    )
    const height = await ui.page.evaluate<number>('document.documentElement.scrollHeight')
    console.info(`delivery log of ${OPERATORS} deliveries on a ${screen.name}: ${height} px high`)
    // The log of cards was 5,000 px high for 20 deliveries.
    expect(height).toBeLessThan(phone ? 2_500 : 2_000)
    await expectUsable('deliveries')

    const [delivery] = (await waitForDeliveriesAttempted(OPERATORS)).filter(
      (d) => d.attempts[0]?.status_code === 500,
    )
    const details = ui.page.getByRole('button', { name: `Details of delivery ${delivery?.id}` })
    await details.click()
    expect(await details.getAttribute('aria-expanded')).toBe('true')
    const attempts = ui.page.locator('.attempts').getByRole('row', { name: /receiver down/ })
    await attempts.waitFor()
    expect(await attempts.innerText()).toMatch(/scheduled\s+500\s+\d+ ms\s+HTTP 500\s+receiver down/)
    const payload = ui.page.locator('.payload')
    await payload.waitFor()
    const event = JSON.parse(await payload.innerText()) as {
      type: string
      data: { object: { ident: string } }
    }
    expect(event.type).toBe('operator.created')
    expect(event.data.object.ident).toMatch(/^W-0\d\d$/)
    // The opened delivery's row at the top of the window, its details under it.
    await ui.page.evaluate("document.querySelector('.row-detail').previousElementSibling.scrollIntoView()")
    await expectUsable('delivery-details')

    await ui.page.getByRole('button', { name: `Resend delivery ${delivery?.id}` }).click()
    await ui.page
      .locator('.attempts')
      .getByRole('row', { name: /resend\s+200/ })
      .waitFor()
    const resent = await api().get<Delivery>(`/v1/webhook-deliveries/${delivery?.id}`)
    expect(resent.body.status).toBe('succeeded')
    expect(resent.body.attempts.at(-1)).toMatchObject({ kind: 'resend', status_code: 200 })
  })

  it('recovers the deliveries of a window and shows what the API did', async () => {
    // datetime-local is wall-clock time in the browser's zone, UTC here.
    const since = new Date(Date.now() - 60 * 60 * 1000).toISOString().slice(0, 16)
    await ui.page.getByLabel('Recover since').fill(since)
    // What the API answered, read off the wire: the worker may deliver the recovered deliveries
    // before the test could count them.
    const [answer] = await Promise.all([
      ui.page.waitForResponse((response) =>
        response.url().endsWith(`/v1/webhook-endpoints/${endpointId}/recover`),
      ),
      ui.page.getByRole('button', { name: 'Recover', exact: true }).click(),
    ])
    expect(answer.status()).toBe(200)
    const recovery = (await answer.json()) as { recovered: number; created: number }
    const result = ui.page.getByText(/^Recovered \d+ failed/)
    await result.waitFor()
    expect(await result.innerText()).toMatch(
      new RegExp(`^Recovered ${recovery.recovered} failed deliver(y|ies) and created ${recovery.created} `),
    )
  })

  it('signs out, forgetting the key', async () => {
    await ui.page.getByRole('button', { name: 'Sign out' }).click()
    await ui.page.getByLabel('API key').waitFor()
    expect(await sessionStorageOf(ui.page)).toBe('{}')
  })

  it('explains a key that lacks a scope, each figure of the home page on its own', async () => {
    const limited = await ui.t.key({ mode: 'test', scopes: ['sessions:read'] })
    await signIn(ui.page, ui.base, limited.secret)
    const hoursCard = ui.page.getByRole('region', { name: 'Hours this period' })
    await hoursCard.getByRole('alert').waitFor()
    expect(await hoursCard.getByRole('alert').innerText()).toMatch(/lacks the scope timesheets:read/)
    // The figures the key may read are there all the same.
    await ui.page
      .getByRole('region', { name: 'Pending reviews' })
      .getByText('2 sessions await review')
      .waitFor()
    await openFromMenu(ui.page, 'Operators')
    const alert = ui.page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.innerText()).toMatch(
      /lacks the scope operators:read[\s\S]*Ask for a key with the scope/,
    )
    expect(await ui.page.getByRole('alert').count()).toBe(1)
  })

  it('ran without a script error or a CSP refusal', () => {
    // The refused key, the missing scopes and the unknown session: the browser logs those answers.
    expect(ui.errors.filter((text) => !/status of (401|403|404)/.test(text))).toEqual([])
  })
})
