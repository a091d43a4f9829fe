import fs from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

/**
 * Chromium itself, apart from the console's page helpers (browser.ts): a test that drives the API
 * through a browser (SSO's redirects) imports this alone and still runs on both databases, where a
 * file reaching browser.ts runs on SQLite only (test/helpers/test-kinds.ts).
 */

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
