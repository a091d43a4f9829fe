import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { type Db, openDatabase } from '../../../src/db/connection.js'
import { WebhookWorker } from '../../../src/modules/webhooks/worker.js'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import { sleep } from '../../helpers/assertions.js'
import { createTestDatabase, dialect, type TestDatabase } from '../../helpers/database.js'
import { type Child, killAll, spawnChild } from '../../helpers/process.js'

/**
 * What keeps webhooks from being lost or doubled when workers run side by side, crash or restart,
 * and when the API runs with WORKER=off. Real databases, real HTTP to a receiver on 127.0.0.1,
 * real `cli worker` processes killed with SIGKILL.
 */

interface Receipt {
  id: string
  at: number
}

/** A recording webhook receiver on 127.0.0.1; `plan` says how long to wait before each 200. */
class Receiver {
  readonly receipts: Receipt[] = []
  /** Delay in ms before answering the n-th request (0-based) with 200. */
  plan: (index: number) => number = () => 0
  url = ''
  private readonly timers = new Set<NodeJS.Timeout>()
  private readonly server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const index = this.receipts.length
      this.receipts.push({ id: String(req.headers['x-service-id']), at: Date.now() })
      const answer = () => {
        this.timers.delete(timer)
        // A held request whose sender was killed has no one left to answer.
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
      }
      const timer = setTimeout(answer, Math.max(0, this.plan(index)))
      this.timers.add(timer)
    })
  })

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`
    return this
  }

  /** How many times each delivery id arrived. */
  counts(): Map<string, number> {
    const counts = new Map<string, number>()
    for (const r of this.receipts) counts.set(r.id, (counts.get(r.id) ?? 0) + 1)
    return counts
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer)
    this.server.closeAllConnections()
    await new Promise((resolve) => this.server.close(resolve))
  }
}

async function waitFor(probe: () => Promise<boolean> | boolean, what: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

async function deliveryRows(db: Db) {
  return db
    .selectFrom('webhook_deliveries')
    .select(['id', 'status', 'locked_until', 'scheduled_attempts'])
    .orderBy('id')
    .execute()
}

async function succeededCount(db: Db): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status', '=', 'succeeded')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Attempts recorded per delivery id. */
async function attemptCounts(db: Db): Promise<Map<string, { n: number; codes: Array<number | null> }>> {
  const rows = await db.selectFrom('webhook_attempts').select(['delivery_id', 'status_code']).execute()
  const byDelivery = new Map<string, { n: number; codes: Array<number | null> }>()
  for (const row of rows) {
    const entry = byDelivery.get(row.delivery_id) ?? { n: 0, codes: [] }
    entry.n += 1
    entry.codes.push(row.status_code)
    byDelivery.set(row.delivery_id, entry)
  }
  return byDelivery
}

async function subscribe(client: ApiClient, url: string): Promise<string> {
  const res = await client.post<{ id: string }>('/v1/webhook-endpoints', { url, enabled_events: ['*'] })
  expect(res.status).toBe(201)
  return res.body.id
}

/** One `operator.created` event per operator, through the API. */
async function createOperators(client: ApiClient, count: number, prefix: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await client.post('/v1/operators', { ident: `${prefix}-${i}`, name: `Operator ${i}` })
    expect(res.status).toBe(201)
  }
}

/** `cli worker` as its own process, the way an operator runs it. */
function spawnWorker(databaseUrl: string, timeoutMs: number): Child {
  return spawnChild(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'worker'], {
    env: {
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_TIMEOUT_MS: String(timeoutMs),
      WEBHOOK_BACKOFF_SCALE: '0.001',
      WORKER: undefined,
      LOG_LEVEL: 'silent',
    },
  })
}

afterAll(killAll)

describe(`webhook worker resilience (${dialect})`, () => {
  // PostgreSQL supports any number of workers on one database; the supported SQLite deployment is
  // a single process, so there the same guarantee is checked with one worker.
  const workerCount = dialect === 'postgres' ? 4 : 1

  it(`${workerCount} concurrent worker(s) on one database send every delivery exactly once`, async () => {
    const EVENTS = 300
    const receiver = await new Receiver().start()
    // A few ms per answer, varied, so that the workers' rounds interleave rather than run in turn.
    receiver.plan = (index) => (index * 7) % 11
    const t = await buildTestApp({ worker: 'off', webhookAllowPrivateUrls: true })
    const handles: Db[] = []
    const workers: WebhookWorker[] = []
    try {
      const client = t.client((await t.key()).secret)
      await subscribe(client, receiver.url)
      await createOperators(client, EVENTS, 'conc')

      const roundErrors: unknown[] = []
      const log = { info: () => {}, error: (obj: object) => roundErrors.push(obj) }
      for (let i = 0; i < workerCount; i++) {
        const { db } = openDatabase(t.database.url)
        handles.push(db)
        // Small batches: many rounds, so the workers really compete for the same rows.
        workers.push(
          new WebhookWorker(
            db,
            {
              timeoutMs: 5000,
              backoffScale: 0.001,
              disableThreshold: 1000,
              allowPrivateUrls: true,
              pollMs: 5,
              maxInFlight: 8,
            },
            log,
          ),
        )
      }
      for (const worker of workers) worker.start()
      await waitFor(
        async () => (await succeededCount(t.db)) === EVENTS,
        `${EVENTS} succeeded deliveries`,
        60_000,
      )
      // stop() waits for each worker's round in progress: any duplicate in flight has arrived after it.
      await Promise.all(workers.map((w) => w.stop()))
      await sleep(50)

      const deliveries = await deliveryRows(t.db)
      expect(deliveries).toHaveLength(EVENTS)
      expect(deliveries.every((d) => d.status === 'succeeded' && d.scheduled_attempts === 1)).toBe(true)
      const ids = deliveries.map((d) => d.id).sort()

      const counts = receiver.counts()
      const doubled = [...counts].filter(([, n]) => n !== 1)
      expect(doubled).toEqual([])
      expect([...counts.keys()].sort()).toEqual(ids)
      expect(receiver.receipts).toHaveLength(EVENTS)

      const attempts = await attemptCounts(t.db)
      expect([...attempts.keys()].sort()).toEqual(ids)
      expect([...attempts.values()].filter((a) => a.n !== 1 || a.codes[0] !== 200)).toEqual([])
      expect(roundErrors).toEqual([])
    } finally {
      await Promise.all(workers.map((w) => w.stop()))
      await Promise.all(handles.map((db) => db.destroy()))
      await t.close()
      await receiver.close()
    }
  }, 90_000)

  it('a worker killed mid-batch loses nothing: a new worker re-sends its in-flight deliveries once the lease runs out', async () => {
    const EVENTS = 12
    const ANSWERED = 6
    const TIMEOUT_MS = 2000
    const receiver = await new Receiver().start()
    // The first six requests are answered at once; the others are held (longer than the timeout,
    // which does not matter: their sender is killed first).
    let holding = true
    receiver.plan = (index) => (index < ANSWERED || !holding ? 0 : 60_000)
    const t = await buildTestApp({ worker: 'off', webhookAllowPrivateUrls: true })
    try {
      const client = t.client((await t.key()).secret)
      await subscribe(client, receiver.url)
      await createOperators(client, EVENTS, 'kill')

      const first = spawnWorker(t.database.url, TIMEOUT_MS)
      // One round claims the whole batch (12 < the default batch size) and sends it concurrently.
      await waitFor(
        async () => receiver.receipts.length === EVENTS && (await succeededCount(t.db)) === ANSWERED,
        'the batch in flight with half of it recorded',
        20_000,
      )
      first.kill('SIGKILL')
      expect((await first.waitForExit(5000)).signal).toBe('SIGKILL')
      const killedAt = Date.now()

      const afterKill = await deliveryRows(t.db)
      const inFlight = afterKill.filter((d) => d.status === 'pending')
      const done = afterKill.filter((d) => d.status === 'succeeded')
      expect(inFlight).toHaveLength(EVENTS - ANSWERED)
      expect(done).toHaveLength(ANSWERED)
      // Still leased by the dead worker: claimed, sent, never recorded.
      for (const d of inFlight) expect(d.locked_until ?? 0).toBeGreaterThan(killedAt)
      const heldIds = new Set(inFlight.map((d) => d.id))
      expect(new Set(receiver.receipts.filter((r) => heldIds.has(r.id)).map((r) => r.id))).toEqual(heldIds)

      holding = false
      const second = spawnWorker(t.database.url, TIMEOUT_MS)
      // The lease is WEBHOOK_TIMEOUT_MS + 30 s from the claim.
      await waitFor(async () => (await succeededCount(t.db)) === EVENTS, 'every delivery succeeded', 60_000)
      second.kill('SIGTERM')
      await second.waitForExit(10_000)

      const counts = receiver.counts()
      const leaseOf = new Map(inFlight.map((d) => [d.id, d.locked_until ?? 0]))
      for (const d of afterKill) {
        if (heldIds.has(d.id)) {
          // Sent by the killed worker, then once more by the new one, and not before the lease ran out.
          expect(counts.get(d.id)).toBe(2)
          const resent = receiver.receipts.filter((r) => r.id === d.id)[1]
          expect(resent?.at ?? 0).toBeGreaterThanOrEqual(leaseOf.get(d.id) ?? Number.POSITIVE_INFINITY)
        } else {
          // Recorded as succeeded before the kill: never sent again.
          expect(counts.get(d.id)).toBe(1)
        }
      }
      const attempts = await attemptCounts(t.db)
      // The killed worker's attempts were never recorded; each delivery shows the one that succeeded.
      expect(attempts.size).toBe(EVENTS)
      for (const d of afterKill) expect(attempts.get(d.id)).toEqual({ n: 1, codes: [200] })
    } finally {
      await t.close()
      await receiver.close()
    }
  }, 120_000)

  it('an API restart loses no event: events created while no worker ran are delivered after it', async () => {
    const receiver = await new Receiver().start()
    const database: TestDatabase = await createTestDatabase()
    const running = new Set<TestApp>()
    const open = async (worker: 'inline' | 'off') => {
      const app = await buildTestApp(
        { worker, webhookAllowPrivateUrls: true, webhookBackoffScale: 0.001 },
        { database },
      )
      running.add(app)
      return app
    }
    // Closes the app (and its worker) but keeps the database, as a process restart would.
    const stop = async (app: TestApp) => {
      running.delete(app)
      await app.app.close()
    }
    const { db: check } = openDatabase(database.url)
    try {
      const first = await open('inline')
      const secret = (await first.key()).secret
      await subscribe(first.client(secret), receiver.url)
      await createOperators(first.client(secret), 5, 'before')
      await waitFor(() => receiver.receipts.length === 5, 'the first five deliveries', 10_000)
      await stop(first)

      // An API process with no worker (and none elsewhere): events pile up in the outbox.
      const idle = await open('off')
      await createOperators(idle.client(secret), 20, 'while-down')
      await sleep(300)
      await stop(idle)
      expect(receiver.receipts).toHaveLength(5)
      const undispatched = await check
        .selectFrom('events')
        .select('id')
        .where('dispatched_at', 'is', null)
        .execute()
      expect(undispatched).toHaveLength(20)

      const restarted = await open('inline')
      await waitFor(async () => (await succeededCount(check)) === 25, 'all 25 deliveries', 15_000)
      await stop(restarted)

      const events = await check.selectFrom('events').select('id').execute()
      expect(events).toHaveLength(25)
      const deliveries = await check.selectFrom('webhook_deliveries').select(['id', 'event_id']).execute()
      expect(new Set(deliveries.map((d) => d.event_id))).toEqual(new Set(events.map((e) => e.id)))
      const counts = receiver.counts()
      expect(new Set(counts.keys())).toEqual(new Set(deliveries.map((d) => d.id)))
      expect([...counts.values()].every((n) => n === 1)).toBe(true)
    } finally {
      for (const app of running) await stop(app)
      await check.destroy()
      await database.drop()
      await receiver.close()
    }
  }, 60_000)

  it('with WORKER=off the API process delivers nothing; a separate `cli worker` delivers it all', async () => {
    const EVENTS = 10
    const receiver = await new Receiver().start()
    const t = await buildTestApp({ worker: 'off', webhookAllowPrivateUrls: true })
    try {
      const client = t.client((await t.key()).secret)
      await subscribe(client, receiver.url)
      await createOperators(client, EVENTS, 'off')
      await sleep(1000)
      expect(receiver.receipts).toHaveLength(0)
      // Not even dispatched: the API process runs no part of the relay.
      const deliveries = await t.db.selectFrom('webhook_deliveries').select('id').execute()
      expect(deliveries).toHaveLength(0)

      const worker = spawnWorker(t.database.url, 5000)
      await waitFor(async () => (await succeededCount(t.db)) === EVENTS, 'the separate worker', 20_000)
      worker.kill('SIGTERM')
      await worker.waitForExit(10_000)

      const ids = (await deliveryRows(t.db)).map((d) => d.id).sort()
      expect(ids).toHaveLength(EVENTS)
      const counts = receiver.counts()
      expect([...counts.keys()].sort()).toEqual(ids)
      expect([...counts.values()].every((n) => n === 1)).toBe(true)
    } finally {
      await t.close()
      await receiver.close()
    }
  }, 60_000)
})
