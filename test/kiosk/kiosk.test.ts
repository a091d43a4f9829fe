import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.js'
import type { Device, List, Location, Scan } from '../helpers/assertions.js'
import {
  accessibilityViolations,
  chromiumAvailable,
  horizontalOverflow,
  launchChromium,
} from '../helpers/browser.js'
import { buildConsoleTestApp, consolePage, listen } from '../helpers/console.js'

/** A tablet held sideways at the gate. */
const TABLET = { name: 'desktop' as const, viewport: { width: 1024, height: 768 } }

type PairingCode = { code: string }

/** A scan as the kiosk's queue keeps it (console/src/kiosk/storage.ts). */
interface QueuedScan {
  seq: number
  client_scan_id: string
  device_id: string
  operator_ident: string
  direction: string
  time: string
}

/**
 * Reads the page's own IndexedDB: a store's `key`, or all of it (an expression string: the test's
 * TypeScript has no DOM types).
 */
async function readKioskStore<T>(page: Page, store: 'settings' | 'queue', key?: string): Promise<T> {
  const read = key === undefined ? 'getAll()' : `get(${JSON.stringify(key)})`
  const json = await page.evaluate<string>(`new Promise((resolve, reject) => {
    const open = indexedDB.open('attendance-kiosk')
    open.onerror = () => reject(open.error)
    open.onsuccess = () => {
      const read = open.result.transaction('${store}').objectStore('${store}').${read}
      read.onsuccess = () => resolve(JSON.stringify(read.result))
    }
  })`)
  return JSON.parse(json) as T
}

/**
 * The time clock's kiosk page in Debian's Chromium against the real service: paired with a code made
 * through the API, then scanning as the workers at a gate would, each check read back over the API.
 */
describe.runIf(chromiumAvailable())('the kiosk page at /kiosk', () => {
  let t: TestApp
  let base: string
  let browser: Browser
  let page: Page
  let pageErrors: string[]
  let key: string
  /** Every scan request the page made, by path. */
  const scanRequests: string[] = []
  /** The body of every batch the page sent. */
  const batches: Array<{ scans: QueuedScan[]; sent_at: string }> = []

  const api = () => t.client(key)
  const feedback = () => page.getByRole('status')
  const badge = () => page.getByLabel('Badge or ident')

  async function scansOf(ident: string): Promise<Scan[]> {
    const all = await api().get<List<Scan>>('/v1/scans?limit=100')
    expect(all.status).toBe(200)
    return all.body.data.filter((scan) => scan.operator_ident === ident).reverse()
  }

  beforeAll(async () => {
    t = await buildConsoleTestApp()
    base = await listen(t)
    key = (await t.key({ mode: 'test' })).secret
    const location = await api().post<Location>('/v1/locations', {
      name: 'North gate',
      timezone: 'Europe/Paris',
    })
    expect(location.status).toBe(201)
    const device = await api().post<Device>('/v1/devices', { code: 'GATE-N', location_id: location.body.id })
    expect(device.status).toBe(201)
    for (const [ident, name] of [
      ['W-001', 'Ada Lovelace'],
      ['W-002', 'Grace Hopper'],
      ['W-003', 'Katherine Johnson'],
      ['W-004', 'Dorothy Vaughan'],
      ['W-005', 'Mary Jackson'],
      ['W-006', 'Annie Easley'],
      ['W-007', 'Evelyn Boyd Granville'],
      ['W-008', 'Christine Darden'],
      ['W-009', 'Melba Roy Mouton'],
    ]) {
      expect((await api().post('/v1/operators', { ident, name })).status).toBe(201)
    }
    browser = await launchChromium()
    ;({ page, errors: pageErrors } = await consolePage(browser, TABLET))
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname
      if (request.method() === 'POST' && path.startsWith('/v1/scans')) scanRequests.push(path)
      if (path === '/v1/scans/batch') batches.push(request.postDataJSON())
    })
    // Katherine came in two hours ago, so her scan at the kiosk checks her out (a check-out of a
    // check-in made at the kiosk would have to wait out the service's 60 s duplicate window).
    const earlier = await api().post('/v1/scans', {
      device_id: 'GATE-N',
      operator_ident: 'W-003',
      time: new Date(Date.now() - 2 * 3600_000).toISOString(),
    })
    expect(earlier.status).toBe(201)
    const code = await api().post<PairingCode>(`/v1/devices/${device.body.id}/pairing-codes`, {})
    expect(code.status).toBe(201)
    await page.goto(`${base}/kiosk/`)
    expect(await accessibilityViolations(page), 'pairing screen').toEqual([])
    await page.getByLabel('Pairing code').fill(code.body.code)
    await page.getByRole('button', { name: 'Pair' }).click()
    await page.getByRole('heading', { name: 'North gate', level: 1 }).waitFor()
    // A build of the console, a browser and a service, on a machine shared with other suites.
  }, 90_000)

  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  it('keeps the device key in IndexedDB, never in the address or in web storage', async () => {
    expect(page.url()).toBe(`${base}/kiosk/`)
    expect(await page.evaluate<number>('localStorage.length + sessionStorage.length')).toBe(0)
    const stored = await readKioskStore(page, 'settings', 'pairing')
    expect(stored).toEqual({ secret: expect.stringMatching(/^dk_test_/), deviceCode: 'GATE-N' })
  })

  it('fits a tablet held either way, usable by keyboard alone: the badge input has the focus', async () => {
    for (const viewport of [TABLET.viewport, { width: 768, height: 1024 }]) {
      await page.setViewportSize(viewport)
      expect(await horizontalOverflow(page), `${viewport.width}×${viewport.height}`).toBeLessThanOrEqual(0)
    }
    await page.setViewportSize(TABLET.viewport)
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('badge')
  })

  it('scans a worker in and out online; the feedback names the worker (scenario 1)', async () => {
    expect(await accessibilityViolations(page), 'idle screen').toEqual([])
    await badge().fill('W-001')
    await page.keyboard.press('Enter')
    await expect.poll(() => feedback().innerText()).toMatch(/Ada Lovelace\s+IN\s+\d{2}:\d{2}/)
    expect(await accessibilityViolations(page), 'feedback').toEqual([])
    await badge().fill('W-003')
    await page.getByRole('button', { name: 'Check in or out' }).click()
    await expect.poll(() => feedback().innerText()).toMatch(/Katherine Johnson\s+OUT\s+\d{2}:\d{2}/)

    const recorded = [...(await scansOf('W-001')), ...(await scansOf('W-003')).slice(1)]
    expect(
      recorded.map((scan) => [scan.operator_ident, scan.result, scan.device_id, scan.direction]),
    ).toEqual([
      ['W-001', 'checked_in', 'GATE-N', 'auto'],
      ['W-003', 'checked_out', 'GATE-N', 'auto'],
    ])
    for (const scan of recorded) expect(scan).toMatchObject({ client_scan_id: expect.any(String) })
    expect(pageErrors).toEqual([])
  })

  it('sends one scan for the same badge entered twice within 10 s (scenario 4)', async () => {
    const before = scanRequests.length
    await badge().fill('W-002')
    await page.keyboard.press('Enter')
    await badge().fill('W-002')
    await page.keyboard.press('Enter')
    await expect
      .poll(() => feedback().innerText())
      .toMatch(/Grace Hopper\s+IN[\s\S]*Already recorded \d+ s ago/)
    expect(scanRequests.slice(before)).toEqual(['/v1/scans'])
    expect((await scansOf('W-002')).map((scan) => scan.result)).toEqual(['checked_in'])
    expect(await accessibilityViolations(page), 'repeat feedback').toEqual([])
    expect(pageErrors).toEqual([])
  })

  it('queues scans offline, keeps them through a reload, and syncs them once each in order (scenario 2)', async () => {
    const context = page.context()
    // The shell must be kept before the network goes: the service worker is active once it is.
    await page.evaluate('navigator.serviceWorker.ready.then(() => true)')
    // Both: a service worker's own requests escape setOffline, and the route aborts them too.
    await context.setOffline(true)
    await context.route('**/*', (route) => route.abort())
    for (const ident of ['W-004', 'W-005', 'W-006']) {
      await badge().fill(ident)
      await page.keyboard.press('Enter')
      await expect.poll(() => feedback().innerText()).toMatch(new RegExp(`${ident}\\s+Saved, will sync`))
    }
    await page.getByText('3 scans waiting to sync').waitFor()

    await page.reload()
    await page.getByRole('heading', { name: 'North gate', level: 1 }).waitFor()
    await page.getByText('3 scans waiting to sync').waitFor()
    const queued = await readKioskStore<QueuedScan[]>(page, 'queue')
    expect(queued.map((scan) => scan.operator_ident)).toEqual(['W-004', 'W-005', 'W-006'])
    for (const ident of ['W-004', 'W-005', 'W-006']) expect(await scansOf(ident)).toEqual([])

    await context.unroute('**/*')
    await context.setOffline(false)
    await page.getByText('waiting to sync').waitFor({ state: 'detached' })
    const all = await api().get<List<Scan>>('/v1/scans?limit=100')
    const synced = all.body.data
      .filter((scan) => ['W-004', 'W-005', 'W-006'].includes(scan.operator_ident))
      .reverse()
    expect(
      synced.map((scan) => [scan.operator_ident, scan.client_scan_id, Date.parse(scan.time), scan.result]),
    ).toEqual(
      queued.map((scan) => [scan.operator_ident, scan.client_scan_id, Date.parse(scan.time), 'checked_in']),
    )
    // The requests the cut network refused are logged by the browser; nothing else may be.
    expect(pageErrors.filter((error) => error !== 'Failed to load resource: net::ERR_FAILED')).toEqual([])
  })

  it('sends a scan whose answer was lost again, and the service records it once (scenario 3)', async () => {
    // The service commits the scan; the page never hears of it.
    await page.route(
      '**/v1/scans',
      async (route) => {
        await route.fetch()
        await route.abort()
      },
      { times: 1 },
    )
    await badge().fill('W-007')
    await page.keyboard.press('Enter')
    await expect.poll(() => feedback().innerText()).toMatch(/W-007\s+Saved, will sync/)
    const [lost] = await readKioskStore<QueuedScan[]>(page, 'queue')
    expect((await scansOf('W-007')).map((scan) => scan.client_scan_id)).toEqual([lost?.client_scan_id])

    // The next scan sends the queue first: the lost one again, under the same client_scan_id.
    await badge().fill('W-008')
    await page.keyboard.press('Enter')
    await expect.poll(() => feedback().innerText()).toMatch(/Christine Darden\s+IN/)
    expect(batches.at(-1)?.scans.map((scan) => scan.client_scan_id)).toEqual([lost?.client_scan_id])
    expect((await scansOf('W-007')).map((scan) => [scan.client_scan_id, scan.result])).toEqual([
      [lost?.client_scan_id, 'checked_in'],
    ])
    expect(await readKioskStore<QueuedScan[]>(page, 'queue')).toEqual([])
  })

  it('sends 600 queued scans as 500 then 100, oldest first (scenario 6)', async () => {
    const start = Date.now() - 3600_000
    // Badges nobody has: each is refused on its own (unknown_operator), and dropped from the queue.
    const queued = Array.from({ length: 600 }, (_, i) => ({
      client_scan_id: `bulk-${String(i).padStart(3, '0')}`,
      device_id: 'GATE-N',
      operator_ident: `NOBODY-${i}`,
      direction: 'auto',
      time: new Date(start + i * 1000).toISOString(),
    }))
    await page.evaluate<void>(`new Promise((resolve, reject) => {
      const open = indexedDB.open('attendance-kiosk')
      open.onsuccess = () => {
        const transaction = open.result.transaction('queue', 'readwrite')
        for (const scan of ${JSON.stringify(queued)}) transaction.objectStore('queue').add(scan)
        transaction.oncomplete = () => resolve()
        transaction.onerror = () => reject(transaction.error)
      }
    })`)
    const before = batches.length
    // Flushed on load.
    await page.reload()
    await page.getByText('600 scans refused by the service and dropped.').waitFor({ timeout: 60_000 })
    const sent = batches.slice(before)
    expect(sent.map((batch) => batch.scans.length)).toEqual([500, 100])
    expect(sent.flatMap((batch) => batch.scans.map((scan) => scan.client_scan_id))).toEqual(
      queued.map((scan) => scan.client_scan_id),
    )
    expect(await readKioskStore<QueuedScan[]>(page, 'queue')).toEqual([])
  }, 90_000)

  it("stamps scans on the service's clock when the tablet's moves two hours while offline (scenario 5)", async () => {
    const context = page.context()
    await context.setOffline(true)
    await context.route('**/*', (route) => route.abort())
    const before = Date.now()
    // The tablet's wall clock two hours ahead, as the page reads it. Not page.clock: it fakes
    // performance.now() too, which a tablet whose clock is set does not do.
    await page.evaluate('{ const wall = Date.now; Date.now = () => wall() + 2 * 3600000 }')
    expect(await page.evaluate<number>('Date.now()')).toBeGreaterThan(before + 2 * 3600_000 - 1_000)
    await badge().fill('W-009')
    await page.keyboard.press('Enter')
    await expect.poll(() => feedback().innerText()).toMatch(/W-009\s+Saved, will sync/)
    const after = Date.now()
    await context.unroute('**/*')
    await context.setOffline(false)
    await page.getByText('waiting to sync').waitFor({ state: 'detached' })
    const [scan] = await scansOf('W-009')
    // The service's time when it was captured (the sync's round trip aside), not the tablet's.
    expect(Date.parse(scan?.time ?? '')).toBeGreaterThanOrEqual(before - 2_000)
    expect(Date.parse(scan?.time ?? '')).toBeLessThanOrEqual(after + 2_000)
    expect(scan?.clock_skew_ms).toBeNull()
  })

  it('says the device was unpaired, and keeps the scan it could not send (scenario 7)', async () => {
    const device = (await api().get<List<Device>>('/v1/devices?code=GATE-N')).body.data[0] as Device
    expect((await api().post(`/v1/devices/${device.id}/unpair`, {})).status).toBe(200)
    const { secret } = await readKioskStore<{ secret: string }>(page, 'settings', 'pairing')
    // A revoked key is refused within 5 s (keys are cached that long).
    await expect
      .poll(async () => (await t.client(secret).get('/v1/devices/current')).status, { timeout: 10_000 })
      .toBe(401)
    await badge().fill('W-005')
    await page.keyboard.press('Enter')
    await page.getByRole('alert').filter({ hasText: 'This device was unpaired' }).waitFor()
    expect((await readKioskStore<QueuedScan[]>(page, 'queue')).map((scan) => scan.operator_ident)).toEqual([
      'W-005',
    ])
    await page.getByText('1 scan waiting to sync').waitFor()
    expect(await accessibilityViolations(page), 'unpaired screen').toEqual([])
  })
})
