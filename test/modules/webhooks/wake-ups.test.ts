import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../src/db/connection.js'
import type { Db } from '../../../src/db/types.js'
import { WebhookWorker, type WorkerOptions } from '../../../src/modules/webhooks/worker.js'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import { type EventEnvelope, sleep, uniq } from '../../helpers/assertions.js'
import { dialect } from '../../helpers/database.js'
import { freshAccount } from '../../helpers/fixtures.js'
import { endpointOn } from '../../helpers/webhook-endpoints.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'

/**
 * The worker is woken by commits, not only by its polls: every worker here polls once a minute, so a
 * delivery that arrives within two seconds was woken for (db/commit-signals.ts). In the process by the
 * commit itself; on PostgreSQL from another handle (as a `cli worker` beside the API is) by NOTIFY on
 * its LISTEN connection, which comes back when it is killed.
 */

/** Longer than any test here: a worker that waited for its poll would time the test out. */
const POLL_ONCE_A_MINUTE = 60_000
/** A woken worker delivers within this (most take a few milliseconds; CI machines are slow). */
const WOKEN_WITHIN_MS = 2000

const stops: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

async function setUp() {
  const receiver = await WebhookReceiver.start()
  const t = await buildTestApp({ worker: 'off', webhookAllowPrivateUrls: true })
  stops.push(
    () => receiver.close(),
    () => t.close(),
  )
  return { receiver, t }
}

/** A worker that polls once a minute, on `db` (the app's own handle, or one of its own). */
function startWorker(db: Db, options: Partial<WorkerOptions> = {}) {
  const errors: object[] = []
  const worker = new WebhookWorker(
    db,
    {
      timeoutMs: 5000,
      backoffScale: 1,
      disableThreshold: 1000,
      allowPrivateUrls: true,
      pollMs: POLL_ONCE_A_MINUTE,
      ...options,
    },
    { info: () => {}, error: (obj) => errors.push(obj) },
  )
  worker.start()
  stops.push(() => worker.stop())
  return { worker, errors }
}

/** A handle of its own on the app's database, as another process has; named for pg_stat_activity. */
function ownHandle(t: TestApp, application: string): Db {
  const url = new URL(t.database.url)
  url.searchParams.set('application_name', application)
  const { db } = openDatabase(url.toString())
  stops.push(() => db.destroy())
  return db
}

async function createOperator(api: ApiClient) {
  const res = await api.post('/v1/operators', { ident: uniq('op'), name: 'Ada' })
  expect(res.status).toBe(201)
}

/** Creates an operator and expects its `operator.created` delivery at `path` within WOKEN_WITHIN_MS. */
async function expectWokenDelivery(api: ApiClient, receiver: WebhookReceiver, path: string) {
  const before = receiver.requestsTo(path).length
  const started = Date.now()
  await createOperator(api)
  const requests = await receiver.waitForRequests(path, before + 1, WOKEN_WITHIN_MS)
  const request = requests[before]
  const envelope = JSON.parse(request?.body ?? '{}') as EventEnvelope
  expect(envelope.type).toBe('operator.created')
  expect((request?.receivedAt ?? Number.POSITIVE_INFINITY) - started).toBeLessThan(WOKEN_WITHIN_MS)
}

/**
 * A worker on a handle of its own (PostgreSQL), once its LISTEN connection is up, and the pids of
 * that handle's LISTEN connections (the backends whose last statement was the LISTEN), read from
 * another connection.
 */
async function separateWorker(t: TestApp) {
  const application = uniq('wake-worker')
  const admin = new pg.Client({ connectionString: t.database.url })
  await admin.connect()
  stops.push(() => admin.end())
  const listenerPids = async () => {
    const { rows } = await admin.query<{ pid: number }>(
      `select pid from pg_stat_activity where application_name = $1 and query ilike 'listen%'`,
      [application],
    )
    return rows.map((r) => r.pid)
  }
  const { errors } = startWorker(ownHandle(t, application))
  await until('the LISTEN connection', async () => (await listenerPids()).length === 1)
  return { admin, errors, listenerPids }
}

async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

describe(`webhook wake-ups (${dialect})`, () => {
  it('a worker on the API’s own handle (WORKER=inline) is woken by each commit that records events', async () => {
    const { receiver, t } = await setUp()
    const { api } = await freshAccount(t)
    const { path } = await endpointOn(api, receiver, ['operator.created'])
    const { errors } = startWorker(t.db)
    for (let i = 0; i < 3; i++) {
      // Long enough for both loops to have gone back to their minute-long wait.
      await sleep(300)
      await expectWokenDelivery(api, receiver, path)
    }
    expect(errors).toEqual([])
  })

  it('a send-test delivery (no event to dispatch) wakes the sender', async () => {
    const { receiver, t } = await setUp()
    const { api } = await freshAccount(t)
    const { endpoint, path } = await endpointOn(api, receiver, ['operator.created'])
    startWorker(t.db)
    await sleep(300)
    const res = await api.post(`/v1/webhook-endpoints/${endpoint.id}/send-test`)
    expect(res.status).toBe(201)
    const [request] = await receiver.waitForRequests(path, 1, WOKEN_WITHIN_MS)
    expect(request?.headers['x-service-event']).toBe('webhook_endpoint.test')
  })

  it('the dispatcher wakes the sender only when it inserted deliveries', async () => {
    const { receiver, t } = await setUp()
    const { api } = await freshAccount(t)
    // The first attempt fails; its retry falls due about 60 ms later (backoff × 0.001) and only a
    // poll or a wake-up would find it.
    const { path } = await endpointOn(api, receiver, ['operator.created'], [{ status: 500 }, {}])
    startWorker(t.db, { backoffScale: 0.001 })
    await sleep(300)
    await expectWokenDelivery(api, receiver, path)
    await until('the retry scheduled and due', async () => {
      const row = await t.db
        .selectFrom('webhook_deliveries')
        .select(['status', 'next_attempt_at', 'locked_until'])
        .executeTakeFirst()
      return row?.status === 'pending' && row.locked_until === null && (row.next_attempt_at ?? 0) < Date.now()
    })

    // An event no endpoint receives: dispatched, no delivery inserted, so the sender sleeps on and
    // the due retry waits for its poll.
    const other = await freshAccount(t)
    await createOperator(other.api)
    await until('the event dispatched', async () => {
      const row = await t.db
        .selectFrom('events')
        .select('id')
        .where('dispatched_at', 'is', null)
        .executeTakeFirst()
      return row === undefined
    })
    await sleep(1000)
    expect(receiver.requestsTo(path)).toHaveLength(1)

    // An event the endpoint receives: its delivery wakes the sender, which claims the retry with it.
    await createOperator(api)
    await receiver.waitForRequests(path, 3, WOKEN_WITHIN_MS)
  })

  it.runIf(dialect === 'postgres')(
    'PostgreSQL: a worker on a handle of its own (as a `cli worker`) is woken by NOTIFY, for events and for send-test deliveries',
    async () => {
      const { receiver, t } = await setUp()
      const { api } = await freshAccount(t)
      const { endpoint, path } = await endpointOn(api, receiver, ['operator.created'])
      const { errors } = await separateWorker(t)
      await sleep(300)
      await expectWokenDelivery(api, receiver, path)
      await sleep(300)
      await expectWokenDelivery(api, receiver, path)
      await sleep(300)
      const res = await api.post(`/v1/webhook-endpoints/${endpoint.id}/send-test`)
      expect(res.status).toBe(201)
      await receiver.waitForRequests(path, 3, WOKEN_WITHIN_MS)
      expect(errors).toEqual([])
    },
  )

  it.runIf(dialect === 'postgres')(
    'PostgreSQL: after its LISTEN connection is killed the worker listens again and is woken as before',
    async () => {
      const { receiver, t } = await setUp()
      const { api } = await freshAccount(t)
      const { path } = await endpointOn(api, receiver, ['operator.created'])
      const { admin, errors, listenerPids } = await separateWorker(t)
      const [first] = await listenerPids()
      await admin.query('select pg_terminate_backend($1)', [first])
      await until('a new LISTEN connection', async () => {
        const pids = await listenerPids()
        return pids.length === 1 && pids[0] !== first
      })
      // The loss is reported (and the worker polled meanwhile, once a minute here).
      expect(errors.length).toBeGreaterThan(0)
      await sleep(300)
      await expectWokenDelivery(api, receiver, path)
      await sleep(300)
      await expectWokenDelivery(api, receiver, path)
    },
  )
})
