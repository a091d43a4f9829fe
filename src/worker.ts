import { createRetention, createSweep, createWorker } from './app.js'
import { loopLiveness, startMetricsListener } from './http/metrics.js'
import { openReachableDatabase, startProcess } from './runtime.js'

/**
 * `cli worker`: delivers webhooks, sweeps forgotten check-outs and deletes events and deliveries past
 * EVENT_RETENTION_DAYS in a process of its own (run the API with WORKER=off). Any number
 * of workers may share one PostgreSQL database; SIGTERM lets the attempts in flight finish and be recorded.
 */
export async function runWorker(): Promise<void> {
  const { config, log, onStop } = startProcess((config) => ({
    prefix: 'worker ',
    deadlineMs: config.webhookTimeoutMs + 5000,
  }))
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
  onStop(async () => {
    await metrics?.close()
    await Promise.all([worker.stop(), sweep.stop(), retention.stop()])
    await db.destroy()
  })
  worker.start()
  sweep.start()
  retention.start()
  // The line tests and supervisors wait for: kept as it was before retention joined.
  log.info('webhook worker and forgotten check-out sweep started')
}
