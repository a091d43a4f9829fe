import { describe, expect, it } from 'vitest'
import { type ApiClient, errorOf } from '../helpers/app.js'
import type { Device, Location, Operator } from '../helpers/assertions.js'
import {
  accessibilityViolations,
  chromiumAvailable,
  expectUsablePage,
  horizontalOverflow,
  SCREENS,
  screenshot,
  useConsole,
} from '../helpers/browser.js'
import { openFromMenu } from '../helpers/console.js'
import { pairFrom } from '../helpers/fixtures.js'

/** A pairing code as the API makes it: 8 characters without 0, O, 1 or I, a dash in the middle. */
const PAIRING_CODE = /^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/

/** An unusual PIN: found in no page text, request or log line by chance. */
const PIN = '7391'

type Pairing = { device: Device; key: { secret: string } }

/**
 * The devices page and operators' PINs in Debian's Chromium against the real service: devices listed,
 * added, paired with the code the page shows (used over HTTP, as the kiosk would), unpaired, their
 * require_pin toggled; an operator's PIN set and cleared, each checked over the API and by a scan at a
 * device that requires PINs. For each screen a service of its own and one page walked in order.
 */
describe.runIf(chromiumAvailable()).each(SCREENS)('the devices page, on a $name', (screen) => {
  /** The north gate's key, paired through the API before the page opens. */
  let northKey: string
  const devices: Record<string, Device> = {}
  const desktop = screen.name === 'desktop'

  const api = () => ui.t.client(ui.key)
  const deviceOverApi = async (code: string) => {
    const found = await api().get<{ data: Device[] }>(`/v1/devices?code=${code}`)
    expect(found.status).toBe(200)
    const device = found.body.data[0]
    if (!device) throw new Error(`no device ${code}`)
    return device
  }
  const operatorOverApi = async (ident: string) =>
    (await api().get<{ data: Operator[] }>(`/v1/operators?ident=${ident}`)).body.data[0]

  /** The device's row on the page, by the name of its Pair button (its code). */
  const deviceRow = (code: string) =>
    ui.page
      .getByRole('row')
      .filter({ has: ui.page.getByRole('button', { name: new RegExp(`^Pair( again)? ${code}$`) }) })
  const pairingPanel = (code: string) => ui.page.getByRole('region', { name: `Pairing code for ${code}` })

  /** What has the focus, by its accessible name as the page gives it (`aria-label`), else its id. */
  const focused = () =>
    ui.page.evaluate<string | null>(
      "document.activeElement && (document.activeElement.getAttribute('aria-label') || document.activeElement.id)",
    )

  const scanAtNorthGate = (device: ApiClient, body: Record<string, unknown>) =>
    device.post('/v1/scans', { device_id: 'GATE-N', operator_ident: 'W-001', ...body })

  const ui = useConsole(screen, {
    // The page's clock, flowing as the real one until a test moves it past a code's expiry.
    beforeSignIn: (page) => page.clock.install(),
    seed: async () => {
      const location = await api().post<Location>('/v1/locations', {
        name: 'North depot',
        timezone: 'Europe/Paris',
      })
      expect(location.status).toBe(201)
      for (const body of [
        { code: 'GATE-S', name: 'South gate' },
        { code: 'GATE-N', name: 'North gate', location_id: location.body.id },
      ]) {
        const created = await api().post<Device>('/v1/devices', body)
        expect(created.status).toBe(201)
        devices[body.code] = created.body
      }
      expect((await api().post('/v1/operators', { ident: 'W-001', name: 'Ada Lovelace' })).status).toBe(201)
      // The north gate's tablet paired and seen (its first request records last_seen_at).
      const code = await api().post<{ code: string }>(`/v1/devices/${devices['GATE-N']?.id}/pairing-codes`)
      const paired = await pairFrom<Pairing>(ui.t, code.body.code)
      expect(paired.status).toBe(201)
      northKey = paired.body.key.secret
      expect((await ui.t.client(northKey).get('/v1/devices/current')).status).toBe(200)
    },
    // A build of the console, a browser and a service, on a machine shared with other suites.
    timeoutMs: 90_000,
  })

  it('lists each device with its location, whether it is paired, when it was last seen and require_pin', async () => {
    await openFromMenu(ui.page, 'Devices')
    await ui.page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor()
    const north = deviceRow('GATE-N')
    await expect
      .poll(() => north.innerText())
      .toMatch(/North gate\s+GATE-N\s+North depot\s+paired\s+just now/)
    expect(await north.getByRole('button', { name: 'Unpair GATE-N' }).isVisible()).toBe(true)
    const south = deviceRow('GATE-S')
    expect(await south.innerText()).toMatch(/South gate\s+GATE-S\s+—\s+not paired\s+never/)
    expect(await south.getByRole('button', { name: 'Unpair GATE-S' }).count()).toBe(0)
    for (const code of ['GATE-N', 'GATE-S']) {
      expect(await ui.page.getByRole('checkbox', { name: `Require a PIN at ${code}` }).isChecked()).toBe(
        false,
      )
    }
    await ui.page.getByText('2 devices shown.').waitFor()
    await expectUsablePage(ui.page, screen, 'devices', ['devices'])
    if (desktop) await screenshot(ui.page, 'console-devices', 'kiosk')
  })

  it("adds a device through its form; a code already taken is refused with the API's message", async () => {
    const form = ui.page.getByRole('form', { name: 'New device' })
    await form.getByLabel('Code').fill('GATE-N')
    await form.getByRole('button', { name: 'Add device' }).click()
    const taken = await api().post('/v1/devices', { code: 'GATE-N' })
    expect(taken.status).toBeGreaterThanOrEqual(400)
    await form.getByText(errorOf(taken).message).waitFor()
    expect(await accessibilityViolations(ui.page), 'refused form').toEqual([])

    await form.getByLabel('Code').fill('GATE-E')
    await form.getByLabel('Name').fill('East gate')
    await form.getByLabel('Location').selectOption({ label: 'North depot' })
    await form.getByLabel('Require a PIN').check()
    await form.getByRole('button', { name: 'Add device' }).click()
    await expect
      .poll(() => deviceRow('GATE-E').innerText())
      .toMatch(/East gate\s+GATE-E\s+North depot\s+not paired/)
    expect(await form.getByLabel('Code').inputValue()).toBe('')
    const east = await deviceOverApi('GATE-E')
    expect(east).toMatchObject({
      name: 'East gate',
      location_id: devices['GATE-N']?.location_id,
      require_pin: true,
    })
    expect(await ui.page.getByRole('checkbox', { name: 'Require a PIN at GATE-E' }).isChecked()).toBe(true)
  })

  it('Pair shows a large code and its expiry; the code pairs the device over HTTP and the page says so', async () => {
    // From the keyboard: the code takes the focus, so a screen reader reads it out.
    await ui.page.getByRole('button', { name: 'Pair GATE-E', exact: true }).focus()
    await ui.page.keyboard.press('Enter')
    const panel = pairingPanel('GATE-E')
    await panel.waitFor()
    await expect.poll(focused).toBe('Pairing code for GATE-E')
    const code = (await panel.locator('.pairing-code').innerText()).trim()
    expect(code).toMatch(PAIRING_CODE)
    // Large: read across a room, or off a phone held up to the tablet.
    // (An expression string: the test's TypeScript has no DOM types.)
    const size = await ui.page.evaluate<number>(
      "parseFloat(getComputedStyle(document.querySelector('.pairing-code')).fontSize)",
    )
    expect(size).toBeGreaterThanOrEqual(desktop ? 48 : 36)
    // Whole on the screen, a phone's too: the code's right edge is inside the window.
    const right = await ui.page.evaluate<number>(
      "document.querySelector('.pairing-code').getBoundingClientRect().left + document.querySelector('.pairing-code').scrollWidth",
    )
    expect(right).toBeLessThanOrEqual(screen.viewport.width)
    // Its expiry as the time of day the API gives, in the device's location's zone, named (the
    // browser's is UTC here; the tablet at the gate shows Paris time), and a countdown (from the
    // page's clock, read each second: a fresh code may read a second or two over 10:00).
    const expiresAt = await panel.locator('time').getAttribute('datetime')
    const ttl = Date.parse(expiresAt ?? '') - Date.now()
    expect(ttl).toBeGreaterThan(8 * 60_000)
    expect(ttl).toBeLessThanOrEqual(10 * 60_000)
    const inParis = new Intl.DateTimeFormat('en-GB', {
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
      timeZone: 'Europe/Paris',
    }).format(new Date(expiresAt ?? ''))
    // Shown once the location's zone is read ("…" until then, never first in another zone).
    await expect
      .poll(() => panel.innerText())
      .toMatch(new RegExp(`Expires at ${inParis} \\(in (10:0[0-2]|9:[0-5]\\d)\\)`))
    const text = await panel.innerText()
    expect(text).toContain(`open ${ui.base}/kiosk and enter this code`)
    expect(await accessibilityViolations(ui.page), 'pairing code').toEqual([])
    expect(await horizontalOverflow(ui.page), 'pairing code scrolls sideways').toBeLessThanOrEqual(0)
    if (desktop) await screenshot(ui.page, 'console-pairing-code', 'kiosk')

    const pairing = await pairFrom<Pairing>(ui.t, code)
    expect(pairing.status, JSON.stringify(pairing.body)).toBe(201)
    expect(pairing.body.device).toMatchObject({ code: 'GATE-E', paired: true })
    expect(pairing.body.key.secret).toMatch(/^dk_test_/)
    expect((await ui.t.client(pairing.body.key.secret).get('/v1/devices/current')).status).toBe(200)
    // The page looks every few seconds while it waits for the tablet.
    await panel
      .getByText('Paired: the tablet at GATE-E holds its key and can scan.')
      .waitFor({ timeout: 15_000 })
    expect(await deviceRow('GATE-E').getByText('paired', { exact: true }).isVisible()).toBe(true)
    expect(await panel.locator('.pairing-code').count()).toBe(0)
    await panel.getByRole('button', { name: 'Done' }).click()
    await panel.waitFor({ state: 'detached' })
    await expect.poll(focused).toBe('Pair again GATE-E')
  })

  it('Unpair asks first; then the device shows not paired and its key is refused', async () => {
    await ui.page.getByRole('button', { name: 'Unpair GATE-N' }).click()
    const question = ui.page.getByRole('group', { name: 'Unpair GATE-N?' })
    await question.waitFor()
    expect(await question.innerText()).toContain('within 5 seconds the tablet can no longer scan')
    expect(await accessibilityViolations(ui.page), 'unpair question').toEqual([])
    // Escape cancels: nothing is sent.
    await ui.page.keyboard.press('Escape')
    await question.waitFor({ state: 'detached' })
    await expect.poll(focused).toBe('Unpair GATE-N')
    expect((await deviceOverApi('GATE-N')).paired).toBe(true)

    await ui.page.getByRole('button', { name: 'Unpair GATE-N' }).click()
    await question.getByRole('button', { name: 'Unpair' }).click()
    await expect.poll(() => deviceRow('GATE-N').innerText()).toMatch(/GATE-N\s+North depot\s+not paired/)
    expect(await ui.page.getByRole('button', { name: 'Unpair GATE-N' }).count()).toBe(0)
    await expect.poll(focused).toBe('Pair GATE-N')
    expect((await deviceOverApi('GATE-N')).paired).toBe(false)
    // Refused within the key cache's 5 s.
    await expect
      .poll(async () => (await ui.t.client(northKey).get('/v1/devices/current')).status, {
        timeout: 8000,
        interval: 500,
      })
      .toBe(401)
    // Paired again for the PIN checks below, through the page's code.
    await ui.page.getByRole('button', { name: 'Pair GATE-N', exact: true }).click()
    const code = (await pairingPanel('GATE-N').locator('.pairing-code').innerText()).trim()
    const pairing = await pairFrom<Pairing>(ui.t, code)
    expect(pairing.status).toBe(201)
    northKey = pairing.body.key.secret
    await pairingPanel('GATE-N').getByText('Paired: the tablet at GATE-N').waitFor({ timeout: 15_000 })
    await pairingPanel('GATE-N').getByRole('button', { name: 'Done' }).click()
  })

  it('toggles require_pin, as the API then says', async () => {
    const box = ui.page.getByRole('checkbox', { name: 'Require a PIN at GATE-N' })
    await box.check()
    await expect.poll(async () => (await deviceOverApi('GATE-N')).require_pin).toBe(true)
    expect(await box.isChecked()).toBe(true)
    await box.uncheck()
    await expect.poll(async () => (await deviceOverApi('GATE-N')).require_pin).toBe(false)
    await box.check()
    await expect.poll(async () => (await deviceOverApi('GATE-N')).require_pin).toBe(true)
  })

  it('says when a code has expired; New code makes another and voids the first', async () => {
    await ui.page.getByRole('button', { name: 'Pair GATE-S', exact: true }).click()
    const panel = pairingPanel('GATE-S')
    const first = (await panel.locator('.pairing-code').innerText()).trim()
    expect(first).toMatch(PAIRING_CODE)
    await ui.page.clock.fastForward('10:01')
    await panel.getByRole('status').getByText('This code has expired: make a new one.').waitFor()
    expect(await panel.locator('.pairing-code-expired').innerText()).toBe(first)
    expect(await panel.innerText()).not.toContain('Expires at')
    expect(await accessibilityViolations(ui.page), 'expired code').toEqual([])

    // Back to the service's time, as the page's clock was.
    await ui.page.clock.setSystemTime(new Date())
    await panel.getByRole('button', { name: 'New code' }).click()
    await expect.poll(async () => (await panel.locator('.pairing-code').innerText()).trim()).not.toBe(first)
    const second = (await panel.locator('.pairing-code').innerText()).trim()
    expect(second).toMatch(PAIRING_CODE)
    // The page's clock is read again each second.
    await expect.poll(() => panel.getByRole('status').innerText()).toBe('')
    // GATE-S stands at no location: its expiry is in UTC, named.
    await expect
      .poll(() => panel.innerText())
      .toMatch(/Expires at \d{2}:\d{2} UTC \(in (10:0[0-2]|9:[0-5]\d)\)/)
    const voided = await pairFrom(ui.t, first)
    expect(voided.status).toBe(422)
    expect(errorOf(voided).code).toBe('invalid_pairing_code')
    await panel.getByRole('button', { name: 'Done' }).click()
    expect((await deviceOverApi('GATE-S')).paired).toBe(false)
  })

  it("shows the API's refusal in words with its request id: a device deleted meanwhile", async () => {
    const south = devices['GATE-S']?.id ?? ''
    expect((await api().delete(`/v1/devices/${south}`)).status).toBe(200)
    const refused = await api().post(`/v1/devices/${south}/pairing-codes`)
    expect(refused.status).toBe(404)
    await ui.page.getByRole('button', { name: 'Pair GATE-S', exact: true }).click()
    const alert = deviceRow('GATE-S').locator('xpath=following-sibling::tr[1]').getByRole('alert')
    await alert.getByText(errorOf(refused).message).waitFor()
    expect(await alert.innerText()).toMatch(/Request id: req_\w+/)
    // Clicked, not checked: the box stays as the API left it, unticked.
    await ui.page.getByRole('checkbox', { name: 'Require a PIN at GATE-S' }).click()
    await deviceRow('GATE-S').getByRole('alert').getByText(errorOf(refused).message).waitFor()
    expect(await accessibilityViolations(ui.page), 'refusals').toEqual([])
  })

  it("sets an operator's PIN masked, checked in the page; a scan with it is accepted; then clears it", async () => {
    const patches: string[] = []
    ui.page.on('request', (request) => {
      if (request.method() === 'PATCH' && new URL(request.url()).pathname.startsWith('/v1/operators/'))
        patches.push(request.postData() ?? '')
    })
    await openFromMenu(ui.page, 'Operators')
    await ui.page.getByRole('heading', { name: 'Operators', level: 1 }).waitFor()
    const row = ui.page
      .getByRole('row')
      .filter({ has: ui.page.getByRole('button', { name: 'Deactivate W-001' }) })
    // No PIN yet: the row (once the list is read) says "none".
    await row.getByText('none', { exact: true }).waitFor()
    await row.getByRole('button', { name: 'Set the PIN of W-001' }).click()
    const input = ui.page.getByLabel('New PIN for W-001 (4 to 8 digits)')
    // Opened to type in: the input has the focus.
    await expect.poll(focused).toMatch(/^pin-op_/)
    expect(await input.getAttribute('type')).toBe('password')
    // Refused in the page, before any request: letters, and too few digits.
    for (const wrong of ['73a1', '739']) {
      await input.fill(wrong)
      await ui.page.getByRole('button', { name: 'Save PIN' }).click()
      await ui.page.getByText('A PIN is 4 to 8 digits, nothing else.').waitFor()
      expect(await input.getAttribute('aria-invalid')).toBe('true')
      expect(await focused()).toMatch(/^pin-op_/)
    }
    expect(patches).toEqual([])
    expect(await accessibilityViolations(ui.page), 'PIN form refused').toEqual([])

    // Typed and sent from the keyboard (Enter), as a manager would.
    await input.fill('')
    await input.pressSequentially(PIN)
    if (desktop) await screenshot(ui.page, 'operators-pin')
    await ui.page.keyboard.press('Enter')
    await row.getByRole('status').getByText('PIN of W-001 saved.').waitFor()
    await expect.poll(focused).toBe('Change the PIN of W-001')
    expect(patches).toEqual([JSON.stringify({ pin: PIN })])
    expect(await row.getByText('set', { exact: true }).isVisible()).toBe(true)
    // Never shown back: not in the page, nor in what the page keeps.
    expect(await ui.page.content()).not.toContain(PIN)
    expect(
      await ui.page.evaluate<string>('JSON.stringify(localStorage) + JSON.stringify(sessionStorage)'),
    ).not.toContain(PIN)
    expect(await operatorOverApi('W-001')).toMatchObject({ has_pin: true })

    // GATE-N requires PINs (set above): the right PIN is accepted, a wrong one refused.
    const gate = ui.t.client(northKey)
    const wrong = await scanAtNorthGate(gate, { pin: '0000' })
    expect(wrong.status).toBe(422)
    expect(errorOf(wrong).code).toBe('invalid_pin')
    const right = await scanAtNorthGate(gate, { pin: PIN })
    expect(right.status, JSON.stringify(right.body)).toBe(201)
    expect(right.body).toMatchObject({ result: 'checked_in', operator_name: 'Ada Lovelace' })

    await row.getByRole('button', { name: 'Clear the PIN of W-001' }).click()
    const question = ui.page.getByRole('group', { name: 'Clear the PIN of W-001?' })
    await question.getByRole('button', { name: 'Clear the PIN' }).click()
    await row.getByRole('status').getByText('PIN of W-001 cleared.').waitFor()
    expect(await row.getByText('none', { exact: true }).isVisible()).toBe(true)
    expect(await operatorOverApi('W-001')).toMatchObject({ has_pin: false })
    expect(patches.at(-1)).toBe(JSON.stringify({ pin: null }))
    // Without a PIN the operator's scans at GATE-N are refused.
    const after = await scanAtNorthGate(gate, { pin: PIN, direction: 'out' })
    expect(errorOf(after).code).toBe('invalid_pin')
    expect(await accessibilityViolations(ui.page), 'operators').toEqual([])
  })

  it('logged no script error or CSP refusal beyond the refusals it provoked', () => {
    expect(ui.errors.filter((text) => !/status of (404|409|422)/.test(text))).toEqual([])
  })
})
