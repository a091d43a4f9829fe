import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../src/db/connection.js'
import type { Db } from '../../../src/db/types.js'
import { WebhookWorker, type WorkerOptions } from '../../../src/modules/webhooks/worker.js'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import { type EventEnvelope, uniq, waitUntil } from '../../helpers/assertions.js'
import { parked, useTestClock } from '../../helpers/clock.js'
import { dialect } from '../../helpers/database.js'
import { freshAccount } from '../../helpers/fixtures.js'
import { endpointOn } from '../../helpers/webhook-endpoints.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'

/**
 * The worker is woken by commits, not only by its polls: the service's clock stands still here, so no
 * poll ever falls due, and a delivery that arrives was woken for (db/commit-signals.ts). In the process
 * by the commit itself; on PostgreSQL from another handle (as a `cli worker` beside the API is) by
 * NOTIFY on its LISTEN connection, which comes back when it is killed.
 */

const clock = useTestClock()
/**
 * The waits on the clock while a test's app (WORKER=off: its idempotency purge) and its worker (the
 * dispatcher and the sender) are all parked. Each test stops what it started, so they are its own.
 */
const PARKED = 3

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
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

/** A worker on `db` (the app's own handle, or one of its own). */
function startWorker(db: Db, options: Partial<WorkerOptions> = {}) {
  const errors: object[] = []
  const worker = new WebhookWorker(
    db,
    {
      timeoutMs: 5000,
      backoffScale: 1,
      disableThreshold: 1000,
      allowPrivateUrls: true,
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

/**
 * Once the worker's loops have both gone back to their wait (on the clock, which stands still: no
 * poll will end it), creates an operator and expects its `operator.created` delivery at `path`.
 */
async function expectWokenDelivery(api: ApiClient, receiver: WebhookReceiver, path: string) {
  await parked(clock, PARKED)
  const before = receiver.requestsTo(path).length
  const at = clock.now()
  await createOperator(api)
  const requests = await receiver.waitForRequests(path, before + 1)
  const request = requests[before]
  const envelope = JSON.parse(request?.body ?? '{}') as EventEnvelope
  expect(envelope.type).toBe('operator.created')
  expect(request?.receivedAt).toBe(at)
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
  await waitUntil(listenerPids, (pids) => pids.length === 1)
  return { admin, errors, listenerPids }
}

describe(`webhook wake-ups (${dialect})`, () => {
  it('a worker on the API’s own handle (WORKER=inline) is woken by each commit that records events', async () => {
    const { receiver, t } = await setUp()
    const { api } = await freshAccount(t)
    const { path } = await endpointOn(api, receiver, ['operator.created'])
    const { errors } = startWorker(t.db)
    for (let i = 0; i < 3; i++) await expectWokenDelivery(api, receiver, path)
    expect(errors).toEqual([])
  })

  it('a send-test delivery (no event to dispatch) wakes the sender', async () => {
    const { receiver, t } = await setUp()
    const { api } = await freshAccount(t)
    const { endpoint, path } = await endpointOn(api, receiver, ['operator.created'])
    startWorker(t.db)
    await parked(clock, PARKED)
    const res = await api.post(`/v1/webhook-endpoints/${endpoint.id}/send-test`)
    expect(res.status).toBe(201)
    const [request] = await receiver.waitForRequests(path, 1)
    expect(request?.headers['x-service-event']).toBe('webhook_endpoint.test')
    expect(request?.receivedAt).toBe(clock.now())
  })

  it('the dispatcher wakes the sender only when it inserted deliveries', async () => {
    const { receiver, t } = await setUp()
    const { api } = await freshAccount(t)
    // The first attempt fails; its retry falls due a minute later, which the clock is then stepped
    // to, and only a poll (two hours on) or a wake-up would find it.
    const { path } = await endpointOn(api, receiver, ['operator.created'], [{ status: 500 }, {}])
    startWorker(t.db, { pollMs: 2 * 3_600_000 })
    await expectWokenDelivery(api, receiver, path)
    const retry = () =>
      t.db
        .selectFrom('webhook_deliveries')
        .select(['status', 'next_attempt_at', 'locked_until', 'scheduled_attempts'])
        .executeTakeFirstOrThrow()
    const scheduled = await waitUntil(
      retry,
      (row) => row.scheduled_attempts === 1 && row.locked_until === null,
    )
    expect(scheduled.status).toBe('pending')
    clock.set(Number(scheduled.next_attempt_at))

    // An event no endpoint receives: dispatched, no delivery inserted, so the sender sleeps on and
    // the due retry waits for its poll.
    const other = await freshAccount(t)
    await createOperator(other.api)
    await waitUntil(
      () => t.db.selectFrom('events').select('id').where('dispatched_at', 'is', null).execute(),
      (undispatched) => undispatched.length === 0,
    )
    // Both loops parked again after the dispatch: a sender woken meanwhile would have claimed the
    // due retry before parking, and the row would show it held or attempted.
    await parked(clock, PARKED)
    expect(await retry()).toEqual(scheduled)
    expect(receiver.requestsTo(path)).toHaveLength(1)

    // An event the endpoint receives: its delivery wakes the sender, which claims the retry with it.
    await createOperator(api)
    const requests = await receiver.waitForRequests(path, 3)
    expect(requests.slice(1).map((r) => r.receivedAt)).toEqual([clock.now(), clock.now()])
  })

  it.runIf(dialect === 'postgres')(
    'PostgreSQL: a worker on a handle of its own (as a `cli worker`) is woken by NOTIFY, for events and for send-test deliveries',
    async () => {
      const { receiver, t } = await setUp()
      const { api } = await freshAccount(t)
      const { endpoint, path } = await endpointOn(api, receiver, ['operator.created'])
      const { errors } = await separateWorker(t)
      await expectWokenDelivery(api, receiver, path)
      await expectWokenDelivery(api, receiver, path)
      await parked(clock, PARKED)
      const res = await api.post(`/v1/webhook-endpoints/${endpoint.id}/send-test`)
      expect(res.status).toBe(201)
      await receiver.waitForRequests(path, 3)
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
      await waitUntil(listenerPids, (pids) => pids.length === 1 && pids[0] !== first)
      // The loss is reported (and the worker would have polled meanwhile, had the clock moved).
      expect(errors.length).toBeGreaterThan(0)
      await expectWokenDelivery(api, receiver, path)
      await expectWokenDelivery(api, receiver, path)
    },
  )
})
