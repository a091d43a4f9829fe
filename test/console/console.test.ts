import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.js'
import {
  accessibilityViolations,
  chromiumAvailable,
  launchChromium,
  screenshot,
  sessionStorageOf,
  VIEWPORT,
} from '../helpers/browser.js'
import { buildConsoleTestApp, listen } from '../helpers/console.js'
import { WebhookReceiver } from '../helpers/webhook-receiver.js'

interface Delivery {
  id: string
  status: string
  attempts: Array<{ status_code: number | null; kind: string }>
}

/**
 * The console in Debian's Chromium against the real service on a real port: one browser for the
 * file, one page walked through the pages in order, as a manager would.
 */
describe.runIf(chromiumAvailable())('the console in a browser', () => {
  let t: TestApp
  let base: string
  let receiver: WebhookReceiver
  let browser: Browser
  let page: Page
  let key: string
  let sessionId: string
  let endpointId: string
  const hookPath = '/console/hook'
  const consoleErrors: string[] = []

  const api = () => t.client(key)

  async function expectAccessible(name: string): Promise<void> {
    expect(await accessibilityViolations(page), name).toEqual([])
    await screenshot(page, name)
  }

  async function waitForDeliveriesAttempted(count: number): Promise<Delivery[]> {
    return receiver.waitFor(
      async () => {
        const list = await api().get<{ data: Delivery[] }>(`/v1/webhook-deliveries?endpoint_id=${endpointId}`)
        const attempted = list.body.data.filter((d) => d.attempts.length > 0)
        return attempted.length >= count ? attempted : undefined
      },
      10_000,
      `${count} deliveries with an attempt`,
    )
  }

  beforeAll(async () => {
    // The inline worker delivers; a large backoff keeps the schedule's retries out of the test.
    t = await buildConsoleTestApp({
      worker: 'inline',
      webhookAllowPrivateUrls: true,
      webhookBackoffScale: 100,
    })
    base = await listen(t)
    receiver = await WebhookReceiver.start()
    // The first delivery of each operator fails; the resend that follows succeeds.
    receiver.respond(hookPath, [
      { status: 500, body: 'receiver down' },
      { status: 500, body: 'receiver down' },
      {},
    ])
    key = (await t.key({ mode: 'test' })).secret

    const endpoint = await api().post<{ id: string }>('/v1/webhook-endpoints', {
      url: receiver.url(hookPath),
      enabled_events: ['operator.created'],
      description: 'Payroll sync',
    })
    endpointId = endpoint.body.id
    await api().post('/v1/operators', { ident: 'W-001', name: 'Ada Lovelace', employee_id: 'HR-7' })
    await api().post('/v1/operators', { ident: 'W-002', name: 'Grace Hopper' })
    const location = await api().post<{ id: string }>('/v1/locations', {
      name: 'Head office',
      timezone: 'Europe/Paris',
    })
    await api().post('/v1/devices', { code: 'GATE-1', name: 'Front gate', location_id: location.body.id })
    const session = await api().post<{ id: string }>('/v1/sessions', {
      operator_ident: 'W-001',
      device_id: 'GATE-1',
      check_in: { time: '2026-11-20T08:00:00Z' },
      check_out: { time: '2026-11-20T16:30:00Z' },
    })
    sessionId = session.body.id
    await api().patch(`/v1/sessions/${sessionId}`, { break_minutes: 30 })
    await waitForDeliveriesAttempted(2)

    browser = await launchChromium()
    const context = await browser.newContext({ viewport: VIEWPORT, locale: 'en-GB', timezoneId: 'UTC' })
    page = await context.newPage()
    // A CSP refusal or a script error shows up here: the test fails on any.
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text())
    })
    page.on('pageerror', (error) => consoleErrors.push(error.message))
  })

  afterAll(async () => {
    await browser?.close()
    await receiver?.close()
    await t?.close()
  })

  it('refuses an unknown key with the API message and what to check', async () => {
    await page.goto(`${base}/console/`)
    await page.getByLabel('API key').fill(`sk_test_${'x'.repeat(24)}`)
    await page.getByRole('button', { name: 'Sign in' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.innerText()).toMatch(/Invalid API key provided[\s\S]*whole key was pasted/)
    await expectAccessible('sign-in')
    // The failed attempt keeps nothing.
    expect(await sessionStorageOf(page)).toBe('{}')
  })

  it('signs in from the keyboard alone and shows test mode on every page', async () => {
    await page.getByLabel('API key').fill('')
    await page.getByLabel('API key').focus()
    await page.keyboard.type(key)
    await page.keyboard.press('Enter')
    await page.getByText('Test mode: you are viewing test data').waitFor()
    // The banner shows as soon as the key is accepted, a moment before the console moves to its
    // first page: wait for that move rather than read the address at once.
    await page.waitForURL((url) => url.pathname === '/console/sessions', { timeout: 5000 })
    // The key lives in sessionStorage alone: not in the address, not in a cookie.
    expect(page.url()).not.toContain(key)
    expect(await sessionStorageOf(page)).toContain(key)
    expect(await page.context().cookies()).toEqual([])
  })

  it('lists sessions with operator, location, local times, hours and flag', async () => {
    // The row's times wait for its location's zone, which comes with its name.
    const row = page.getByRole('row', { name: /W-001.*Head office/ })
    await row.waitFor()
    // 08:00Z is 09:00 in Paris in November.
    expect(await row.innerText()).toMatch(
      /20 Nov 2026, 09:00 CET\s+20 Nov 2026, 17:30 CET\s+W-001\s+Head office\s+8\.00 h\s+completed\s+manual api edit/,
    )
    await expectAccessible('sessions')
  })

  it('shows a session with its revision history as a timeline', async () => {
    await page.getByRole('link', { name: '20 Nov 2026, 09:00 CET' }).click()
    await page.getByRole('heading', { name: `Session ${sessionId}` }).waitFor()
    expect(new URL(page.url()).pathname).toBe(`/console/sessions/${sessionId}`)
    await page.getByText('Head office (Europe/Paris)').waitFor()
    const timeline = page.getByRole('list').filter({ has: page.getByText('by key') })
    await timeline.getByRole('listitem').nth(1).waitFor()
    const entries = await timeline.getByRole('listitem').allInnerTexts()
    expect(entries).toHaveLength(2)
    expect(entries[0]).toMatch(
      /^updated .* by key key_\w+[\s\S]*Break \(min\)\s+0 → 30[\s\S]*Hours\s+8\.5 → 8/,
    )
    expect(entries[1]).toMatch(/^created [\s\S]*Check-in\s+— → 20 Nov 2026, 09:00 CET/)
    await expectAccessible('session')
  })

  it('searches operators, deactivates one from the keyboard alone and reactivates it', async () => {
    await page.getByRole('link', { name: 'Operators' }).click()
    await page.getByRole('row', { name: /W-002/ }).waitFor()
    await page.getByLabel('Search by ident or name').fill('grace')
    expect(await page.getByRole('row', { name: /W-00/ }).allInnerTexts()).toEqual([
      expect.stringMatching(/^W-002\s+Grace Hopper/),
    ])
    await page.getByLabel('Search by ident or name').fill('')
    await expectAccessible('operators')

    // Tab from the search box to the button, then Enter: the action needs no mouse.
    await page.getByLabel('Search by ident or name').focus()
    const deactivate = page.getByRole('button', { name: 'Deactivate W-001' })
    for (
      let presses = 0;
      presses < 20 && !(await deactivate.evaluate((b) => b === b.ownerDocument.activeElement));
      presses++
    ) {
      await page.keyboard.press('Tab')
    }
    await page.keyboard.press('Enter')
    const reactivate = page.getByRole('button', { name: 'Reactivate W-001' })
    await reactivate.waitFor()
    const operators = await api().get<{ data: Array<{ ident: string; is_active: boolean }> }>(
      '/v1/operators?ident=W-001',
    )
    expect(operators.body.data[0]?.is_active).toBe(false)

    await reactivate.click()
    await deactivate.waitFor()
    const again = await api().get<{ data: Array<{ is_active: boolean }> }>('/v1/operators?ident=W-001')
    expect(again.body.data[0]?.is_active).toBe(true)
  })

  it('re-enables a disabled webhook endpoint', async () => {
    await api().patch(`/v1/webhook-endpoints/${endpointId}`, { status: 'disabled' })
    await page.getByRole('link', { name: 'Webhooks' }).click()
    await page.getByText('disabled: manual').waitFor()
    await expectAccessible('webhooks')
    await page.getByRole('button', { name: /^Re-enable / }).click()
    await page.getByText('enabled', { exact: true }).waitFor()
    expect((await api().get<{ status: string }>(`/v1/webhook-endpoints/${endpointId}`)).body.status).toBe(
      'enabled',
    )
  })

  it('shows the delivery log with its attempts and resends a delivery', async () => {
    await page.getByRole('link', { name: /^Delivery log of / }).click()
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor()
    const attempts = page.getByRole('row', { name: /receiver down/ })
    await attempts.nth(1).waitFor()
    expect(await attempts.first().innerText()).toMatch(/scheduled\s+500\s+\d+ ms\s+HTTP 500\s+receiver down/)
    await expectAccessible('deliveries')

    const [delivery] = await waitForDeliveriesAttempted(2)
    await page.getByRole('button', { name: `Resend delivery ${delivery?.id}` }).click()
    await page.getByRole('row', { name: /resend\s+200/ }).waitFor()
    await receiver.waitForRequests(hookPath, 3)
    const resent = await api().get<Delivery>(`/v1/webhook-deliveries/${delivery?.id}`)
    expect(resent.body.status).toBe('succeeded')
    expect(resent.body.attempts.at(-1)).toMatchObject({ kind: 'resend', status_code: 200 })
  })

  it('recovers the deliveries of a window and shows what the API did', async () => {
    // datetime-local is wall-clock time in the browser's zone, UTC here.
    const since = new Date(Date.now() - 60 * 60 * 1000).toISOString().slice(0, 16)
    await page.getByLabel('Recover since').fill(since)
    // What the API answered, read off the wire: the worker may deliver the recovered deliveries
    // before the test could count them.
    const [answer] = await Promise.all([
      page.waitForResponse((response) =>
        response.url().endsWith(`/v1/webhook-endpoints/${endpointId}/recover`),
      ),
      page.getByRole('button', { name: 'Recover', exact: true }).click(),
    ])
    expect(answer.status()).toBe(200)
    const recovery = (await answer.json()) as { recovered: number; created: number }
    const result = page.getByText(/^Recovered \d+ failed/)
    await result.waitFor()
    expect(await result.innerText()).toMatch(
      new RegExp(`^Recovered ${recovery.recovered} failed deliver(y|ies) and created ${recovery.created} `),
    )
  })

  it('signs out, forgetting the key', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('API key').waitFor()
    expect(await sessionStorageOf(page)).toBe('{}')
  })

  it('explains a key that lacks a scope', async () => {
    const limited = await t.key({ mode: 'test', scopes: ['sessions:read'] })
    await page.getByLabel('API key').fill(limited.secret)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('link', { name: 'Operators' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.innerText()).toMatch(
      /lacks the scope operators:read[\s\S]*Ask for a key with the scope/,
    )
  })

  it('ran without a script error or a CSP refusal', () => {
    expect(consoleErrors.filter((text) => !/status of (401|403)/.test(text))).toEqual([])
  })
})
