import type { Locator } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import {
  type List,
  type Location,
  type PayPeriod,
  type Session,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
  waitUntil,
} from '../helpers/assertions.js'
import { chromiumAvailable, SCREENS, screenshot, useConsole } from '../helpers/browser.js'
import { openFromMenu, utcDate } from '../helpers/console.js'
import { pairFrom } from '../helpers/fixtures.js'

const HOUR = 60 * 60 * 1000
const DAY = 24 * HOUR

/** Where a row stands on the screen once scrolled to: what lies outside the window, what is cut. */
interface RowLayout {
  /** The texts of the row's cells, buttons and links not wholly inside the window. */
  outside: string[]
  /** The texts of the table's cells whose content is wider than the cell (cut, or overflowing). */
  cut: string[]
  /** Whether the table's box scrolls sideways. */
  boxScrolls: boolean
}

/** What `rowLayout` uses of an element in the page (the tests' TypeScript has no DOM types). */
interface PageElement {
  textContent: string | null
  scrollWidth: number
  clientWidth: number
  clientHeight: number
  ownerDocument: { documentElement: PageElement }
  getAttribute(name: string): string | null
  getClientRects(): { length: number }
  getBoundingClientRect(): { left: number; top: number; right: number; bottom: number }
  querySelectorAll(selectors: string): Iterable<PageElement>
  closest(selectors: string): PageElement | null
  scrollIntoView(options: { block: 'start' }): void
}

/** Runs in the page: the row's top at the window's top, then every part of it measured. */
function rowLayout(row: PageElement): RowLayout {
  row.scrollIntoView({ block: 'start' })
  const view = row.ownerDocument.documentElement
  const shown = (element: PageElement) => element.getClientRects().length > 0
  const inside = (element: PageElement) => {
    const box = element.getBoundingClientRect()
    return box.left >= 0 && box.top >= 0 && box.right <= view.clientWidth && box.bottom <= view.clientHeight
  }
  const text = (element: PageElement) =>
    (element.textContent || element.getAttribute('aria-label') || '').trim().slice(0, 60)
  const parts = [...row.querySelectorAll('td, th, button, a')].filter(shown)
  const box = row.closest('.table-scroll') as PageElement
  return {
    outside: parts.filter((part) => !inside(part)).map(text),
    cut: [...box.querySelectorAll('tbody td, tbody th, tfoot td, tfoot th')]
      .filter((cell) => shown(cell) && cell.scrollWidth > cell.clientWidth)
      .map(text),
    boxScrolls: box.scrollWidth > box.clientWidth,
  }
}

/**
 * Times of day in `text` that name no zone: every absolute time the console shows says its zone
 * ("04:16 CET", "10:00 CEST", "UTC", "GMT+1"); a countdown ("in 9:05") is relative and exempt.
 */
function unzonedTimes(text: string): string[] {
  const found: string[] = []
  for (const match of text.matchAll(
    /(in )?\b(\d{1,2}:\d{2})(?::\d{2})?\b( ?(?:UTC|GMT(?:[+-]\d+)?|[A-Z]{3,5}))?/g,
  )) {
    if (match[1] === undefined && match[3] === undefined) found.push(match[0])
  }
  return found
}

/**
 * Issue 32, the traps a newcomer met on a fresh clone: which account the console is in, tables cut
 * on a phone, times without a zone, and four smaller ones (a session titled by its id, a closed
 * period without totals, an operator's CSV named as everyone's, no way to add a webhook endpoint).
 * For each screen a service of its own and one page walked through in order.
 */
describe.runIf(chromiumAvailable()).each(SCREENS)('the console’s traps of issue 32, on a $name', (screen) => {
  let sessionId: string
  let endpointId: string
  const phone = screen.name === 'phone'
  // A period over a month ago, closed with Ada's approved day in it; Ada's pending day yesterday.
  const period = { start_date: utcDate(Date.now() - 40 * DAY), end_date: utcDate(Date.now() - 31 * DAY) }
  const workedDay = utcDate(Date.now() - 35 * DAY)
  const yesterday = utcDate(Date.now() - DAY)
  const api = () => ui.t.client(ui.key)
  const zoneOf = (timeZone: string, iso: string) =>
    new Intl.DateTimeFormat('en-GB', {
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
      timeZone,
    }).format(new Date(iso))

  const ui = useConsole(screen, {
    app: { worker: 'inline', webhookAllowPrivateUrls: true, webhookBackoffScale: 100 },
    account: 'acme',
    seed: async () => {
      // The inline worker makes the endpoint's deliveries (which fail: nothing listens at port 9).
      const endpoint = await api().post<WebhookEndpoint>('/v1/webhook-endpoints', {
        url: 'http://127.0.0.1:9/payroll',
        enabled_events: ['operator.created'],
        description: 'Payroll sync',
      })
      endpointId = endpoint.body.id
      await api().post('/v1/operators', { ident: 'W-001', name: 'Ada Lovelace', employee_id: 'HR-7' })
      const paris = await api().post<Location>('/v1/locations', {
        name: 'Head office',
        timezone: 'Europe/Paris',
      })
      await api().post('/v1/devices', { code: 'GATE-1', name: 'Front gate', location_id: paris.body.id })
      await api().post('/v1/pay-rules', { name: 'California hourly', overtime: { daily_minutes: 480 } })
      const worked = await api().post<Session>('/v1/sessions', {
        operator_ident: 'W-001',
        device_id: 'GATE-1',
        check_in: { time: `${workedDay}T08:00:00Z` },
        check_out: { time: `${workedDay}T16:00:00Z` },
      })
      expect((await api().post(`/v1/sessions/${worked.body.id}/approve`)).status).toBe(200)
      const closing = await api().post<PayPeriod>('/v1/pay-periods', period)
      expect((await api().post(`/v1/pay-periods/${closing.body.id}/close`)).status).toBe(200)
      const pending = await api().post<Session>('/v1/sessions', {
        operator_ident: 'W-001',
        device_id: 'GATE-1',
        check_in: { time: `${yesterday}T07:00:00Z` },
        check_out: { time: `${yesterday}T15:30:00Z` },
      })
      sessionId = pending.body.id
      // The operator's creation was delivered once (and failed): the delivery log has a row.
      await waitUntil(
        async () =>
          (await api().get<List<WebhookDelivery>>(`/v1/webhook-deliveries?endpoint_id=${endpointId}`)).body
            .data,
        (deliveries) => deliveries.some((d) => d.attempts.length > 0),
      )
    },
    timeoutMs: 90_000,
  })

  it('names the account and its mode in the header on every page', async () => {
    const account = ui.page.locator('header .account')
    await account.getByText('acme', { exact: true }).waitFor()
    expect(await account.innerText()).toBe('Account acme · test mode')
    expect(await account.isVisible()).toBe(true)
    for (const label of ['Sessions', 'Devices']) {
      await openFromMenu(ui.page, label)
      await ui.page.getByRole('heading', { name: label, level: 1 }).waitFor()
      expect(await account.isVisible()).toBe(true)
      expect(await account.innerText()).toBe('Account acme · test mode')
    }
  })

  /**
   * Each page with a table: how to open it, its first row, and what that row must show: who, when,
   * how much, and its action.
   */
  const TABLE_PAGES: Array<{ name: string; open: () => Promise<void>; row: () => Locator; shows: RegExp[] }> =
    [
      {
        name: 'sessions',
        open: () => openFromMenu(ui.page, 'Sessions'),
        row: () => ui.page.getByRole('row', { name: /Ada Lovelace/ }).first(),
        shows: [/Ada Lovelace/, /\d\d:\d\d CES?T/, /8\.50 h/],
      },
      {
        name: 'timesheets',
        open: () =>
          ui.page
            .goto(`${ui.base}/console/timesheets?from=${period.start_date}&to=${utcDate(Date.now())}`)
            .then(),
        row: () => ui.page.getByRole('row', { name: new RegExp(workedDay) }),
        shows: [/W-001/, /Ada Lovelace/, new RegExp(workedDay), /8\.00/],
      },
      {
        name: 'operators',
        open: () => openFromMenu(ui.page, 'Operators'),
        row: () => ui.page.getByRole('row', { name: /W-001/ }),
        shows: [/W-001/, /Ada Lovelace/, /active/, /Deactivate/],
      },
      {
        name: 'devices',
        open: () => openFromMenu(ui.page, 'Devices'),
        row: () => ui.page.getByRole('row', { name: /GATE-1/ }),
        shows: [/GATE-1/, /Head office/, /Pair/],
      },
      {
        name: 'webhooks',
        open: () => openFromMenu(ui.page, 'Webhooks'),
        row: () => ui.page.getByRole('row', { name: /127\.0\.0\.1/ }),
        shows: [/http:\/\/127\.0\.0\.1:9\/payroll/, /operator\.created/, /enabled/, /Delivery log/],
      },
      {
        name: 'deliveries',
        open: () => ui.page.getByRole('link', { name: /^Delivery log of / }).click(),
        row: () => ui.page.getByRole('row', { name: /operator\.created/ }).first(),
        shows: [/operator\.created/, /Payroll sync/, /\d\d:\d\d/, /Details/],
      },
      {
        name: 'pay-rules',
        open: () => openFromMenu(ui.page, 'Pay rules'),
        row: () => ui.page.getByRole('row', { name: /California hourly/ }),
        shows: [/California hourly/, /Edit/],
      },
      {
        name: 'review',
        open: () => openFromMenu(ui.page, 'Review'),
        row: () => ui.page.getByRole('row', { name: /Ada Lovelace/ }).first(),
        shows: [/Ada Lovelace/, new RegExp(yesterday), /8\.50 h/, /Approve/],
      },
      {
        name: 'pay-periods',
        open: () => openFromMenu(ui.page, 'Pay periods'),
        row: () => ui.page.getByRole('row', { name: new RegExp(period.start_date) }),
        shows: [new RegExp(`${period.start_date} to ${period.end_date}`), /closed/, /8\.00 h paid/, /Reopen/],
      },
    ]

  it(`shows every table's row whole: ${phone ? 'a card of labelled cells' : 'a table with its header'}, its times zoned`, async () => {
    for (const table of TABLE_PAGES) {
      await table.open()
      const row = table.row()
      await row.waitFor()
      // What the row says once the names and zones it waits for are in (a device's location name
      // arrives with the locations list, after the row).
      await expect
        .poll(
          async () => {
            const text = await row.innerText()
            return {
              unzoned: unzonedTimes(text),
              missing: table.shows.filter((shown) => !shown.test(text)).map(String),
            }
          },
          { timeout: 10_000 },
        )
        .toEqual({ unzoned: [], missing: [] })
      expect(
        unzonedTimes(await ui.page.locator('main').innerText()),
        `${table.name}: times without a zone`,
      ).toEqual([])
      const layout = await row.evaluate(rowLayout)
      if (phone) {
        expect(layout, table.name).toEqual({ outside: [], cut: [], boxScrolls: false })
        // Each cell names its column before its value (the header row is hidden on a phone).
        const named = await row.locator('td[data-column]').count()
        expect(named, `${table.name}: cells named after their column`).toBeGreaterThan(1)
        await screenshot(ui.page, `${table.name}-phone`)
      } else {
        // A desktop keeps the table as it was: its header row in view.
        expect(await ui.page.locator('thead th').last().isVisible(), table.name).toBe(true)
      }
    }
  })

  it('says the pairing code’s expiry in the device’s zone, and its last sighting with its zone too', async () => {
    await openFromMenu(ui.page, 'Devices')
    const [answer] = await Promise.all([
      ui.page.waitForResponse((response) => /\/v1\/devices\/[^/]+\/pairing-codes$/.test(response.url())),
      ui.page.getByRole('button', { name: 'Pair GATE-1', exact: true }).click(),
    ])
    const code = (await answer.json()) as { code: string; expires_at: string }
    const panel = ui.page.getByRole('region', { name: 'Pairing code for GATE-1' })
    // The browser is in UTC; the tablet at the gate shows Paris time, and so does the panel.
    await panel.getByText(`Expires at ${zoneOf('Europe/Paris', code.expires_at)}`).waitFor()
    expect(unzonedTimes(await panel.innerText())).toEqual([])
    expect(await panel.innerText()).toMatch(/\(in \d+:\d\d\)/)

    const pairing = await pairFrom<{ key: { secret: string } }>(ui.t, code.code)
    expect(pairing.status).toBe(201)
    const seen = await ui.t
      .client(pairing.body.key.secret)
      .get<{ device: { last_seen_at: string } }>('/v1/devices/current')
    await ui.page.reload()
    const row = ui.page.getByRole('row', { name: /GATE-1/ })
    await row.getByText('just now').waitFor()
    // Shown once the location's zone is read, never first in another zone.
    await row.getByText(zoneOf('Europe/Paris', seen.body.device.last_seen_at), { exact: false }).waitFor()
    expect(unzonedTimes(await row.innerText())).toEqual([])
  })

  it('titles a session’s page with its worker and work date, not its id', async () => {
    await ui.page.goto(`${ui.base}/console/sessions/${sessionId}`)
    const day = new Date(`${yesterday}T00:00:00Z`)
    const weekday = `${['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][day.getUTCDay()]} ${day.getUTCDate()} ${new Intl.DateTimeFormat(
      'en-GB',
      { month: 'short', timeZone: 'UTC' },
    ).format(day)} ${day.getUTCFullYear()}`
    await ui.page.getByRole('heading', { name: `Ada Lovelace (W-001), ${weekday}`, level: 1 }).waitFor()
    expect(await ui.page.title()).toBe(`Ada Lovelace (W-001), ${weekday} · Attendance console`)
    expect(unzonedTimes(await ui.page.locator('main').innerText())).toEqual([])
  })

  it('shows a closed pay period’s totals as the API answers them', async () => {
    await openFromMenu(ui.page, 'Pay periods')
    const row = ui.page.getByRole('row', { name: new RegExp(period.start_date) })
    await row.waitFor()
    const [closed] = (await api().get<List<PayPeriod>>('/v1/pay-periods')).body.data
    expect(closed?.totals).toMatchObject({ operators: 1, hours: 8, regular_hours: 8, overtime_hours: 0 })
    expect(await row.innerText()).toMatch(
      /8\.00 h paid, 1 operator\s+regular 8\.00 h, overtime 0\.00 h, double time 0\.00 h\s+auto break 0\.00 h/,
    )
  })

  it('names the CSV of one operator’s timesheet after the operator', async () => {
    const to = utcDate(Date.now())
    await ui.page.goto(`${ui.base}/console/timesheets?from=${period.start_date}&to=${to}`)
    await ui.page.getByLabel('Operator ident').fill('W-001')
    await ui.page.getByRole('button', { name: 'Show timesheet' }).click()
    await ui.page.getByRole('row', { name: new RegExp(yesterday) }).waitFor()
    const [download] = await Promise.all([
      ui.page.waitForEvent('download'),
      ui.page.getByRole('button', { name: 'Download CSV' }).click(),
    ])
    expect(download.suggestedFilename()).toBe(`timesheet-${period.start_date}-${to}-W-001.csv`)
  })

  it('adds a webhook endpoint from the Webhooks page and shows its secret once', async () => {
    await openFromMenu(ui.page, 'Webhooks')
    const form = ui.page.getByRole('form', { name: 'New endpoint' })
    // A refusal is said under its field.
    await form.getByLabel('URL (https)').fill('http://127.0.0.1:9/nightly')
    await form.getByLabel(/^Events/).fill('no.such_event')
    await form.getByRole('button', { name: 'Add endpoint' }).click()
    await form.locator('#endpoint-events-error').waitFor()

    await form.getByLabel(/^Events/).fill('session.completed, pay_period.*')
    await form.getByLabel('Description').fill('Nightly export')
    const [answer] = await Promise.all([
      ui.page.waitForResponse(
        (response) =>
          response.url().endsWith('/v1/webhook-endpoints') && response.request().method() === 'POST',
      ),
      form.getByRole('button', { name: 'Add endpoint' }).click(),
    ])
    expect(answer.status()).toBe(201)
    const created = (await answer.json()) as WebhookEndpointWithSecret
    const secret = ui.page.getByRole('region', { name: 'Signing secret' })
    await secret.getByText(created.secret).waitFor()
    expect(created.secret).toMatch(/^whsec_/)
    expect(created).toMatchObject({
      url: 'http://127.0.0.1:9/nightly',
      enabled_events: ['session.completed', 'pay_period.*'],
      description: 'Nightly export',
    })
    await ui.page.getByRole('row', { name: /nightly/ }).waitFor()
    await secret.getByRole('button', { name: 'Done, the secret is kept' }).click()
    // Shown once: gone from the page, and the list never carries it.
    expect(await ui.page.getByText(created.secret).count()).toBe(0)
    await ui.page.getByRole('form', { name: 'New endpoint' }).waitFor()
  })

  it('ran without a script error or a CSP refusal', () => {
    // The refused endpoint: the browser logs that answer.
    expect(ui.errors.filter((text) => !/status of 422/.test(text))).toEqual([])
  })
})
