import fs from 'node:fs'
import path from 'node:path'
import axe from 'axe-core'
import { type Browser, chromium, type Page } from 'playwright-core'
import { expect } from 'vitest'
import { dialect } from './database.js'
import { ROOT } from './process.js'

/** Debian's Chromium: playwright-core drives it, and never downloads a browser of its own. */
export const CHROMIUM = '/usr/bin/chromium'

/**
 * Whether browser tests run. Without Chromium they are skipped with a message, unless
 * REQUIRE_CHROMIUM=1 (as in .ci/run), where a missing browser fails the run.
 */
export function chromiumAvailable(): boolean {
  if (fs.existsSync(CHROMIUM)) return true
  if (process.env.REQUIRE_CHROMIUM === '1') {
    throw new Error(`REQUIRE_CHROMIUM=1 but ${CHROMIUM} is missing: apt-get install -y chromium`)
  }
  console.warn(
    `${CHROMIUM} is missing: the console's browser tests are skipped (apt-get install -y chromium).`,
  )
  return false
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Containers run tests as root (no sandbox possible) with a small /dev/shm.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  })
}

export const VIEWPORT = { width: 1280, height: 800 }

/** A phone held upright (an iPhone 14's CSS pixels). */
export const PHONE_VIEWPORT = { width: 390, height: 844 }

export interface Screen {
  /** `desktop` or `phone`: in test names and in screenshot names. */
  name: 'desktop' | 'phone'
  viewport: { width: number; height: number }
}

/** Every console test runs on both: a manager at a desk and one on a phone. */
export const SCREENS: Screen[] = [
  { name: 'desktop', viewport: VIEWPORT },
  { name: 'phone', viewport: PHONE_VIEWPORT },
]

/**
 * How far the page is wider than the window, in CSS pixels (0 when it fits): a page that scrolls
 * sideways on a phone is one nobody can use. Wide tables scroll in their own boxes instead.
 */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')
}

/**
 * The serious and critical axe-core violations of the page as it is now, one line each. axe's
 * source is evaluated through the DevTools protocol, which the page's CSP does not govern.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source)
  const violations = await page.evaluate(async () => {
    // Runs in the page: the whole document is checked.
    const result = await (globalThis as unknown as { axe: typeof axe }).axe.run({
      resultTypes: ['violations'],
    })
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      targets: v.nodes.map((node) => node.target.join(' ')).slice(0, 3),
    }))
  })
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.targets.join(', ')}`)
}

/**
 * docs/<folder>/<name>.png (the console's pages in docs/console/, the kiosk's screens and the console's
 * pairing in docs/kiosk/), only with CONSOLE_SCREENSHOTS=1 (so an ordinary run never rewrites the
 * committed images) and only on one database (both would write the same files).
 */
export async function screenshot(
  page: Page,
  name: string,
  folder: 'console' | 'kiosk' = 'console',
): Promise<void> {
  if (process.env.CONSOLE_SCREENSHOTS !== '1' || dialect !== 'sqlite') return
  await page.screenshot({ path: path.join(ROOT, 'docs', folder, `${name}.png`) })
}

/**
 * A page as a manager must be able to use it, on either screen: no serious accessibility violation,
 * no sideways scrolling of the page. Its screenshot (`screenshot`) is `name` on a desktop, and
 * `name-phone` on a phone for the pages named in `phoneScreenshots` (the docs show a few).
 */
export async function expectUsablePage(
  page: Page,
  screen: Screen,
  name: string,
  phoneScreenshots: string[],
): Promise<void> {
  expect(await accessibilityViolations(page), name).toEqual([])
  expect(await horizontalOverflow(page), `${name} scrolls sideways`).toBeLessThanOrEqual(0)
  if (screen.name === 'desktop') await screenshot(page, name)
  else if (phoneScreenshots.includes(name)) await screenshot(page, `${name}-phone`)
}

/** The page's sessionStorage as JSON (an expression string: the test's TypeScript has no DOM types). */
export function sessionStorageOf(page: Page): Promise<string> {
  return page.evaluate<string>('JSON.stringify(sessionStorage)')
}
