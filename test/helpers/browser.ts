import path from 'node:path'
import axe from 'axe-core'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect } from 'vitest'
import type { Config } from '../../src/config.js'
import { setKeyLabel } from '../../src/modules/keys/service.js'
import type { TestApp } from './app.js'
import { launchChromium } from './chromium.js'
import { buildConsoleTestApp, consolePage, listen, signIn } from './console.js'
import { dialect } from './database.js'
import { ROOT } from './process.js'

export { CHROMIUM, chromiumAvailable, launchChromium } from './chromium.js'

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

/** What a console test file drives on one screen (`useConsole`), once its `beforeAll` has run. */
export interface ConsoleUnderTest {
  /** The service, serving the built console. */
  readonly t: TestApp
  /** The service's base URL on its loopback port. */
  readonly base: string
  /** The secret of the test key the page signs in with, and the key's id. */
  readonly key: string
  readonly keyId: string
  readonly browser: Browser
  readonly page: Page
  /** The page's script errors and CSP refusals (`consolePage`): a file ends by checking them. */
  readonly errors: string[]
}

/**
 * For the tests of the enclosing `describe`: a service serving the console (built with `app`) on a
 * real port, a test key (of `account` if given, named `keyLabel` as `cli keys label` names it), the
 * file's data put in by `seed`, then Chromium and a page of the screen's size, signed in unless
 * `signIn` is false (a file that tests the sign-in itself). `beforeSignIn` prepares the page first
 * (e.g. installs its clock). All of it before the tests, within `timeoutMs`; closed after them.
 * It lives here, not in console.ts: the serving tests import console.ts and run on both databases,
 * and a file that reaches this one runs on SQLite alone (test/helpers/test-kinds.ts).
 */
export function useConsole(
  screen: Screen,
  options: {
    app?: Partial<Config>
    account?: string
    keyLabel?: string
    seed?: () => Promise<void>
    beforeSignIn?: (page: Page) => Promise<void>
    signIn?: boolean
    /** For all of the set-up, as `beforeAll` takes it: a build, a service, the data and a browser. */
    timeoutMs: number
  },
): ConsoleUnderTest {
  const state: { -readonly [K in keyof ConsoleUnderTest]?: ConsoleUnderTest[K] } = {}
  beforeAll(async () => {
    const t = await buildConsoleTestApp(options.app)
    state.t = t
    const base = await listen(t)
    state.base = base
    const created = await t.key({ account: options.account, mode: 'test' })
    state.key = created.secret
    state.keyId = created.id
    if (options.keyLabel !== undefined) await setKeyLabel(t.db, created.id, options.keyLabel)
    await options.seed?.()
    state.browser = await launchChromium()
    const { page, errors } = await consolePage(state.browser, screen)
    state.page = page
    state.errors = errors
    await options.beforeSignIn?.(page)
    if (options.signIn !== false) await signIn(page, base, created.secret)
  }, options.timeoutMs)
  afterAll(async () => {
    await state.browser?.close()
    await state.t?.close()
  })
  const ui = {} as ConsoleUnderTest
  for (const name of ['t', 'base', 'key', 'keyId', 'browser', 'page', 'errors'] as const) {
    Object.defineProperty(ui, name, {
      get() {
        const value = state[name]
        if (value === undefined)
          throw new Error(`the console's ${name} is set in beforeAll: use it in a hook or a test`)
        return value
      },
    })
  }
  return ui
}
