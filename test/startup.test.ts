import { afterAll, describe, expect, it } from 'vitest'
import { waitUntil } from './helpers/assertions.js'
import { createTestDatabase, dialect, type TestDatabase } from './helpers/database.js'
import { builtScript, freePort, killAll, START_MS, spawnChild } from './helpers/process.js'
import { jsonLines, LISTENING, startServerProcess } from './helpers/server-process.js'
import { TcpProxy } from './helpers/tcp-proxy.js'

/**
 * A start before the database is there: the server waits for it (retrying, each failure one JSON
 * line naming DATABASE_URL without its password) while its port already answers, `/readyz` 503
 * saying why; it serves once the database answers, or exits 1 naming DATABASE_URL past
 * DATABASE_STARTUP_TIMEOUT_MS. The database appears through a TCP proxy to PostgreSQL opened on the
 * port DATABASE_URL names, where nothing listened at first.
 */

const PASSWORD = 'not-logged-s3cret'
const databases: TestDatabase[] = []
const proxies: TcpProxy[] = []
afterAll(async () => {
  await killAll()
  for (const proxy of proxies) await proxy.close()
  for (const database of databases) await database.drop()
})

/** `url` with a password, sent to `port` instead of its own. */
function throughPort(url: string, port: number): string {
  const moved = new URL(url)
  moved.port = String(port)
  // PostgreSQL trusts the tests' connections: the password is only there to be kept out of the logs.
  moved.password = PASSWORD
  return moved.toString()
}

/** An answer, or undefined while nothing listens on the port. */
async function tryGet(url: string): Promise<{ status: number; body: unknown } | undefined> {
  try {
    const res = await fetch(url)
    return { status: res.status, body: await res.json() }
  } catch {
    return undefined
  }
}

describe.runIf(dialect === 'postgres')('a start before the database is reachable', () => {
  it('waits with /readyz 503 (the port answers), then serves once the database appears, without exiting', {
    timeout: 3 * START_MS,
  }, async () => {
    const database = await createTestDatabase()
    databases.push(database)
    const databasePort = await freePort()
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const { child } = startServerProcess({
      DATABASE_URL: throughPort(database.url, databasePort),
      PORT: String(port),
      DATABASE_STARTUP_TIMEOUT_MS: '300000',
      SHUTDOWN_GRACE_MS: '0',
    })
    await child.waitForStdout(/cannot be reached; trying again/)
    const waiting = await waitUntil(
      () => tryGet(`${base}/readyz`),
      (answer) => answer !== undefined,
      { timeoutMs: START_MS },
    )
    expect(waiting).toEqual({
      status: 503,
      body: {
        error: expect.objectContaining({
          type: 'api_error',
          code: 'not_ready',
          message: expect.stringContaining('DATABASE_URL'),
        }),
      },
    })
    expect(await tryGet(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } })

    const proxy = new TcpProxy(Number(new URL(database.url).port || 5432))
    proxies.push(proxy)
    await proxy.listen(databasePort)
    await child.waitForStdout(LISTENING, START_MS)
    const ready = await waitUntil(
      () => tryGet(`${base}/readyz`),
      (answer) => answer?.status === 200,
      { timeoutMs: START_MS },
    )
    expect(ready).toEqual({ status: 200, body: { status: 'ready' } })
    expect(child.hasExited).toBe(false)

    child.kill('SIGTERM')
    expect(await child.waitForExit(START_MS)).toEqual({ code: 0, signal: null })
    const lines = [...jsonLines(child.stdout), ...jsonLines(child.stderr)]
    const failures = lines.filter((line) => line.database_url !== undefined)
    expect(failures.length).toBeGreaterThan(0)
    expect(failures[0]).toMatchObject({
      level: 40,
      database_url: `${throughPort(database.url, databasePort).replace(PASSWORD, '***')}`,
      error: expect.stringContaining('ECONNREFUSED'),
    })
    expect(`${child.stdout}${child.stderr}`).not.toContain(PASSWORD)
  })

  it('never gets one: exits 1 after DATABASE_STARTUP_TIMEOUT_MS with one line naming DATABASE_URL', {
    timeout: 2 * START_MS,
  }, async () => {
    const nowhere = await freePort()
    const { child } = startServerProcess({
      DATABASE_URL: `postgres://root:${PASSWORD}@127.0.0.1:${nowhere}/none`,
      DATABASE_STARTUP_TIMEOUT_MS: '2000',
    })
    const exit = await child.waitForExit(START_MS)
    expect(exit).toEqual({ code: 1, signal: null })
    expect(child.stderr.trim().split('\n')).toEqual([
      `DATABASE_URL (postgres://root:***@127.0.0.1:${nowhere}/none) could not be reached within 2000 ms (DATABASE_STARTUP_TIMEOUT_MS=2000): connect ECONNREFUSED 127.0.0.1:${nowhere}`,
    ])
    // Each attempt before it: a JSON line, the password left out.
    expect(jsonLines(child.stdout).filter((line) => line.database_url !== undefined).length).toBeGreaterThan(
      1,
    )
    expect(`${child.stdout}${child.stderr}`).not.toContain(PASSWORD)
    expect(child.stdout).not.toMatch(LISTENING)
  })

  it('SIGTERM while it waits: the waiting listener closes and the process exits 0', {
    timeout: 2 * START_MS,
  }, async () => {
    const nowhere = await freePort()
    const port = await freePort()
    const { child } = startServerProcess({
      DATABASE_URL: `postgres://root@127.0.0.1:${nowhere}/none`,
      PORT: String(port),
      DATABASE_STARTUP_TIMEOUT_MS: '300000',
    })
    await child.waitForStdout(/cannot be reached; trying again/)
    await waitUntil(
      () => tryGet(`http://127.0.0.1:${port}/readyz`),
      (answer) => answer?.status === 503,
      { timeoutMs: START_MS },
    )
    child.kill('SIGTERM')
    expect(await child.waitForExit(START_MS)).toEqual({ code: 0, signal: null })
    expect(jsonLines(child.stdout)).toContainEqual(
      expect.objectContaining({ msg: 'shutting down', signal: 'SIGTERM' }),
    )
    expect(child.stderr).toBe('')
  })

  it('cli worker that never gets one: exits 1 after DATABASE_STARTUP_TIMEOUT_MS with one line naming DATABASE_URL', {
    timeout: 2 * START_MS,
  }, async () => {
    const nowhere = await freePort()
    const worker = spawnChild(process.execPath, [builtScript('cli'), 'worker'], {
      env: {
        DATABASE_URL: `postgres://root:${PASSWORD}@127.0.0.1:${nowhere}/none`,
        DATABASE_STARTUP_TIMEOUT_MS: '2000',
        LOG_LEVEL: 'info',
      },
    })
    expect(await worker.waitForExit(START_MS)).toEqual({ code: 1, signal: null })
    expect(worker.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^DATABASE_URL \\(postgres://root:\\*\\*\\*@127\\.0\\.0\\.1:${nowhere}/none\\) could not be reached`,
        ),
      ),
    ])
    expect(jsonLines(worker.stdout).filter((line) => line.database_url !== undefined).length).toBeGreaterThan(
      1,
    )
    expect(`${worker.stdout}${worker.stderr}`).not.toContain(PASSWORD)
  })
})
