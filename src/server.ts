import closeWithGrace from 'close-with-grace'
import { loadConfig } from './config.js'
import { startApp } from './runtime.js'

/** `npm start`: serve the API until SIGTERM or SIGINT, then finish in-flight requests and close. */
export async function serve(): Promise<void> {
  const config = loadConfig()
  const { app, firstKey } = await startApp(config)
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
  })
  await app.listen({ port: config.port, host: config.host })
  if (firstKey) {
    console.log(
      `Created account "default" and a test-mode API key (shown once, keep it):\n  ${firstKey.secret}`,
    )
    console.log(
      `Try: curl -H "Authorization: Bearer ${firstKey.secret}" http://localhost:${config.port}/v1/operators`,
    )
  }
}

const isEntryPoint = import.meta.url === `file://${process.argv[1]}`
if (isEntryPoint) {
  serve().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  })
}
