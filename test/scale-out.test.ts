import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../src/db/connection.js'
import type { Db } from '../src/db/types.js'
import { IDEMPOTENCY_LEASE_MS } from '../src/http/idempotency.js'
import { createKey } from '../src/modules/keys/service.js'
import type { EventEnvelope, Scan, Session } from './helpers/assertions.js'
import { waitUntil } from './helpers/assertions.js'
import {
  type ApiProcess,
  type ProcessOptions,
  startApiProcess,
  startWorkerProcess,
} from './helpers/cluster.js'
import { createTestDatabase, dialect, type TestDatabase } from './helpers/database.js'
import { killAll, START_MS } from './helpers/process.js'
import { connectTestRedis, REDIS_URL } from './helpers/redis.js'
import { WebhookReceiver } from './helpers/webhook-receiver.js'

/**
 * Scale-out proven, not assumed: two API processes (WORKER=off) and one `cli worker` on one
 * PostgreSQL database and one Redis, as several machines behind a load balancer would run it.
 * Creates and scans go to both, alternating, each with an Idempotency-Key; one API process is
 * killed with SIGKILL mid-run, and a request whose answer it took with it is sent again, with the
 * same key and body, to the other. Then: every acknowledged write is there, none is doubled, every
 * event reached the receiver, and the rate limit counted both processes' requests as one.
 *
 * PostgreSQL only: the supported SQLite deployment is one process. Skipped without Redis, a failure
 * with REQUIRE_REDIS=1 (connectTestRedis).
 */

const redisProbe = dialect === 'postgres' ? await connectTestRedis() : undefined
await redisProbe?.quit()

/** Each unit: an operator, a session of it through the API, and its check-in and check-out scans. */
const UNITS = 60
const CONNECTIONS = 8
/** The kill comes once this many writes are acknowledged (of UNITS × 4), with requests in flight. */
const KILL_AFTER = 80
const DEVICE = 'GATE-1'
const HOUR_MS = 3_600_000
/** Bounds on failures only (a loaded 2-core machine): the load before the kill, then the rest. */
const LOAD_MS = 60_000
const DELIVERY_MS = 60_000
const RATE_LIMIT_MAX = 10

type Resource = 'operators' | 'sessions' | 'scans'

interface Write {
  resource: Resource
  key: string
  body: Record<string, unknown>
  /** The acknowledged answer. */
  answer?: { id: string } & Record<string, unknown>
  /** Its first answer was lost with the killed process; sent again to the other one. */
  lost?: boolean
}

interface Answer {
  status: number
  headers: Headers
  body: Record<string, unknown>
}

async function call(
  target: ApiProcess,
  secret: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  idempotencyKey?: string,
): Promise<Answer> {
  const res = await fetch(`${target.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${secret}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  })
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> }
}

/** Every item of a list, page after page (the cursor is signed with a secret both processes share). */
async function listAll<T>(target: ApiProcess, secret: string, path: string): Promise<T[]> {
  const items: T[] = []
  let cursor: string | null = null
  do {
    const page: Answer = await call(
      target,
      secret,
      'GET',
      `${path}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    )
    expect(page.status, JSON.stringify(page.body)).toBe(200)
    items.push(...(page.body.data as T[]))
    cursor = page.body.next_cursor as string | null
  } while (cursor)
  return items
}

/** The `error.code` of an answer, if it is an error. */
const errorCode = (answer: Answer) => (answer.body.error as { code?: string } | undefined)?.code

/**
 * Moves the `locked_at` of the claim of `key` left in flight back by the idempotency lease: it
 * stands for the lease's passage, for processes on the system's clock. Returns how many it moved.
 */
async function ageClaim(db: Db | undefined, key: string): Promise<number> {
  if (!db) throw new Error('no database handle')
  const moved = await db
    .updateTable('idempotency_keys')
    .set((eb) => ({ locked_at: eb('locked_at', '-', IDEMPOTENCY_LEASE_MS) }))
    // Stored as `<principal id>:<key>` (scoped to the principal).
    .where('key', 'like', `%:${key}`)
    .where('status', '=', 'in_flight')
    .executeTakeFirst()
  return Number(moved.numUpdatedRows)
}

afterAll(killAll)

describe.skipIf(dialect !== 'postgres' || !redisProbe)('scale-out on PostgreSQL and Redis', () => {
  let database: TestDatabase
  /** The test's own handle on the processes' database. */
  let db: Db | undefined
  let options: ProcessOptions
  let apis: ApiProcess[] = []
  let receiver: WebhookReceiver
  let secret = ''
  let limitedSecret = ''
  /**
   * Two more API processes with a low limit, for the rate-limit phase. The first test starts them
   * once it has killed its process, while its lost requests are sent again: not beside the first
   * two, since each start is seconds of CPU and the machine has two cores.
   */
  let limited: Promise<ApiProcess[]> | undefined
  const startLimited = () => {
    const low = {
      ...options,
      env: { RATE_LIMIT_MAX: String(RATE_LIMIT_MAX), RATE_LIMIT_WINDOW_MS: '60000' },
      startMs: 2 * START_MS,
    }
    limited ??= Promise.all([startApiProcess(low), startApiProcess(low)])
    return limited
  }

  beforeAll(
    async () => {
      database = await createTestDatabase()
      receiver = await WebhookReceiver.start()
      options = { databaseUrl: database.url, redisUrl: REDIS_URL }
      // All at once on the empty database, as a deployment starts them: each migrates (PostgreSQL's
      // migration lock serialises that) before it serves.
      const startMs = 3 * START_MS
      const high = { ...options, env: { RATE_LIMIT_MAX: '1000000' }, startMs }
      const [a, b] = await Promise.all([
        startApiProcess(high),
        startApiProcess(high),
        startWorkerProcess({ ...options, startMs }),
      ])
      apis = [a, b]
      // Keys of accounts of their own: the rate limit counts per key, in Redis, across runs too.
      db = openDatabase(database.url).db
      secret = (await createKey(db, { account: 'scale-out', mode: 'test' })).secret
      limitedSecret = (await createKey(db, { account: 'rate-limited', mode: 'test' })).secret
    },
    3 * START_MS + 30_000,
  )

  afterAll(async () => {
    await killAll()
    await receiver?.close()
    await db?.destroy()
    await database?.drop()
  })

  it('loses no acknowledged write, doubles none and delivers every event when an API process is killed mid-run', {
    timeout: LOAD_MS + DELIVERY_MS + 30_000,
  }, async () => {
    const [a, b] = apis as [ApiProcess, ApiProcess]
    const hook = receiver.freshPath()
    const endpoint = await call(a, secret, 'POST', '/v1/webhook-endpoints', {
      url: receiver.url(hook),
      enabled_events: ['*'],
    })
    expect(endpoint.status).toBe(201)
    const location = await call(b, secret, 'POST', '/v1/locations', { name: 'Plant', timezone: 'UTC' })
    expect(location.status).toBe(201)
    const device = await call(a, secret, 'POST', '/v1/devices', {
      code: DEVICE,
      location_id: location.body.id,
    })
    expect(device.status).toBe(201)

    const run = Date.now().toString(36)
    const now = Date.now()
    const writes: Write[] = []
    const unitWrites = (u: number): Write[] => {
      const ident = `so-${u}`
      const key = (what: string) => `${run}-${what}-${u}`
      return [
        { resource: 'operators', key: key('op'), body: { ident, name: `Operator ${u}` } },
        {
          resource: 'sessions',
          key: key('ses'),
          body: {
            operator_ident: ident,
            device_id: DEVICE,
            check_in: { time: '2025-01-06T08:00:00.000Z' },
            check_out: { time: '2025-01-06T16:00:00.000Z' },
            break_minutes: 30,
          },
        },
        {
          resource: 'scans',
          key: key('in'),
          body: {
            operator_ident: ident,
            device_id: DEVICE,
            direction: 'in',
            time: new Date(now - 3 * HOUR_MS).toISOString(),
          },
        },
        {
          resource: 'scans',
          key: key('out'),
          body: {
            operator_ident: ident,
            device_id: DEVICE,
            direction: 'out',
            time: new Date(now - 2 * HOUR_MS).toISOString(),
          },
        },
      ]
    }

    let killed = false
    let sent = 0
    let acknowledged = 0
    /** Requests sent to the process to be killed and not answered yet. */
    let inFlightOnA = 0
    /** The answer of `write`, sent to `target`; undefined when the connection failed (the answer is lost). */
    const send = async (target: ApiProcess, write: Write): Promise<Answer | undefined> => {
      if (target === a) inFlightOnA += 1
      try {
        return await call(target, secret, 'POST', `/v1/${write.resource}`, write.body, write.key)
      } catch (error) {
        if (target === a && killed) return undefined
        throw error
      } finally {
        if (target === a) inFlightOnA -= 1
      }
    }
    /** Fails on any answer but 201, with what the process that gave it logged (warnings and errors). */
    const acknowledge = (write: Write, answer: Answer, from: ApiProcess) => {
      expect(
        answer.status,
        `${write.resource} ${write.key}: ${JSON.stringify(answer.body)}\n${from.child.stdout.slice(-4000)}`,
      ).toBe(201)
      write.answer = answer.body as Write['answer']
      acknowledged += 1
    }
    /**
     * Sent again to the process that is left, same key, same body: answered at once when the killed
     * process's create had committed (a replay) or never claimed the key. When its claim was left in
     * flight, 409 idempotency_key_in_use until the lease runs out; the lease's passage itself is
     * tested in-process on a stepped clock (test/http/idempotency.test.ts), and the processes here
     * keep the system's clock, so the claim is aged by the lease in the database instead of waited
     * out, and the write sent once more.
     */
    const retryOnSurvivor = async (write: Write) => {
      write.lost = true
      let answer = await call(b, secret, 'POST', `/v1/${write.resource}`, write.body, write.key)
      if (answer.status === 409 && errorCode(answer) === 'idempotency_key_in_use') {
        expect(await ageClaim(db, write.key), `the claim of ${write.key} left in flight`).toBe(1)
        answer = await call(b, secret, 'POST', `/v1/${write.resource}`, write.body, write.key)
      }
      acknowledge(write, answer, b)
    }
    let nextUnit = 0
    const connection = async () => {
      while (nextUnit < UNITS) {
        const unit = unitWrites(nextUnit++)
        writes.push(...unit)
        // In order: the session and the scans name the operator created first.
        for (const write of unit) {
          // Alternating between the processes that are up, as a load balancer would.
          const target = killed ? b : (apis[sent++ % 2] as ApiProcess)
          const answer = await send(target, write)
          if (answer) acknowledge(write, answer, target)
          else await retryOnSurvivor(write)
        }
      }
    }
    const load = Promise.all(Array.from({ length: CONNECTIONS }, connection))
    // The kill comes once enough writes are acknowledged, at a moment when requests are in flight on
    // the process killed (the scenario is about their answers being lost; checked when it is read
    // rather than left to how the requests happen to be spread at that instant).
    await waitUntil(
      () => ({ acknowledged, inFlightOnA }),
      (state) => state.acknowledged >= KILL_AFTER && state.inFlightOnA > 0,
      { timeoutMs: LOAD_MS, everyMs: 1 },
    )
    killed = true
    a.child.kill('SIGKILL')
    expect((await a.child.waitForExit(10_000)).signal).toBe('SIGKILL')
    // Awaited (and any failure seen) by the rate-limit test.
    startLimited().catch(() => undefined)
    await load

    expect(writes).toHaveLength(UNITS * 4)
    // The kill came with requests in flight on the killed process: some answers were lost.
    expect(writes.filter((w) => w.lost).length).toBeGreaterThan(0)

    // Every acknowledged write is there, read back over HTTP from the process that is left.
    for (const write of writes) {
      const id = write.answer?.id ?? ''
      const read = await call(b, secret, 'GET', `/v1/${write.resource}/${id}`)
      expect(read.status, `${write.resource} ${id}`).toBe(200)
      expect(read.body.id).toBe(id)
    }
    // None doubled: each key made one object of its own, and the lists hold exactly those.
    const idsOf = (resource: Resource) =>
      writes
        .filter((w) => w.resource === resource)
        .map((w) => w.answer?.id ?? '')
        .sort()
    expect(new Set(writes.map((w) => w.answer?.id)).size).toBe(writes.length)
    const operators = await listAll<{ id: string }>(b, secret, '/v1/operators')
    expect(operators.map((o) => o.id).sort()).toEqual(idsOf('operators'))
    const scans = await listAll<Scan>(b, secret, '/v1/scans')
    expect(scans.map((s) => s.id).sort()).toEqual(idsOf('scans'))
    // Each unit's scans checked its operator in and out, in order: none was applied twice.
    expect(scans.filter((s) => s.result === 'checked_in')).toHaveLength(UNITS)
    expect(scans.filter((s) => s.result === 'checked_out')).toHaveLength(UNITS)
    const sessions = await listAll<Session>(b, secret, '/v1/sessions')
    expect(
      sessions
        .filter((s) => s.source === 'api')
        .map((s) => s.id)
        .sort(),
    ).toEqual(idsOf('sessions'))
    expect(sessions.filter((s) => s.source === 'scan' && s.status === 'completed')).toHaveLength(UNITS)
    expect(sessions).toHaveLength(2 * UNITS)

    // One event per change, none doubled, and every one delivered to the receiver at least once.
    const events = await listAll<EventEnvelope>(b, secret, '/v1/events')
    const types = new Map<string, number>()
    for (const event of events) types.set(event.type, (types.get(event.type) ?? 0) + 1)
    expect(Object.fromEntries(types)).toEqual({
      'location.created': 1,
      'device.created': 1,
      'operator.created': UNITS,
      'session.completed': 2 * UNITS,
      'session.flagged': UNITS,
      'scan.checked_in': UNITS,
      'scan.checked_out': UNITS,
    })
    const delivered = () =>
      new Set(receiver.requestsTo(hook).map((r) => (JSON.parse(r.body) as { id: string }).id))
    await receiver.waitFor(
      () => events.every((event) => delivered().has(event.id)),
      DELIVERY_MS,
      `all ${events.length} events delivered`,
    )
  })

  it('shares the rate limit across API processes through Redis', {
    timeout: 2 * START_MS + 30_000,
  }, async () => {
    const [c, d] = (await startLimited()) as [ApiProcess, ApiProcess]
    // Three times the limit within one window, split evenly over both processes: limits of their
    // own would let 2 × RATE_LIMIT_MAX through.
    const answers = await Promise.all(
      Array.from({ length: 3 * RATE_LIMIT_MAX }, (_, i) =>
        call(i % 2 === 0 ? c : d, limitedSecret, 'GET', '/v1/operators?limit=1'),
      ),
    )
    const statuses = answers.map((answer) => answer.status)
    const ok = statuses.filter((status) => status >= 200 && status < 300).length
    expect(ok).toBeGreaterThan(0)
    expect(ok).toBeLessThanOrEqual(RATE_LIMIT_MAX)
    expect(statuses.filter((status) => status !== 429)).toHaveLength(ok)
  })
})
