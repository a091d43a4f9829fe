import os from 'node:os'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { defineConfig } from 'vitest/config'
import { testFilesByKind } from './test/helpers/test-kinds.js'

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'

/**
 * The same suite runs once per database. PostgreSQL is used when it answers; with
 * REQUIRE_POSTGRES=1 (as in .ci/run) a missing PostgreSQL fails the run instead of skipping.
 */
async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('select 1')
    return true
  } catch (error) {
    if (process.env.REQUIRE_POSTGRES === '1') {
      throw new Error(
        `REQUIRE_POSTGRES=1 but PostgreSQL at ${POSTGRES_URL} is not reachable: ${String(error)}`,
      )
    }
    console.warn(`PostgreSQL not reachable at ${POSTGRES_URL}: running the suite on SQLite only.`)
    return false
  } finally {
    await client.end().catch(() => undefined)
  }
}

// TEST_CPU_PROFILE_DIR=<dir>: every test worker writes V8 CPU profiles there, one a file it ran
// (test/helpers/cpu-profile-setup.ts); how the suite's own time was found (docs/performance-log.md).
const profiling = process.env.TEST_CPU_PROFILE_DIR
  ? { setupFiles: ['./test/helpers/cpu-profile-setup.ts'] }
  : {}

export default defineConfig(async () => {
  const dialects = (process.env.DB_DIALECTS ?? 'sqlite,postgres').split(',')
  const withPostgres = dialects.includes('postgres') && (await postgresAvailable())
  // What touches no database (pure modules, the console's and the client's own logic, the
  // architecture rules) runs once, in a project without a dialect; test/helpers/database.ts refuses
  // to open a database there, so a file put in it wrongly fails instead of passing untested.
  // The browser's and the documents' tests run on SQLite alone (test/helpers/test-kinds.ts says why).
  const { withDatabase, onOneDatabase, withoutDatabase } = testFilesByKind(
    fileURLToPath(new URL('.', import.meta.url)),
  )
  const project = (dialect: 'sqlite' | 'postgres') => ({
    test: {
      name: dialect,
      include: dialect === 'sqlite' ? [...withDatabase, ...onOneDatabase] : withDatabase,
      // The service's processes a test starts stop at once on SIGTERM (no 5 s of draining, which only
      // test/shutdown.test.ts is about, and which it sets itself).
      env: { TEST_DIALECT: dialect, TEST_POSTGRES_URL: POSTGRES_URL, SHUTDOWN_GRACE_MS: '0' },
      ...profiling,
      testTimeout: 30_000,
      // Test files of a worker share its module cache instead of importing Fastify, Kysely and src/
      // again each: importing was 438 s of the run's time (summed over files) and is 63 s so. The
      // whole suite on 2 cores went from 687–732 s to 490 s. What src/ and test/helpers keep between
      // files is caches of derived values (formatters, random bytes); no file changes the
      // environment, mocks a module or stubs a global.
      isolate: false,
      hookTimeout: 30_000,
      // dist/ built first (each project's setup; the second finds it up to date): the tests start
      // the service's child processes from it (test/helpers/build-setup.ts).
      globalSetup: [
        './test/helpers/build-setup.ts',
        ...(dialect === 'postgres' ? ['./test/helpers/postgres-run.ts'] : []),
      ],
    },
  })
  return {
    test: {
      reporters: ['default', './test/helpers/summary-reporter.ts'],
      // Most test files spend their time waiting (on receivers, child processes, timers, the
      // databases), so more of them run at once than there are cores: on 2 cores the default (one
      // file at a time) took 737 s, three at a time 404 s.
      maxWorkers: os.availableParallelism() + 1,
      projects: [
        {
          test: {
            name: 'no-database',
            include: withoutDatabase,
            env: { TEST_DIALECT: 'none' },
            ...profiling,
            isolate: false,
            testTimeout: 30_000,
          },
        },
        ...(dialects.includes('sqlite') ? [project('sqlite')] : []),
        ...(withPostgres ? [project('postgres')] : []),
      ],
    },
  }
})
