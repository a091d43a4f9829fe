import closeWithGrace from 'close-with-grace'
import pino, { type Logger } from 'pino'
import { buildApp } from './app.js'
import { type Config, configurationSummary, loadConfig } from './config.js'
import { openServiceDatabase } from './db/connection.js'
import { errorInOneLine, migrateWhenReachable } from './db/migrate.js'
import type { Db } from './db/types.js'
import { createRateLimitRedis } from './http/rate-limit.js'
import { stopWhenLauncherExits } from './lib/parent-watch.js'
import { withoutPassword } from './lib/url.js'
import { type CreatedKey, countAccounts, createKey } from './modules/keys/service.js'
import { ownerSetUpLink } from './modules/users/service.js'

export interface StartOptions {
  /** Where each failed attempt to reach the database is logged. */
  log?: Logger
  /** Called after each failed attempt (the server listens meanwhile, saying it is not ready). */
  onUnreachable?: () => Promise<void>
}

/**
 * Opens the database, migrates it and builds the app, as `npm start` and `cli serve` do. On an
 * empty database it creates the `default` account and one test key labelled `first key`; while no
 * person exists, each start issues the owner's set-up link of that account (decisions.md, "Owner
 * set-up"), voiding the one an earlier start issued. Both are returned for handing over. A
 * database it cannot reach is tried again (`openReachableDatabase`).
 */
export async function startApp(config: Config, options: StartOptions = {}) {
  const db = await openReachableDatabase(config, options)
  let firstKey: CreatedKey | undefined
  if ((await countAccounts(db)) === 0)
    firstKey = await createKey(db, { account: 'default', mode: 'test', label: 'first key' })
  const ownerLink = await ownerSetUpLink(db, config.publicUrl)
  const redis = config.redisUrl ? createRateLimitRedis(config.redisUrl) : undefined
  const app = await buildApp({ config, db, redis })
  return { app, firstKey, ownerLink }
}

/**
 * The service's database, migrated, as the server and the worker start on it: tried again while it
 * cannot be reached, for up to DATABASE_STARTUP_TIMEOUT_MS (db/migrate.ts, `migrateWhenReachable`),
 * each failure one JSON line naming DATABASE_URL (without its password). Past the bound, or on any
 * other failure, the database is closed and the error thrown.
 */
export async function openReachableDatabase(config: Config, options: StartOptions = {}): Promise<Db> {
  const { db } = openServiceDatabase(config)
  const url = withoutPassword(config.databaseUrl)
  try {
    await migrateWhenReachable(db, {
      url: config.databaseUrl,
      timeoutMs: config.databaseStartupTimeoutMs,
      onFailure: async ({ error, attempt, retryInMs }) => {
        options.log?.warn(
          { database_url: url, attempt, retry_in_ms: retryInMs, error: errorInOneLine(error) },
          `DATABASE_URL ${url} cannot be reached; trying again in ${retryInMs} ms`,
        )
        await options.onUnreachable?.()
      },
    })
  } catch (error) {
    await db.destroy().catch(() => undefined)
    throw error
  }
  return db
}

export interface ProcessStop {
  /** In log lines: "shutting down", or "worker shutting down" with `worker `. */
  prefix: '' | 'worker '
  /** Past this after a signal, the process exits 1 with a JSON line saying so. */
  deadlineMs: number
  /** Logged with that line. */
  deadlineFields?: Record<string, number>
}

/**
 * The start of a long-running process (`npm start`, `cli worker`): its configuration, its logger (the
 * configuration in effect its first line), and its stop. On SIGTERM, SIGINT or an uncaught error the
 * stop set last with `onStop` runs once; every line close-with-grace writes is JSON; a process an npm
 * script started also stops when that script ends (lib/parent-watch.ts).
 */
export function startProcess(stopping: (config: Config) => ProcessStop) {
  const config = loadConfig()
  const log = pino({ level: config.logLevel })
  log.info({ config: configurationSummary() }, 'configuration')
  const { prefix, deadlineMs, deadlineFields = {} } = stopping(config)
  let stop = async (_signal: string | undefined) => {}
  closeWithGrace(
    {
      delay: deadlineMs,
      logger: log,
      onTimeout: (delay) =>
        log.error(deadlineFields, `${prefix}shutdown did not finish within ${delay} ms; exiting`),
    },
    async ({ signal, err }) => {
      if (err) log.error({ err }, `${prefix}shutting down after an error`)
      else log.info({ signal }, `${prefix}shutting down`)
      await stop(signal)
    },
  )
  stopWhenLauncherExits(log)
  return {
    config,
    log,
    /** What a signal does from now on. */
    onStop(next: (signal: string | undefined) => Promise<void>) {
      stop = next
    },
  }
}
