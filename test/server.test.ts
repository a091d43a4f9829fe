import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, dialect, type TestDatabase } from './helpers/database.js'
import {
  builtScript,
  type Child,
  freePort,
  killAll,
  ROOT,
  START_MS,
  spawnChild,
  withFileLock,
} from './helpers/process.js'
import {
  firstKey,
  jsonLines,
  LISTENING,
  type ServerProcess,
  startServerProcess,
} from './helpers/server-process.js'

const SECRET = /sk_(?:test|live)_[A-Za-z0-9_-]+/g

const databases: TestDatabase[] = []

async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase()
  databases.push(database)
  return database
}

/** `node dist/src/server.js` (what `npm start` runs after its build), on loopback; stdout a pipe. */
function startServer(env: Record<string, string | undefined>, script = builtScript('server')): ServerProcess {
  return startServerProcess({ SHUTDOWN_GRACE_MS: '0', ...env }, script)
}

/**
 * How long a stop may take to be seen. The server's own bound is SHUTDOWN_GRACE_MS (0 here) and 10 s
 * of drain: past them it exits 1, so exit code 0 says the server stopped in time. This only bounds
 * the wait for it on a loaded machine (the signal, then the close, each waiting for a core).
 */
const STOP_MS = 30_000

/** The timeout of a test that starts one server: its start, a few requests, its stop. */
const ONE_START = START_MS + 20_000 + STOP_MS

/** Each server by the base URL it listens on, so that a failed request can show its output. */
const servers = new Map<string, Child>()

/** Waits for the pino line that tells where the server listens; returns its base URL. */
async function listening(child: Child, timeoutMs = START_MS): Promise<string> {
  const match = await child.waitForStdout(LISTENING, timeoutMs)
  const url = match[1] ?? ''
  servers.set(url, child)
  return url
}

/** The distinct secrets printed on stdout. */
function printedSecrets(stdout: string): string[] {
  return [...new Set(stdout.match(SECRET) ?? [])]
}

async function get(url: string, secret?: string): Promise<{ status: number; body: unknown }> {
  try {
    const res = await fetch(url, { headers: secret ? { authorization: `Bearer ${secret}` } : {} })
    return { status: res.status, body: await res.json() }
  } catch (error) {
    // A refused connection says nothing of why; the server's output does.
    const server = servers.get(new URL(url).origin)
    const output = server
      ? `; the server ${server.hasExited ? 'has exited' : 'still runs'}\n--- stdout ---\n${server.stdout}\n--- stderr ---\n${server.stderr}`
      : ''
    throw new Error(`GET ${url}: ${String(error)}${output}`, { cause: error })
  }
}

/** SIGTERM, then the exit; checks a clean shutdown within the grace period that says so. */
async function stopGracefully(child: Child): Promise<void> {
  child.kill('SIGTERM')
  const exit = await child.waitForExit(STOP_MS)
  expect(exit).toEqual({ code: 0, signal: null })
  expect(jsonLines(child.stdout)).toContainEqual(
    expect.objectContaining({ msg: 'shutting down', signal: 'SIGTERM' }),
  )
}

/** A start that must fail: non-zero exit, one clear line on stderr (no stack), never listening. */
async function expectRefusedStart(child: Child, message: RegExp): Promise<void> {
  const exit = await child.waitForExit(START_MS)
  expect(exit.code, child.stderr).not.toBe(0)
  expect(exit.code).not.toBeNull()
  expect(child.stderr).toMatch(message)
  expect(child.stderr.trim().split('\n')).toHaveLength(1)
  expect(child.stderr).not.toMatch(/^\s+at /m)
  expect(child.stdout).not.toMatch(LISTENING)
}

afterAll(async () => {
  await killAll()
  for (const database of databases) await database.drop()
})

describe('server start and stop', () => {
  let database: TestDatabase
  let firstSecret = ''
  let second: Child | undefined
  let secondUrl = ''

  beforeAll(async () => {
    database = await freshDatabase()
  })

  it(
    'first start on an empty database, stdout not a terminal: the key goes to FIRST_KEY_FILE (0600), never to stdout, and works; SIGTERM exits 0',
    async () => {
      const server = startServer({ DATABASE_URL: database.url })
      const { child } = server
      const url = await listening(child)

      const health = await get(`${url}/healthz`)
      expect(health).toEqual({ status: 200, body: { status: 'ok' } })

      // The key is written by the time a request is served, readable by its owner only.
      firstSecret = firstKey(server)
      expect(firstSecret).toMatch(/^sk_test_/)
      expect(fs.statSync(server.keyFile).mode & 0o777).toBe(0o600)
      // One log line says where, without the key.
      expect(jsonLines(child.stdout)).toContainEqual(
        expect.objectContaining({ file: server.keyFile, msg: expect.stringContaining(server.keyFile) }),
      )

      const listed = await get(`${url}/v1/operators`, firstSecret)
      expect(listed.status).toBe(200)
      expect(listed.body).toMatchObject({ object: 'list', data: [] })
      expect((await get(`${url}/v1/operators`)).status).toBe(401)

      await stopGracefully(child)
      // Every line JSON, and none holds the key.
      expect(printedSecrets(`${child.stdout}${child.stderr}`)).toEqual([])
      jsonLines(child.stdout)
      jsonLines(child.stderr)
    },
    ONE_START,
  )

  it(
    'second start on the same database makes no key; the first key still works',
    async () => {
      expect(firstSecret).toMatch(/^sk_test_/)
      const server = startServer({ DATABASE_URL: database.url })
      second = server.child
      secondUrl = await listening(second)
      const listed = await get(`${secondUrl}/v1/operators`, firstSecret)
      expect(listed.status).toBe(200)
      expect(firstKey(server)).toBe('')
      expect(printedSecrets(second.stdout)).toEqual([])
    },
    ONE_START,
  )

  const IN_FLIGHT = { timeout: 20_000 + 2 * STOP_MS }
  it('a request in flight at SIGTERM completes (201) before the process exits 0', IN_FLIGHT, async () => {
    const child = second
    if (!child) throw new Error('no running server')
    const { port } = new URL(secondUrl)
    const body = JSON.stringify({ ident: 'in-flight-1', name: 'In Flight' })
    const request = http.request({
      host: '127.0.0.1',
      port: Number(port),
      method: 'POST',
      path: '/v1/operators',
      agent: false,
      headers: {
        authorization: `Bearer ${firstSecret}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    })
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      request.on('error', reject)
      request.on('response', (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
        res.on('error', reject)
      })
    })
    // Awaited below; this only keeps an early failure from being reported as unhandled.
    response.catch(() => undefined)
    // Headers and half the body: the server has the request and waits for the rest.
    request.write(body.slice(0, 10))
    await child.waitForStdout(/"method":"POST","url":"\/v1\/operators".*"msg":"incoming request"/)

    child.kill('SIGTERM')
    await child.waitForStdout(/"msg":"shutting down"/, STOP_MS)
    expect(child.hasExited).toBe(false)
    request.end(body.slice(10))

    const res = await response
    expect(res.status, res.body).toBe(201)
    expect(JSON.parse(res.body)).toMatchObject({ object: 'operator', ident: 'in-flight-1' })
    // Exit code 0: it finished within its grace period (see STOP_MS).
    const exit = await child.waitForExit(STOP_MS)
    expect(exit).toEqual({ code: 0, signal: null })
  })
})

describe('first start on a terminal', () => {
  it(
    'prints the key and a curl line for the person who started it, and writes no file',
    async () => {
      const database = await freshDatabase()
      const keyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-key-')), 'first-key.txt')
      // util-linux `script` runs the server with a pseudo-terminal as its stdout.
      const child = spawnChild(
        'script',
        ['-qfec', `${process.execPath} ${builtScript('server')}`, '/dev/null'],
        {
          env: {
            HOST: '127.0.0.1',
            PORT: '0',
            LOG_LEVEL: 'info',
            REDIS_URL: undefined,
            DATABASE_URL: database.url,
            FIRST_KEY_FILE: keyFile,
            SHUTDOWN_GRACE_MS: '0',
          },
        },
      )
      const url = await listening(child)
      const hint = await child.waitForStdout(/Try: curl -H "Authorization: Bearer (sk_test_[\w-]+)" (\S+)/)
      expect(hint[2]).toBe(`http://localhost:${new URL(url).port}/v1/operators`)
      expect(child.stdout).toMatch(/shown once, keep it/)
      expect((await get(`${url}/v1/operators`, hint[1])).status).toBe(200)
      expect(fs.existsSync(keyFile)).toBe(false)
      child.kill('SIGTERM')
      expect((await child.waitForExit(STOP_MS)).code).toBe(0)
    },
    ONE_START,
  )
})

describe.concurrent('server refuses a bad configuration', { timeout: START_MS + 20_000 }, () => {
  it.each([
    ['an unsupported DATABASE_URL', { DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    ['an out-of-range PORT', { PORT: '99999' }, /PORT/],
    ['a retention shorter than a recover reaches', { EVENT_RETENTION_DAYS: '14' }, /EVENT_RETENTION_DAYS/],
    [
      'an unreachable database, not waited for',
      { DATABASE_URL: 'postgres://nobody:s3cret@127.0.0.1:1/none', DATABASE_STARTUP_TIMEOUT_MS: '0' },
      /^DATABASE_URL \(postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:1\/none\) could not be reached .*ECONNREFUSED/,
    ],
  ])('%s: exits non-zero with a one-line message on stderr', async (_name, env, message) => {
    // A database that would work, unless the case replaces it: only the bad setting is at fault.
    const database = await freshDatabase()
    const { child } = startServer({ DATABASE_URL: database.url, ...env })
    await expectRefusedStart(child, message)
    expect(child.stderr).not.toContain('s3cret')
    expect(printedSecrets(child.stdout)).toEqual([])
  })
})

describe('server on a port in use', () => {
  // Two starts: a refused one, then one that serves.
  it(
    'exits non-zero with a one-line message, and the first-start key is not lost',
    async () => {
      const database = await freshDatabase()
      const blocker = net.createServer()
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
      const address = blocker.address()
      const busyPort = typeof address === 'object' && address ? address.port : 0
      let refused: ServerProcess
      try {
        refused = startServer({ DATABASE_URL: database.url, PORT: String(busyPort) })
        await expectRefusedStart(refused.child, /EADDRINUSE|in use/i)
      } finally {
        await new Promise((resolve) => blocker.close(resolve))
      }

      // The database is no longer empty, so whichever start created the key must have written it.
      const { child } = startServer({ DATABASE_URL: database.url, FIRST_KEY_FILE: refused.keyFile })
      const url = await listening(child)
      expect((await get(`${url}/healthz`)).status).toBe(200)
      const key = firstKey(refused)
      expect(key).toMatch(/^sk_test_/)
      expect((await get(`${url}/v1/operators`, key)).status).toBe(200)
      await stopGracefully(child)
    },
    START_MS + ONE_START,
  )
})

describe('server started through a path with a space and a symlink', () => {
  let link = ''
  afterAll(() => {
    if (link) fs.rmSync(path.dirname(link), { recursive: true, force: true })
  })

  it(
    'still serves (the entry-point check compares real paths)',
    async () => {
      link = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-link-')), 'my project')
      fs.symlinkSync(ROOT, link, 'dir')
      const database = await freshDatabase()
      const { child } = startServer({ DATABASE_URL: database.url }, path.join(link, builtScript('server')))
      const url = await listening(child)
      expect((await get(`${url}/healthz`)).status).toBe(200)
      await stopGracefully(child)
    },
    ONE_START,
  )
})

describe('npm start', () => {
  // Its prestart builds into dist/ what changed since the tests' global setup built it (usually
  // nothing): once per run (on the newcomer's default, SQLite), under a lock so that concurrent test
  // runs do not write dist/ while another one starts from it (withFileLock waits up to 120 s for
  // it). A whole build (tsc, then vite for the console) and the start took 40 s beside two busy
  // loops on 2 cores.
  const BUILD_AND_START_MS = 180_000
  it.runIf(dialect === 'sqlite')(
    'builds and serves on PORT with a fresh database; SIGTERM stops it cleanly',
    async () => {
      const database = await freshDatabase()
      const port = await freePort()
      const keyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-key-')), 'first-key.txt')
      const npm = await withFileLock('attendance-service-npm-start', async () => {
        const child = spawnChild('npm', ['start'], {
          env: {
            DATABASE_URL: database.url,
            PORT: String(port),
            HOST: '127.0.0.1',
            LOG_LEVEL: 'info',
            FIRST_KEY_FILE: keyFile,
          },
          group: true,
        })
        await child.waitForStdout(LISTENING, BUILD_AND_START_MS)
        return child
      })
      const url = await listening(npm)
      expect(url).toBe(`http://127.0.0.1:${port}`)
      expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } })
      expect(printedSecrets(npm.stdout)).toEqual([])
      const key = fs.readFileSync(keyFile, 'utf8').trim()
      expect((await get(`${url}/v1/operators`, key)).status).toBe(200)

      // npm does not pass SIGTERM on to its script: signal the server itself (its pid is in the
      // log); npm then exits with the server's code.
      // npm's own lines (`> attendance-service@… start`) are text; the server's are JSON.
      const logs = jsonLines(
        npm.stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .join('\n'),
      )
      const server = logs.find((line) => typeof line.pid === 'number')
      const pid = Number(server?.pid)
      expect(pid).toBeGreaterThan(0)
      process.kill(pid, 'SIGTERM')
      expect(await npm.waitForExit(STOP_MS)).toEqual({ code: 0, signal: null })
      expect(npm.stdout).toMatch(/"msg":"shutting down"/)
    },
    120_000 + BUILD_AND_START_MS + 20_000 + STOP_MS,
  )
})
