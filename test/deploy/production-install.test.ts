import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LOCK_FILE } from '../../scripts/build.mjs'
import { createTestDatabase, dialect, type TestDatabase } from '../helpers/database.js'
import { killAll, ROOT, type RunResult, run, START_MS, spawnChild, withFileLock } from '../helpers/process.js'

/**
 * The production install of docs/operations.md ("Production install"), on a copy of this checkout
 * outside it: `npm run build` with the dev dependencies, `npm prune --omit=dev`, then the built
 * server and CLI, and `npm run cli`, with no tsc, tsx or vite left. Before `npm run cli` ran the
 * built file, it answered `sh: 1: tsx: not found` there.
 *
 * The copy's node_modules is the checkout's, hard-linked (`cp -al`: a second, not the two minutes of
 * an `npm ci`, most of them compiling better-sqlite3 again), so the prune removes links, never the
 * checkout's files. The one file npm rewrites in place, its record of what is installed
 * (node_modules/.package-lock.json), is a copy of its own.
 */

const PRUNE_MS = 120_000

let dir: string
let database: TestDatabase

/**
 * The PATH of an operator's shell: without the node_modules/.bin folders that npx and npm put on
 * this test's, where tsx and tsc would be found all the same.
 */
const PATH = (process.env.PATH ?? '')
  .split(path.delimiter)
  .filter((entry) => !entry.split(path.sep).includes('node_modules'))
  .join(path.delimiter)

/** A command in the copy, with the service's database. */
function inCopy(command: string, args: string[], env: Record<string, string | undefined> = {}) {
  return run(command, args, { cwd: dir, env: { PATH, DATABASE_URL: database.url, ...env } })
}

function succeeded(result: RunResult): string {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
  return result.stdout
}

/** Every file of the checkout as it is now (tracked or new, not ignored), dist/ and node_modules. */
function copyCheckout(to: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    // A file deleted but not yet committed is listed too.
    .filter((file) => file !== '' && fs.existsSync(path.join(ROOT, file)))
  for (const file of files) fs.cpSync(path.join(ROOT, file), path.join(to, file), { verbatimSymlinks: true })
  // Without a build lock that a build of the checkout may hold (scripts/build.mjs).
  fs.cpSync(path.join(ROOT, 'dist'), path.join(to, 'dist'), {
    recursive: true,
    filter: (source) => path.basename(source) !== path.basename(LOCK_FILE),
  })
  execFileSync('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(to, 'node_modules')])
  const installed = path.join(to, 'node_modules', '.package-lock.json')
  fs.rmSync(installed)
  fs.copyFileSync(path.join(ROOT, 'node_modules', '.package-lock.json'), installed)
}

beforeAll(
  async () => {
    database = await createTestDatabase()
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'production-install-'))
    // Under the lock of the builds into dist/ (test/helpers/build-setup.ts): a build the global setup
    // finished, never one halfway through.
    await withFileLock('attendance-service-npm-start', async () => copyCheckout(dir))
    // Up to date, as the global setup left it: the hashes of scripts/build.mjs, no tsc.
    succeeded(
      await run('npm', ['run', '--silent', 'build'], { cwd: dir, env: { PATH }, timeoutMs: PRUNE_MS }),
    )
    succeeded(
      await run('npm', ['prune', '--omit=dev', '--offline', '--no-audit', '--no-fund'], {
        cwd: dir,
        env: { PATH },
        timeoutMs: PRUNE_MS,
      }),
    )
  },
  2 * PRUNE_MS + 60_000,
)

afterAll(async () => {
  await killAll()
  await database.drop()
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

describe(`a production install: built, then dev dependencies pruned (${dialect})`, () => {
  it('has no build tool left', () => {
    for (const tool of ['tsx', 'typescript', 'vite', 'vitest'])
      expect(fs.existsSync(path.join(dir, 'node_modules', tool)), tool).toBe(false)
  })

  it(
    'the CLI runs: npm run cli (its build step finds dist/ up to date) and node dist/src/cli.js',
    async () => {
      const created = JSON.parse(
        succeeded(
          await inCopy('npm', [
            'run',
            '--silent',
            'cli',
            '--',
            'keys',
            'create',
            '--account',
            'prod',
            '--mode',
            'live',
            '--json',
          ]),
        ),
      ) as { id: string; secret: string }
      expect(created.secret).toMatch(/^sk_live_/)
      const listed = JSON.parse(
        succeeded(await inCopy(process.execPath, ['dist/src/cli.js', 'keys', 'list', '--json'])),
      ) as { id: string }[]
      expect(listed.map((key) => key.id)).toContain(created.id)
      expect(succeeded(await inCopy(process.execPath, ['dist/src/cli.js', 'migrate']))).toMatch(/up to date/)
    },
    3 * START_MS,
  )

  it(
    'node dist/src/server.js serves: /readyz 200, and SIGTERM stops it',
    async () => {
      const server = spawnChild(process.execPath, ['dist/src/server.js'], {
        cwd: dir,
        env: {
          PATH,
          DATABASE_URL: database.url,
          HOST: '127.0.0.1',
          PORT: '0',
          WORKER: 'off',
          REDIS_URL: undefined,
          METRICS_PORT: undefined,
          LOG_LEVEL: 'info',
        },
      })
      const base = (await server.waitForStdout(/"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/))[1]
      expect((await fetch(`${base}/readyz`)).status).toBe(200)
      server.kill('SIGTERM')
      expect((await server.waitForExit()).code).toBe(0)
    },
    2 * START_MS,
  )

  it(
    'a build it cannot run says why: the dev dependencies are gone',
    async () => {
      fs.appendFileSync(path.join(dir, 'src', 'cli.ts'), '\n// changed after the install\n')
      const result = await inCopy('npm', ['run', '--silent', 'build'])
      expect(result.code).not.toBe(0)
      expect(result.stderr).toContain(
        'build: server failed: node_modules/.bin/tsc is not installed: the build needs the dev dependencies',
      )
    },
    START_MS,
  )
})
