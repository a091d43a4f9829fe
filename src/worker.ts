import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { createRetention, createSweep, createWorker } from './app.js'
import { configurationSummary, loadConfig } from './config.js'
import { openServiceDatabase } from './db/connection.js'
import { migrateToLatest } from './db/migrate.js'
import { loopLiveness, startMetricsListener } from './http/metrics.js'
import { stopWhenLauncherExits } from './lib/parent-watch.js'

/**
 * `cli worker`: delivers webhooks, sweeps forgotten check-outs and deletes events and deliveries past
 * EVENT_RETENTION_DAYS in a process of its own (run the API with WORKER=off). Any number
 * of workers may share one PostgreSQL database; SIGTERM lets the attempts in flight finish and be recorded.
 */
export async function runWorker(): Promise<void> {
  const config = loadConfig()
  const log = pino({ level: config.logLevel })
  log.info({ config: configurationSummary() }, 'configuration')
  const { db } = openServiceDatabase(config)
  await migrateToLatest(db)
  const worker = createWorker(config, db, log)
  const metrics =
    config.metricsPort === undefined
      ? undefined
      : await startMetricsListener({
          host: config.metricsHost,
          port: config.metricsPort,
          db,
          log,
          liveness: loopLiveness(worker.lastPassAt),
        })
  const sweep = createSweep(config, db, log)
  const retention = createRetention(config, db, log)
  closeWithGrace({ delay: config.webhookTimeoutMs + 5000 }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'worker shutting down after an error')
    else log.info({ signal }, 'worker shutting down')
    await metrics?.close()
    await Promise.all([worker.stop(), sweep.stop(), retention.stop()])
    await db.destroy()
  })
  stopWhenLauncherExits(log)
  worker.start()
  sweep.start()
  retention.start()
  // The line tests and supervisors wait for: kept as it was before retention joined.
  log.info('webhook worker and forgotten check-out sweep started')
}
