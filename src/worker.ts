import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { createWorker } from './app.js'
import { loadConfig } from './config.js'
import { openDatabase } from './db/connection.js'
import { migrateToLatest } from './db/migrate.js'

/**
 * `cli worker`: delivers webhooks in a process of its own (run the API with WORKER=off). Any number
 * of workers may share one PostgreSQL database; SIGTERM lets the attempts in flight finish and be recorded.
 */
export async function runWorker(): Promise<void> {
  const config = loadConfig()
  const log = pino({ level: config.logLevel })
  const { db } = openDatabase(config.databaseUrl)
  await migrateToLatest(db)
  const worker = createWorker(config, db, log)
  closeWithGrace({ delay: config.webhookTimeoutMs + 5000 }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'worker shutting down after an error')
    else log.info({ signal }, 'worker shutting down')
    await worker.stop()
    await db.destroy()
  })
  worker.start()
  log.info('webhook worker started')
}
