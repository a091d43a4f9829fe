import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Logger } from 'pino'
import type { Config } from './config.js'
import { ConnectionDrain } from './http/drain.js'
import { startMetricsListener } from './http/metrics.js'
import { listenWhileStarting, type StartingListener } from './http/readiness.js'
import { clock } from './lib/clock.js'
import { listenFailure } from './lib/listen-failure.js'
import type { CreatedKey } from './modules/keys/service.js'
import { startApp, startProcess } from './runtime.js'

/**
 * How long the drain may take once the grace is over: the requests in flight finishing, the inline
 * worker recording its attempts, the database closing. Past it the process exits 1 all the same.
 */
export const DRAIN_MS = 10_000

/** What `/readyz` says while the database cannot be reached at start-up. */
const WAITING_FOR_DATABASE = 'the database (DATABASE_URL) cannot be reached yet; the process keeps trying'

/**
 * `npm start`: serve the API until SIGTERM or SIGINT, then drain: `/readyz` answers 503 at once, the
 * API goes on serving for SHUTDOWN_GRACE_MS (load balancers take the process out of rotation), then
 * the listener closes, the requests in flight finish, the database closes and the process exits 0.
 */
export async function serve(): Promise<void> {
  const { config, log, onStop } = startProcess((config) => ({
    prefix: '',
    deadlineMs: config.shutdownGraceMs + DRAIN_MS,
    deadlineFields: { grace_ms: config.shutdownGraceMs, drain_ms: DRAIN_MS },
  }))
  let starting: StartingListener | undefined
  // What a signal does while the database is awaited: close the waiting listener; once the app is
  // up, the drain (below).
  onStop(async () => {
    await starting?.close()
  })
  const { app, firstKey, ownerLink } = await startApp(config, {
    log,
    onUnreachable: async () => {
      starting ??= await listenWhileStarting({
        host: config.host,
        port: config.port,
        reason: WAITING_FOR_DATABASE,
      }).catch((error: unknown) => {
        throw listenFailure(error, apiAddress(config))
      })
    },
  })
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
  const connections = new ConnectionDrain(app.server)
  onStop(async (signal) => {
    // SIGINT is Ctrl-C at a terminal: a person waits, no load balancer needs the grace.
    const graceMs = signal === 'SIGINT' ? 0 : config.shutdownGraceMs
    app.beginShutdown()
    app.log.info({ grace_ms: graceMs }, `not ready; serving for ${graceMs} ms more (SHUTDOWN_GRACE_MS)`)
    await new Promise<void>((resolve) => clock.schedule(resolve, graceMs))
    app.log.info('grace period over: closing the listener, finishing the requests in flight')
    await connections.drain()
    // The metrics listener before the app: its database gauges read the database the app closes.
    await metrics?.close()
    // The listener is closed already: Fastify's close stops the inline worker and closes the database.
    await app.close()
  })
  // The key is handed over before listening: a start that then fails to listen (port in use) has
  // already stored it, and the next start will not make another one. The owner's link likewise
  // (the next start, still without a person, would issue a new one).
  const shown = firstKey ? handOverFirstKey(firstKey, config, log) : undefined
  if (ownerLink) handOverOwnerLink(ownerLink, config, log)
  // The port the waiting listener held (PORT=0 picked it), taken over by the app.
  await starting?.close()
  await app.listen({ port: starting?.port ?? config.port, host: config.host }).catch((error: unknown) => {
    throw listenFailure(error, apiAddress(config))
  })
  if (shown === 'terminal' && firstKey) {
    // The port really bound (PORT=0 picks a free one).
    const address = app.server.address()
    const port = typeof address === 'object' && address ? address.port : config.port
    console.log(
      `Try: curl -H "Authorization: Bearer ${firstKey.secret}" http://localhost:${port}/v1/operators`,
    )
  }
}

/** The API's address, as a failed listen names it. */
function apiAddress(config: Config) {
  return { host: config.host, port: config.port, hostVariable: 'HOST', portVariable: 'PORT' } as const
}

/**
 * The first-start key, shown once. On a terminal it is printed for the person who started the
 * service. Otherwise stdout is a log (a file, journald, a container's log), where a key must never be
 * written: it goes to FIRST_KEY_FILE instead, readable by its owner only (0600), and one log line
 * says where, without the key.
 */
function handOverFirstKey(key: CreatedKey, config: Config, log: Logger): 'terminal' | 'file' {
  if (process.stdout.isTTY) {
    console.log(`Created account "default" and a test-mode API key (shown once, keep it):\n  ${key.secret}`)
    return 'terminal'
  }
  const file = path.resolve(config.firstKeyFile)
  writeOwnerOnly(file, key.secret)
  log.info(
    { file, key_id: key.id },
    `created account "default" and a test-mode API key; the key is in ${file} (readable by this user only)`,
  )
  return 'file'
}

/**
 * The owner's set-up link (a new one at each start while no person exists), handed over as the
 * first key is: printed on a terminal, else written to `owner-link.txt` beside FIRST_KEY_FILE
 * (0600; the key file keeps the key alone, as scripts read it) with one log line saying where.
 */
function handOverOwnerLink(link: string, config: Config, log: Logger): void {
  if (process.stdout.isTTY) {
    console.log(
      `Make yourself the owner of account "default": open this one-time link (valid 7 days; each start makes a new one until someone has):\n  ${link}`,
    )
    return
  }
  const file = path.join(path.dirname(path.resolve(config.firstKeyFile)), OWNER_LINK_FILE)
  writeOwnerOnly(file, link)
  log.info(
    { file },
    `nobody can sign in yet; the link that makes the owner of account "default" is in ${file} (readable by this user only, valid 7 days)`,
  )
}

/** Beside FIRST_KEY_FILE: where a start without a terminal writes the owner's set-up link. */
export const OWNER_LINK_FILE = 'owner-link.txt'

/**
 * Writes a secret to a new file created 0600, then renames it over any file an earlier start left:
 * an existing file written in place would keep its own permissions.
 */
function writeOwnerOnly(file: string, secret: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const written = `${file}.${process.pid}.tmp`
  fs.writeFileSync(written, `${secret}\n`, { mode: 0o600, flag: 'wx' })
  fs.renameSync(written, file)
}

/**
 * True when this file is the program (`node dist/src/server.js`), not imported by the CLI. Compared
 * as real paths: a `file://` string would miss a path with a space (URL-encoded) or a symlink.
 */
function isEntryPoint(): boolean {
  const script = process.argv[1]
  if (!script) return false
  try {
    return fs.realpathSync(script) === fileURLToPath(import.meta.url)
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
