import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import closeWithGrace from 'close-with-grace'
import { configurationSummary, listenFailure, loadConfig } from './config.js'
import { startMetricsListener } from './http/metrics.js'
import { stopWhenLauncherExits } from './lib/parent-watch.js'
import { startApp } from './runtime.js'

/** `npm start`: serve the API until SIGTERM or SIGINT, then finish in-flight requests and close. */
export async function serve(): Promise<void> {
  const config = loadConfig()
  const { app, firstKey } = await startApp(config)
  app.log.info({ config: configurationSummary() }, 'configuration')
  // Before the API listens: a metrics port in use stops the start rather than leave a process
  // nobody can watch.
  const metrics =
    config.metricsPort === undefined
      ? undefined
      : await startMetricsListener({
          host: config.metricsHost,
          port: config.metricsPort,
          db: app.db,
          log: app.log,
        })
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal }, 'shutting down')
    // The listener first: its database gauges read the database the app closes.
    await metrics?.close()
    await app.close()
  })
  stopWhenLauncherExits(app.log)
  // The key is shown before listening: a start that then fails to listen (port in use) has already
  // stored it, and the next start will not print another one.
  if (firstKey) {
    console.log(
      `Created account "default" and a test-mode API key (shown once, keep it):\n  ${firstKey.secret}`,
    )
  }
  await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
    throw listenFailure(error, {
      host: config.host,
      port: config.port,
      hostVariable: 'HOST',
      portVariable: 'PORT',
    })
  })
  if (firstKey) {
    // The port really bound (PORT=0 picks a free one).
    const address = app.server.address()
    const port = typeof address === 'object' && address ? address.port : config.port
    console.log(
      `Try: curl -H "Authorization: Bearer ${firstKey.secret}" http://localhost:${port}/v1/operators`,
    )
  }
}

/**
 * True when this file is the program (`node dist/src/server.js`), not imported by the CLI. Compared
 * as real paths: a `file://` string would miss a path with a space (URL-encoded) or a symlink.
 */
function isEntryPoint(): boolean {
  const script = process.argv[1]
  if (!script) return false
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}

if (isEntryPoint()) {
  serve().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  })
}
