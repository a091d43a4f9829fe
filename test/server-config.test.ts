import net from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { createTestDatabase, dialect, type TestDatabase } from './helpers/database.js'
import { builtScript, type Child, killAll, START_MS, spawnChild } from './helpers/process.js'

/**
 * What `node dist/src/server.js` says about its configuration: the one line it logs first (the
 * configuration in effect, no password), and a refused start in one line on stderr that names the
 * variable to change, for a value loadConfig refuses and for a listen that fails. Each case is
 * about the configuration, not the database: one run, on SQLite.
 */

const databases: TestDatabase[] = []

afterAll(async () => {
  await killAll()
  for (const database of databases) await database.drop()
})

async function startServer(env: Record<string, string | undefined>): Promise<Child> {
  const database = await createTestDatabase()
  databases.push(database)
  return spawnChild(process.execPath, [builtScript('server')], {
    env: {
      DATABASE_URL: database.url,
      HOST: '127.0.0.1',
      PORT: '0',
      WORKER: 'off',
      LOG_LEVEL: 'info',
      REDIS_URL: undefined,
      METRICS_PORT: undefined,
      METRICS_HOST: undefined,
      ...env,
    },
  })
}

/** Exits non-zero with exactly one line on stderr, which says `message`. */
async function expectRefused(child: Child, message: string): Promise<void> {
  const exit = await child.waitForExit()
  expect(exit.code, child.stderr).not.toBe(0)
  expect(child.stderr.trim().split('\n'), child.stderr).toEqual([expect.stringContaining(message)])
}

/** A port held by this test process on 127.0.0.1 while `during` runs. */
async function withBusyPort(during: (port: number) => Promise<void>): Promise<void> {
  const blocker = net.createServer()
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
  try {
    await during((blocker.address() as net.AddressInfo).port)
  } finally {
    await new Promise((resolve) => blocker.close(resolve))
  }
}

describe.runIf(dialect === 'sqlite')(
  'the server and its configuration',
  { timeout: START_MS + 10_000 },
  () => {
    it('LOG_LEVEL not a pino level: refused, naming LOG_LEVEL', async () => {
      await expectRefused(
        await startServer({ LOG_LEVEL: 'verbose' }),
        'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
      )
    })

    it('HOST that does not resolve: refused at listen, naming HOST', async () => {
      await expectRefused(
        await startServer({ HOST: 'not-a-host.invalid' }),
        'HOST "not-a-host.invalid" does not resolve to an address',
      )
    })

    it('PORT in use: refused at listen, naming PORT and HOST; the configuration line came first, without the passwords', async () => {
      await withBusyPort(async (port) => {
        const child = await startServer({ PORT: String(port), REDIS_URL: 'redis://:r3dis@127.0.0.1:1' })
        await expectRefused(child, `PORT ${port} is already in use on HOST "127.0.0.1"`)
        const first = JSON.parse(child.stdout.split('\n')[0] ?? '')
        expect(first).toMatchObject({
          msg: 'configuration',
          config: { PORT: port, HOST: '127.0.0.1', WORKER: 'off', REDIS_URL: 'redis://:***@127.0.0.1:1' },
        })
        expect(`${child.stdout}${child.stderr}`).not.toContain('r3dis')
      })
    })

    it('METRICS_PORT in use: refused, naming METRICS_PORT and METRICS_HOST', async () => {
      await withBusyPort(async (port) => {
        await expectRefused(
          await startServer({ METRICS_PORT: String(port) }),
          `METRICS_PORT ${port} is already in use on METRICS_HOST "127.0.0.1"`,
        )
      })
    })
  },
)
