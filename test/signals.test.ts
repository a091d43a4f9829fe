import fs from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { waitUntil } from './helpers/assertions.js'
import { createTestDatabase, dialect, type TestDatabase } from './helpers/database.js'
import { type Child, freePort, killAll, spawnChild, withFileLock } from './helpers/process.js'

/**
 * A stop of npm is a stop of the service it started (src/lib/parent-watch.ts): SIGTERM to npm alone,
 * as an operator or a supervisor that knows only npm's pid sends it, and nothing of the group is left
 * (npm passes the signal to its shell, which dies of it without passing it on; issue 35).
 */

/**
 * `npm start` builds first what changed since the tests' global setup built it (usually nothing),
 * under the lock test/server.test.ts takes too, so that no other run writes dist/ meanwhile; then
 * the start.
 */
const BUILD_AND_START_MS = 180_000
/** The watch reads its parents every second; the stop then takes the server's grace at most (10 s). */
const STOP_MS = 30_000

const databases: TestDatabase[] = []

afterAll(async () => {
  // The whole group of each npm (spawned with `group`), should a stop have failed.
  await killAll()
  for (const database of databases) await database.drop()
})

/** Whether any process of the group `pgid` is still running (a zombie is not: it has exited). */
function groupRunning(pgid: number): boolean {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .some((pid) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
        const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        return Number(group) === pgid && state !== 'Z'
      } catch {
        return false
      }
    })
}

/** The pid that logged the line whose `msg` is `message`. */
async function pidThatLogged(child: Child, message: string): Promise<number> {
  const line = await child.waitForStdout(new RegExp(`^\\{.*"msg":"${message}".*$`, 'm'))
  return (JSON.parse(line[0]) as { pid: number }).pid
}

/** SIGTERM to npm alone; then every process it started must exit, having stopped gracefully. */
async function stopNpm(npm: Child, service: number, shutdown: string): Promise<void> {
  const npmPid = npm.proc.pid as number
  expect(service).not.toBe(npmPid)
  process.kill(npmPid, 'SIGTERM')
  await waitUntil(
    () => groupRunning(npmPid),
    (running) => !running,
    { timeoutMs: STOP_MS },
  )
  const logged = npm.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.pid === service)
  expect(logged).toContainEqual(
    expect.objectContaining({
      msg: `the npm script that started this process has ended (npm: pid ${npmPid}): stopping`,
    }),
  )
  expect(logged).toContainEqual(expect.objectContaining({ msg: shutdown, signal: 'SIGTERM' }))
}

/**
 * `npm <args>` in a process group of its own (so that `killAll` ends all of it should a stop fail),
 * once it has logged `ready`; its build step under the lock of every test that runs one.
 */
function startUnderNpm(
  args: string[],
  env: Record<string, string | undefined>,
  ready: string,
): Promise<Child> {
  return withFileLock('attendance-service-npm-start', async () => {
    const child = spawnChild('npm', args, { env: { LOG_LEVEL: 'info', ...env }, group: true })
    await child.waitForStdout(new RegExp(`"msg":"${ready}`), BUILD_AND_START_MS)
    return child
  })
}

describe.runIf(dialect === 'sqlite' && process.platform === 'linux')('SIGTERM to npm', () => {
  it('npm start: the server it started stops gracefully, and its port stops answering', {
    timeout: 120_000 + BUILD_AND_START_MS + 2 * STOP_MS,
  }, async () => {
    const database = await createTestDatabase()
    databases.push(database)
    const port = await freePort()
    const listening = 'Server listening at [^"]+'
    const npm = await startUnderNpm(
      ['start'],
      { DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1' },
      listening,
    )
    const health = `http://127.0.0.1:${port}/healthz`
    expect((await fetch(health)).status).toBe(200)
    const server = await pidThatLogged(npm, listening)

    await stopNpm(npm, server, 'shutting down')
    const answer = await fetch(health).then(
      (res) => res.status,
      () => 'refused',
    )
    expect(answer).toBe('refused')
  })

  it('npm run cli -- worker: the worker it started stops gracefully', {
    timeout: 120_000 + BUILD_AND_START_MS + STOP_MS,
  }, async () => {
    const database = await createTestDatabase()
    databases.push(database)
    const started = 'webhook worker and forgotten check-out sweep started'
    const npm = await startUnderNpm(
      ['run', 'cli', '--', 'worker'],
      { DATABASE_URL: database.url, REDIS_URL: undefined },
      started,
    )
    await stopNpm(npm, await pidThatLogged(npm, started), 'worker shutting down')
  })
})
