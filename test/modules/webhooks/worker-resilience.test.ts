import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../src/db/connection.js'
import type { Db } from '../../../src/db/types.js'
import { claimDueDeliveries } from '../../../src/modules/webhooks/delivery-repository.js'
import { dispatchEvents } from '../../../src/modules/webhooks/outbox-relay.js'
import { WebhookWorker } from '../../../src/modules/webhooks/worker.js'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import { waitUntil } from '../../helpers/assertions.js'
import { parked, useTestClock } from '../../helpers/clock.js'
import { createTestDatabase, dialect, type TestDatabase } from '../../helpers/database.js'
import { builtScript, type Child, killAll, START_MS, spawnChild } from '../../helpers/process.js'
import { type ReceivedRequest, WebhookReceiver } from '../../helpers/webhook-receiver.js'
import { WORKER_POLL_MS, waitWhileTimePasses } from '../../helpers/webhook-schedule.js'

/**
 * What keeps webhooks from being lost or doubled when workers run side by side, crash or restart,
 * and when the API runs with WORKER=off. Real databases, real HTTP to a receiver on 127.0.0.1,
 * real `cli worker` processes killed with SIGKILL.
 */

/** How many times each delivery id reached the receiver. */
function countsById(requests: ReceivedRequest[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const r of requests) {
    const id = String(r.headers['x-service-id'])
    counts.set(id, (counts.get(id) ?? 0) + 1)
  }
  return counts
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

/**
 * `cli worker` as its own process (the build that `npm start` runs), the way an operator runs it,
 * once it says it has started: a wait for deliveries then bounds the delivering, not a start on a
 * loaded machine.
 */
async function startWorker(databaseUrl: string, timeoutMs: number): Promise<Child> {
  const worker = spawnChild(process.execPath, [builtScript('cli'), 'worker'], {
    env: {
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_TIMEOUT_MS: String(timeoutMs),
      WEBHOOK_BACKOFF_SCALE: '0.001',
      WORKER: undefined,
      // Info logs only the start and endpoint auto-disables: quiet, and the start is the line we need.
      LOG_LEVEL: 'info',
    },
  })
  await worker.waitForStdout(/"msg":"webhook worker and forgotten check-out sweep started"/, START_MS)
  return worker
}

/** The bound on a worker's stop after SIGTERM (its own grace is the webhook timeout + 5 s). */
const STOP_MS = 30_000

afterAll(killAll)

describe(`webhook worker resilience (${dialect})`, () => {
  // PostgreSQL supports any number of workers on one database; the supported SQLite deployment is
  // a single process, so there the same guarantee is checked with one worker.
  const workerCount = dialect === 'postgres' ? 4 : 1

  it(`${workerCount} concurrent worker(s) on one database send every delivery exactly once`, async () => {
    const EVENTS = 300
    const receiver = await WebhookReceiver.start()
    const path = receiver.freshPath()
    // A few ms per answer, varied, so that the workers' rounds interleave rather than run in turn.
    receiver.respond(path, (_request, index) => ({ delayMs: (index * 7) % 11 }))
    const t = await buildTestApp({ worker: 'off', webhookAllowPrivateUrls: true })
    const handles: Db[] = []
    const workers: WebhookWorker[] = []
    try {
      const client = t.client((await t.key()).secret)
      await subscribe(client, receiver.url(path))
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
      await receiver.waitFor(
        async () => (await succeededCount(t.db)) === EVENTS,
        60_000,
        `${EVENTS} succeeded deliveries`,
      )
      // stop() waits for each worker's attempts in flight, and an attempt ends with its answer, which
      // the receiver gives once it has recorded the request: any duplicate has arrived by now.
      await Promise.all(workers.map((w) => w.stop()))

      const deliveries = await deliveryRows(t.db)
      expect(deliveries).toHaveLength(EVENTS)
      expect(deliveries.every((d) => d.status === 'succeeded' && d.scheduled_attempts === 1)).toBe(true)
      const ids = deliveries.map((d) => d.id).sort()

      const counts = countsById(receiver.requestsTo(path))
      const doubled = [...counts].filter(([, n]) => n !== 1)
      expect(doubled).toEqual([])
      expect([...counts.keys()].sort()).toEqual(ids)
      expect(receiver.requestsTo(path)).toHaveLength(EVENTS)

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

  // The timeout: two worker starts (START_MS each), the batch, the kill, the re-sends and the stop.
  it('a worker killed mid-batch loses nothing: a new worker re-sends its in-flight deliveries once the lease runs out', async () => {
    const EVENTS = 12
    const ANSWERED = 6
    const TIMEOUT_MS = 2000
    const receiver = await WebhookReceiver.start()
    const path = receiver.freshPath()
    // The first six requests are answered at once; the others are held (longer than the timeout,
    // which does not matter: their sender is killed first).
    let holding = true
    receiver.respond(path, (_request, index) => ({ delayMs: index < ANSWERED || !holding ? 0 : 60_000 }))
    const t = await buildTestApp({ worker: 'off', webhookAllowPrivateUrls: true })
    try {
      const client = t.client((await t.key()).secret)
      await subscribe(client, receiver.url(path))
      await createOperators(client, EVENTS, 'kill')

      const first = await startWorker(t.database.url, TIMEOUT_MS)
      // One round claims the whole batch (12 < the default batch size) and sends it concurrently.
      await receiver.waitFor(
        async () => receiver.requestsTo(path).length === EVENTS && (await succeededCount(t.db)) === ANSWERED,
        30_000,
        'the batch in flight with half of it recorded',
      )
      first.kill('SIGKILL')
      expect((await first.waitForExit(STOP_MS)).signal).toBe('SIGKILL')
      // The worker processes keep the system's clock.
      const killedAt = Date.now()

      const afterKill = await deliveryRows(t.db)
      const inFlight = afterKill.filter((d) => d.status === 'pending')
      const done = afterKill.filter((d) => d.status === 'succeeded')
      expect(inFlight).toHaveLength(EVENTS - ANSWERED)
      expect(done).toHaveLength(ANSWERED)
      // Still leased by the dead worker: claimed, sent, never recorded.
      for (const d of inFlight) expect(d.locked_until ?? 0).toBeGreaterThan(killedAt)
      const heldIds = new Set(inFlight.map((d) => d.id))
      expect(
        new Set(
          receiver
            .requestsTo(path)
            .map((r) => String(r.headers['x-service-id']))
            .filter((id) => heldIds.has(id)),
        ),
      ).toEqual(heldIds)

      holding = false
      // The lease (2 × WEBHOOK_TIMEOUT_MS + 30 s from the claim) runs out: set back to stand for its
      // passage, which a worker process on the system's clock would wait out. That the lease holds
      // until then, and not a moment longer, is tested on a TestClock below.
      await t.db
        .updateTable('webhook_deliveries')
        .set({ locked_until: Date.now() - 1 })
        .where('id', 'in', [...heldIds])
        .execute()
      const second = await startWorker(t.database.url, TIMEOUT_MS)
      await receiver.waitFor(
        async () => (await succeededCount(t.db)) === EVENTS,
        30_000,
        'every delivery succeeded',
      )
      second.kill('SIGTERM')
      await second.waitForExit(STOP_MS)

      const counts = countsById(receiver.requestsTo(path))
      for (const d of afterKill) {
        if (heldIds.has(d.id)) {
          // Sent by the killed worker, then once more by the new one.
          expect(counts.get(d.id)).toBe(2)
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
  }, 300_000)
})

/**
 * The same guarantees where they are about the service's time, with the workers in this process on
 * a TestClock: it stands still unless stepped, so what happens without a step was woken for, and an
 * app's background loops are the waits it keeps on the clock.
 */
describe(`webhook worker resilience, in process on the clock (${dialect})`, () => {
  const clock = useTestClock()
  /** The waits of an app with WORKER=off: its idempotency purge, and no loop of a worker's. */
  const OFF_APP_WAITS = 1

  it('an API restart loses no event: events created while no worker ran are delivered after it', async () => {
    const receiver = await WebhookReceiver.start()
    const path = receiver.freshPath()
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
      await subscribe(first.client(secret), receiver.url(path))
      await createOperators(first.client(secret), 5, 'before')
      await receiver.waitFor(
        () => receiver.requestsTo(path).length === 5,
        10_000,
        'the first five deliveries',
      )
      await stop(first)

      // An API process with no worker (and none elsewhere): events pile up in the outbox.
      const idle = await open('off')
      await createOperators(idle.client(secret), 20, 'while-down')
      // No worker runs in it to dispatch them: its only wait on the clock is its purge's.
      expect(clock.pending).toBe(OFF_APP_WAITS)
      await stop(idle)
      expect(receiver.requestsTo(path)).toHaveLength(5)
      const undispatched = await check
        .selectFrom('events')
        .select('id')
        .where('dispatched_at', 'is', null)
        .execute()
      expect(undispatched).toHaveLength(20)

      const restarted = await open('inline')
      await waitWhileTimePasses(
        clock,
        () => succeededCount(check),
        (n) => n === 25,
      )
      await stop(restarted)

      const events = await check.selectFrom('events').select('id').execute()
      expect(events).toHaveLength(25)
      const deliveries = await check.selectFrom('webhook_deliveries').select(['id', 'event_id']).execute()
      expect(new Set(deliveries.map((d) => d.event_id))).toEqual(new Set(events.map((e) => e.id)))
      const counts = countsById(receiver.requestsTo(path))
      expect(new Set(counts.keys())).toEqual(new Set(deliveries.map((d) => d.id)))
      expect([...counts.values()].every((n) => n === 1)).toBe(true)
    } finally {
      for (const app of running) await stop(app)
      await check.destroy()
      await database.drop()
      await receiver.close()
    }
  }, 60_000)

  // The timeout: a worker start (START_MS), its deliveries and its stop.
  it('with WORKER=off the API process delivers nothing; a separate `cli worker` delivers it all', async () => {
    const EVENTS = 10
    const receiver = await WebhookReceiver.start()
    const path = receiver.freshPath()
    const t = await buildTestApp({ worker: 'off', webhookAllowPrivateUrls: true })
    try {
      const client = t.client((await t.key()).secret)
      await subscribe(client, receiver.url(path))
      await createOperators(client, EVENTS, 'off')
      // No worker runs in it: its only wait on the clock is its purge's.
      expect(clock.pending).toBe(OFF_APP_WAITS)
      expect(receiver.requestsTo(path)).toHaveLength(0)
      // Not even dispatched: the API process runs no part of the relay.
      const deliveries = await t.db.selectFrom('webhook_deliveries').select('id').execute()
      expect(deliveries).toHaveLength(0)

      const worker = await startWorker(t.database.url, 5000)
      await receiver.waitFor(
        async () => (await succeededCount(t.db)) === EVENTS,
        20_000,
        'the separate worker',
      )
      worker.kill('SIGTERM')
      await worker.waitForExit(STOP_MS)

      const ids = (await deliveryRows(t.db)).map((d) => d.id).sort()
      expect(ids).toHaveLength(EVENTS)
      const counts = countsById(receiver.requestsTo(path))
      expect([...counts.keys()].sort()).toEqual(ids)
      expect([...counts.values()].every((n) => n === 1)).toBe(true)
    } finally {
      await t.close()
      await receiver.close()
    }
  }, 150_000)

  it('a delivery a dead worker had claimed is sent again at the first poll after its lease ran out, not before', async () => {
    const receiver = await WebhookReceiver.start()
    const path = receiver.freshPath()
    const t = await buildTestApp({ worker: 'off', webhookAllowPrivateUrls: true })
    const options = { timeoutMs: 2000, backoffScale: 1, disableThreshold: 1000, allowPrivateUrls: true }
    const worker = new WebhookWorker(t.db, options, { info: () => {}, error: () => {} })
    try {
      const client = t.client((await t.key()).secret)
      await subscribe(client, receiver.url(path))
      await createOperators(client, 1, 'lease')
      await dispatchEvents(t.db)
      // What a worker killed mid-attempt leaves: the delivery leased to it (for as long as a worker
      // with these options leases one), never recorded.
      const [claimed] = await claimDueDeliveries(t.db, {
        now: clock.now(),
        limit: 1,
        perEndpoint: 1,
        skipEndpoints: [],
        endpointCaps: new Map(),
        leaseMs: 2 * options.timeoutMs + 30_000,
      })
      if (!claimed) throw new Error('nothing to claim')
      const leaseEnd = Number(claimed.locked_until)

      worker.start()
      // The worker's dispatcher and sender, and the app's purge.
      const waits = OFF_APP_WAITS + 2
      await parked(clock, waits)
      // The lease's last instant: the sender's poll then still leaves it to the dead worker.
      clock.set(leaseEnd)
      await parked(clock, waits)
      expect(receiver.requests).toEqual([])
      const row = () =>
        t.db
          .selectFrom('webhook_deliveries')
          .select(['status', 'locked_until'])
          .where('id', '=', claimed.id)
          .executeTakeFirstOrThrow()
      expect(Number((await row()).locked_until)).toBe(leaseEnd)

      clock.advance(WORKER_POLL_MS)
      const [resent] = await receiver.waitForRequests(path, 1)
      expect(resent?.headers['x-service-id']).toBe(claimed.id)
      expect(resent?.receivedAt).toBe(leaseEnd + WORKER_POLL_MS)
      expect((await waitUntil(row, (r) => r.status !== 'pending')).status).toBe('succeeded')
      expect(receiver.requestsTo(path)).toHaveLength(1)
    } finally {
      await worker.stop()
      await t.close()
      await receiver.close()
    }
  })
})
