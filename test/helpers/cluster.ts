import { builtScript, type Child, freePort, START_MS, spawnChild } from './process.js'

/**
 * The service as several processes on one database, the way it scales out: API processes with
 * WORKER=off behind a load balancer, and `cli worker` processes doing the background work. Used by
 * test/scale-out.test.ts and bench/scale-out.ts, so that the bench measures what the test proves.
 */

/**
 * What runs: the build that `npm start` runs (`dist/`: the tests' global setup brings it up to date;
 * for the bench, `npm run build`), or the sources through tsx (the bench's default).
 */
export type Entry = 'src' | 'dist'

export interface ProcessOptions {
  databaseUrl: string
  /** The Redis every API process shares for the rate limit. */
  redisUrl: string
  /** 'dist' unless given. */
  entry?: Entry
  /** Added to the environment (RATE_LIMIT_MAX …); `undefined` removes a variable. */
  env?: Record<string, string | undefined>
  /**
   * Bounds the start (a failure only): START_MS, a start alone on a loaded machine. Starts side by
   * side share the cores, so n of them at once take up to n times as long.
   */
  startMs?: number
}

export interface ApiProcess {
  child: Child
  /** `http://127.0.0.1:<port>` */
  base: string
}

function nodeArgs(entry: Entry, script: 'server' | 'cli'): string[] {
  return entry === 'src' ? ['--import', 'tsx', `src/${script}.ts`] : [builtScript(script)]
}

function environment(options: ProcessOptions): Record<string, string | undefined> {
  return {
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    WORKER: 'off',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_BACKOFF_SCALE: '0.001',
    // Request lines would be most of the output (and of a bench's CPU); failures still log.
    LOG_LEVEL: 'warn',
    ...options.env,
  }
}

/**
 * An API process on a port of its own, once it answers `/healthz` (migrated and listening). Polled
 * rather than read from the log, so that the log level stays the caller's choice.
 */
export async function startApiProcess(options: ProcessOptions): Promise<ApiProcess> {
  const port = await freePort()
  const child = spawnChild(process.execPath, nodeArgs(options.entry ?? 'dist', 'server'), {
    env: { ...environment(options), HOST: '127.0.0.1', PORT: String(port) },
  })
  const base = `http://127.0.0.1:${port}`
  const startMs = options.startMs ?? START_MS
  const deadline = Date.now() + startMs
  for (;;) {
    if (child.hasExited) throw new Error(`API process exited at start:\n${child.stdout}\n${child.stderr}`)
    try {
      const res = await fetch(`${base}/healthz`)
      await res.arrayBuffer()
      if (res.status === 200) return { child, base }
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`API process not serving after ${startMs} ms:\n${child.stdout}\n${child.stderr}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** `cli worker` (webhook deliveries and the check-out sweep), once it says it has started. */
export async function startWorkerProcess(options: ProcessOptions): Promise<Child> {
  const child = spawnChild(process.execPath, [...nodeArgs(options.entry ?? 'dist', 'cli'), 'worker'], {
    // Info logs only the start and endpoint auto-disables: the start is the line waited for.
    env: { ...environment(options), WORKER: undefined, LOG_LEVEL: 'info' },
  })
  await child.waitForStdout(
    /"msg":"webhook worker and forgotten check-out sweep started"/,
    options.startMs ?? START_MS,
  )
  return child
}
