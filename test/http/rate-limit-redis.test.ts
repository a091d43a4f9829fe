import net from 'node:net'
import type { Redis } from 'ioredis'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { processRegistry } from '../../src/core/metrics.js'
import { createRateLimitRedis } from '../../src/http/rate-limit.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { waitUntil } from '../helpers/assertions.js'
import { useTestClock } from '../helpers/clock.js'
import { builtScript, freePort, killAll, run, START_MS } from '../helpers/process.js'
import { connectTestRedis, REDIS_URL } from '../helpers/redis.js'
import { listeningUrl, startServerProcess } from '../helpers/server-process.js'

/**
 * REDIS_URL that cannot be reached: the limit still holds, counted in each process's memory, the
 * outage is one JSON warning and `rate_limit_redis_up` 0, and nothing of ioredis reaches the
 * process's output; when Redis is back the counters are in Redis again.
 */
const MAX = 3
const WINDOW_MS = 60_000
const UNREACHABLE = 'rate limit: Redis is unreachable; each process counts in its own memory until it is back'
const BACK = 'rate limit: Redis is reachable again; the counters are shared through it'

interface LogLine {
  level: number
  msg: string
  err?: { message?: string }
}

/** The app's log lines, parsed: every line it writes must be JSON. */
function logCapture() {
  const lines: LogLine[] = []
  return {
    lines,
    stream: { write: (line: string) => lines.push(JSON.parse(line) as LogLine) },
    count: (msg: string) => lines.filter((line) => line.msg === msg).length,
  }
}

async function redisUpGauge(): Promise<number | undefined> {
  const metric = await processRegistry.getSingleMetric('rate_limit_redis_up')?.get()
  return metric?.values[0]?.value
}

/** Each status of `count` requests of `secret`'s key, in order. */
async function burst(t: TestApp, secret: string, count: number): Promise<number[]> {
  const statuses = []
  for (let i = 0; i < count; i++) statuses.push((await t.client(secret).get('/v1/operators')).status)
  return statuses
}

/** The client's connection errors, for a test that waits for several reconnection attempts. */
function connectionErrors(redis: Redis): () => number {
  let errors = 0
  redis.on('error', () => {
    errors += 1
  })
  return () => errors
}

const apps: TestApp[] = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((t) => t.close()))
})
afterAll(killAll)

describe('REDIS_URL unreachable', () => {
  it('limits in memory, logs one JSON warning for the whole outage, and sets rate_limit_redis_up to 0', async () => {
    const redis = createRateLimitRedis(`redis://127.0.0.1:${await freePort()}`)
    const errors = connectionErrors(redis)
    const log = logCapture()
    const t = await buildTestApp(
      { rateLimitMax: MAX, rateLimitWindowMs: WINDOW_MS, logLevel: 'warn' },
      { redis, logStream: log.stream },
    )
    apps.push(t)
    // Several reconnection attempts (ioredis retries every 50 ms, then longer, up to 2 s): one warning.
    await waitUntil(errors, (n) => n >= 3)
    expect(log.count(UNREACHABLE)).toBe(1)
    const warning = log.lines.find((line) => line.msg === UNREACHABLE)
    expect(warning?.level).toBe(40)
    expect(warning?.err?.message).toMatch(/ECONNREFUSED/)
    expect(await redisUpGauge()).toBe(0)

    const { secret } = await t.key()
    expect(await burst(t, secret, MAX + 2)).toEqual([200, 200, 200, 429, 429])
  })
})

describe('REDIS_URL unreachable, in the process npm start runs', () => {
  it(
    'refuses a burst past the limit, serves rate_limit_redis_up 0, and writes only JSON lines',
    async () => {
      const t = await buildTestApp()
      apps.push(t)
      // An account already: the server prints no first key, and what it writes is its log alone.
      await t.key()
      const server = startServerProcess({
        DATABASE_URL: t.database.url,
        METRICS_PORT: '0',
        METRICS_HOST: undefined,
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        RATE_LIMIT_MAX: String(MAX),
        RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
        WORKER: 'off',
      }).child
      const metrics = (await server.waitForStdout(/"msg":"metrics listening at (http:\/\/[^"]+)"/))[1]
      const base = await listeningUrl(server)
      await server.waitForStdout(new RegExp(`"msg":"${UNREACHABLE}"`))
      // Requests without a key, counted per address.
      const statuses = []
      for (let i = 0; i < MAX + 2; i++) statuses.push((await fetch(`${base}/healthz`)).status)
      expect(statuses).toEqual([200, 200, 200, 429, 429])
      expect(await (await fetch(String(metrics))).text()).toMatch(/^rate_limit_redis_up 0$/m)

      server.kill('SIGTERM')
      expect((await server.waitForExit(30_000)).code).toBe(0)
      expect(server.stderr).toBe('')
      const lines = server.stdout.split('\n').filter((line) => line !== '')
      expect(lines.filter((line) => !isJson(line))).toEqual([])
      expect(lines.filter((line) => line.includes(UNREACHABLE))).toHaveLength(1)
    },
    START_MS + 60_000,
  )
})

describe('a malformed REDIS_URL', () => {
  it.each([
    ['notaurl', 'notaurl:…'],
    ['redis://:s3cret@cache:port', 'redis:…'],
  ])('REDIS_URL=%s stops the start with one line naming it, and not its password', async (url, shown) => {
    const result = await run(process.execPath, [builtScript('server')], {
      env: { REDIS_URL: url, HOST: '127.0.0.1', PORT: '0', DATABASE_URL: 'sqlite::memory:' },
    })
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe(`REDIS_URL must be a redis:// or rediss:// URL (got "${shown}")\n`)
  })
})

function isJson(line: string): boolean {
  try {
    JSON.parse(line)
    return true
  } catch {
    return false
  }
}

// Probed once at load: skipped when Redis is absent, a failure when REQUIRE_REDIS=1.
const redisProbe = await connectTestRedis()
await redisProbe?.quit()

/**
 * A TCP proxy to the test Redis that can be stopped and started again on the same port (an outage),
 * or stop passing on what its clients send while their connections stay open (a partition).
 */
class RedisOutage {
  private server: net.Server | undefined
  private readonly sockets = new Set<net.Socket>()
  private readonly pipes = new Map<net.Socket, net.Socket>()

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisOutage> {
    const proxy = new RedisOutage(await freePort())
    await proxy.open()
    return proxy
  }

  async open(): Promise<void> {
    const target = new URL(REDIS_URL)
    const server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname)
      for (const socket of [client, upstream]) {
        this.sockets.add(socket)
        socket.on('error', () => socket.destroy())
        socket.on('close', () => this.sockets.delete(socket))
      }
      client.pipe(upstream).pipe(client)
      this.pipes.set(client, upstream)
      client.on('close', () => {
        this.pipes.delete(client)
        upstream.destroy()
      })
      upstream.on('close', () => client.destroy())
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
    this.server = server
  }

  /** Commands reach Redis no more, and nothing tells the client. */
  partition(): void {
    for (const [client, upstream] of this.pipes) {
      client.unpipe(upstream)
      client.pause()
    }
  }

  /** What was held back reaches Redis, and so do new commands. */
  heal(): void {
    for (const [client, upstream] of this.pipes) client.pipe(upstream)
  }

  /** Refuses new connections and cuts the open ones, as a Redis that went away. */
  async cut(): Promise<void> {
    const server = this.server
    this.server = undefined
    for (const socket of this.sockets) socket.destroy()
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  }
}

/**
 * An app whose rate limit counts in the Redis behind `outage`, logging at info, once Redis took its
 * connection; with a key and where Redis counts that key.
 */
async function appThrough(outage: RedisOutage) {
  const redis = createRateLimitRedis(`redis://127.0.0.1:${outage.port}`)
  const log = logCapture()
  const t = await buildTestApp(
    { rateLimitMax: MAX, rateLimitWindowMs: WINDOW_MS, logLevel: 'info' },
    { redis, logStream: log.stream },
  )
  apps.push(t)
  const { id, secret } = await t.key()
  await waitUntil(redisUpGauge, (up) => up === 1)
  return { t, redis, log, secret, counter: `attendance:rl:key:${id}` }
}

describe.skipIf(!redisProbe)('REDIS_URL reachable again', () => {
  let outage: RedisOutage | undefined
  let direct: Redis | undefined
  afterAll(async () => {
    await outage?.cut()
    await direct?.quit()
  })

  it('counts in memory during an outage, and in Redis again once it is back', async () => {
    outage = await RedisOutage.start()
    direct = await connectTestRedis()
    const { t, redis, log, secret, counter } = await appThrough(outage)
    const errors = connectionErrors(redis)
    expect(await burst(t, secret, 1)).toEqual([200])
    expect(await direct?.get(counter)).toBe('1')

    await outage.cut()
    await waitUntil(errors, (n) => n >= 3)
    expect(await redisUpGauge()).toBe(0)
    // Counted in memory from 0: the limit holds, and Redis's counter is untouched.
    expect(await burst(t, secret, MAX + 1)).toEqual([200, 200, 200, 429])
    expect(await direct?.get(counter)).toBe('1')

    await outage.open()
    await waitUntil(redisUpGauge, (up) => up === 1)
    expect(await burst(t, secret, 1)).toEqual([200])
    expect(await direct?.get(counter)).toBe('2')
    expect([log.count(UNREACHABLE), log.count(BACK)]).toEqual([1, 1])
  })
})

describe.skipIf(!redisProbe)('Redis that stops answering without closing the connection', () => {
  const clock = useTestClock()
  let outage: RedisOutage | undefined
  let direct: Redis | undefined
  afterAll(async () => {
    outage?.heal()
    await outage?.cut()
    await direct?.quit()
  })

  it('counts in memory after a count it did not answer, and tries Redis again 5 s later', async () => {
    outage = await RedisOutage.start()
    direct = await connectTestRedis()
    const { t, log, secret, counter } = await appThrough(outage)
    expect(await burst(t, secret, 1)).toEqual([200])

    outage.partition()
    // The first count waits for Redis in vain (500 ms), the others do not try it.
    expect(await burst(t, secret, MAX + 1)).toEqual([200, 200, 200, 429])
    expect(log.lines.find((line) => line.msg === UNREACHABLE)?.err?.message).toBe('Command timed out')
    expect(await redisUpGauge()).toBe(0)

    outage.heal()
    // The count held back reaches Redis late (its request was counted in memory).
    await waitUntil(
      () => direct?.get(counter),
      (count) => count === '2',
    )
    // Still counted in memory (where the key is past its limit) until 5 s after the count that failed.
    expect(await burst(t, secret, 1)).toEqual([429])
    expect(await direct?.get(counter)).toBe('2')
    clock.advance(5000)
    expect(await burst(t, secret, 1)).toEqual([200])
    expect(await direct?.get(counter)).toBe('3')
    expect(await redisUpGauge()).toBe(1)
    expect([log.count(UNREACHABLE), log.count(BACK)]).toEqual([1, 1])
  })
})
