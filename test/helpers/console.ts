import fs from 'node:fs'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import type { Config } from '../../src/config.js'
import { buildTestApp, type TestApp } from './app.js'
import type { Screen } from './browser.js'
import { ROOT, run, withFileLock } from './process.js'

/** What the console's bundle is built from: its own source and the typed client's, which it bundles. */
const CONSOLE_SOURCES = [path.join(ROOT, 'console'), path.join(ROOT, 'packages', 'client', 'src')]
export const CONSOLE_BUILD = path.join(ROOT, 'dist', 'console')

function newestModification(dir: string): number {
  return Math.max(
    ...fs.readdirSync(dir, { withFileTypes: true }).map((entry) => {
      const full = path.join(dir, entry.name)
      return entry.isDirectory() ? newestModification(full) : fs.statSync(full).mtimeMs
    }),
  )
}

/** Builds the console unless dist/console is newer than every source file (`npm test` built it). */
async function ensureConsoleBuilt(): Promise<void> {
  const index = path.join(CONSOLE_BUILD, 'index.html')
  const newest = Math.max(...CONSOLE_SOURCES.map(newestModification))
  if (fs.existsSync(index) && fs.statSync(index).mtimeMs >= newest) return
  const build = await run('npm', ['run', '--silent', 'build:console'], { timeoutMs: 120_000 })
  if (build.code !== 0) throw new Error(`npm run build:console failed:\n${build.stdout}\n${build.stderr}`)
}

/**
 * A test app that serves the built console. The build and the app's reading of it happen under the
 * lock the `npm start` test holds while it builds into dist/, so no app reads a half-written build.
 */
export async function buildConsoleTestApp(overrides: Partial<Config> = {}): Promise<TestApp> {
  return withFileLock('attendance-service-npm-start', async () => {
    await ensureConsoleBuilt()
    return buildTestApp(overrides)
  })
}

/** The app listening on a real loopback port, as a browser needs it; answers its base URL. */
export async function listen(t: TestApp): Promise<string> {
  return t.app.listen({ host: '127.0.0.1', port: 0 })
}

/** `YYYY-MM-DD` of an instant in UTC, the browser's zone in these tests (`consolePage`). */
export const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/**
 * A page in a fresh browser context of the screen's size (UTC, British English unless `options`
 * says another locale; a touch screen with `hasTouch`), and the script errors and CSP refusals it
 * logs: a test ends by checking there were none it did not expect.
 */
export async function consolePage(
  browser: Browser,
  screen: Screen,
  options: { locale?: string; hasTouch?: boolean } = {},
): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport: screen.viewport,
    locale: 'en-GB',
    timezoneId: 'UTC',
    ...options,
  })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
  return { page, errors }
}

/**
 * Signs in at `base` with `key` from the keyboard (behind the sign-in page's "Use an API key": people
 * sign in with their e-mail), and waits for the home page, shown first.
 */
export async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/console/`)
  await page.getByRole('link', { name: 'Use an API key' }).click()
  await page.getByLabel('API key').fill(key)
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
}

/**
 * Opens a page from the main menu, as a manager would: on a phone the menu is folded behind its
 * button, which is pressed first.
 */
export async function openFromMenu(page: Page, label: string): Promise<void> {
  const toggle = page.getByRole('button', { name: 'Menu' })
  if ((await toggle.isVisible()) && (await toggle.getAttribute('aria-expanded')) !== 'true')
    await toggle.click()
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click()
}
