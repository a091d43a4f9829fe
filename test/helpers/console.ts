import fs from 'node:fs'
import path from 'node:path'
import type { Config } from '../../src/config.js'
import { buildTestApp, type TestApp } from './app.js'
import { ROOT, run, withFileLock } from './process.js'

export const CONSOLE_SOURCE = path.join(ROOT, 'console')
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
  if (fs.existsSync(index) && fs.statSync(index).mtimeMs >= newestModification(CONSOLE_SOURCE)) return
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
