import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { createRetention, createSweep, createWorker } from './app.js'
import { configurationSummary, loadConfig } from './config.js'
import { loopLiveness, startMetricsListener } from './http/metrics.js'
import { stopWhenLauncherExits } from './lib/parent-watch.js'
import { openReachableDatabase } from './runtime.js'

/**
 * `cli worker`: delivers webhooks, sweeps forgotten check-outs and deletes events and deliveries past
 * EVENT_RETENTION_DAYS in a process of its own (run the API with WORKER=off). Any number
 * of workers may share one PostgreSQL database; SIGTERM lets the attempts in flight finish and be recorded.
 */
export async function runWorker(): Promise<void> {
  const config = loadConfig()
  const log = pino({ level: config.logLevel })
  log.info({ config: configurationSummary() }, 'configuration')
  // What a signal does: nothing to stop while the database is awaited; once started, the stop below.
  let stop = async () => {}
  closeWithGrace(
    {
      delay: config.webhookTimeoutMs + 5000,
      // Its own lines (a second signal, the timeout) as JSON, like every other line of the process.
      logger: log,
      onTimeout: (delay) => log.error(`worker shutdown did not finish within ${delay} ms; exiting`),
    },
    async ({ signal, err }) => {
      if (err) log.error({ err }, 'worker shutting down after an error')
      else log.info({ signal }, 'worker shutting down')
      await stop()
    },
  )
  stopWhenLauncherExits(log)
  // A database not reachable yet is tried again for DATABASE_STARTUP_TIMEOUT_MS, as the server does.
  const db = await openReachableDatabase(config, { log })
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
  stop = async () => {
    await metrics?.close()
    await Promise.all([worker.stop(), sweep.stop(), retention.stop()])
    await db.destroy()
  }
  worker.start()
  sweep.start()
  retention.start()
  // The line tests and supervisors wait for: kept as it was before retention joined.
  log.info('webhook worker and forgotten check-out sweep started')
}
