import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWorker } from '../../../src/app.js'
import { openServiceDatabase } from '../../../src/db/connection.js'
import type { Db } from '../../../src/db/types.js'
import {
  EventRetention,
  type RetentionOptions,
  type RetentionPass,
  retentionWindowMs,
} from '../../../src/modules/events/retention.js'
import { deliveryRetention } from '../../../src/modules/webhooks/service.js'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import {
  type EventEnvelope,
  expectError,
  type Operator,
  uniq,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookRecovery,
  waitUntil,
} from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import { eventsOf, freshAccount } from '../../helpers/fixtures.js'
import { rowCount } from '../../helpers/rows.js'
import { deliveriesOf, deliveriesWhen, endpointOn } from '../../helpers/webhook-endpoints.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'
import { world } from '../../helpers/world.js'

const DAY_MS = 86_400_000
const silent = { error: () => undefined }

/** A retention on the app's database: the service's window (EVENT_RETENTION_DAYS) unless told. */
function retentionOf(t: TestApp, options: Partial<RetentionOptions> = {}, db: Db = t.db) {
  return new EventRetention(
    db,
    deliveryRetention,
    { windowMs: retentionWindowMs(t.config.eventRetentionDays), intervalMs: 60_000, ...options },
    silent,
  )
}

/** Makes rows old, as time would: their `created_at` moved `ageMs` into the past. */
async function age(db: Db, table: 'events' | 'webhook_deliveries', ids: string[], ageMs: number) {
  if (ids.length === 0) return
  await db
    .updateTable(table)
    .set({ created_at: Date.now() - ageMs })
    .where('id', 'in', ids)
    .execute()
}

const createOperator = async (api: ApiClient) => {
  const res = await api.post<Operator>('/v1/operators', { ident: uniq('op') })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body
}

/**
 * Runs `during` with the webhook worker relaying and sending; the apps of this file run none of
 * their own, so what is unrelayed or pending outside these stays so.
 */
async function withWorker<T>(t: TestApp, during: () => Promise<T>): Promise<T> {
  const worker = createWorker(t.config, t.db, t.app.log)
  worker.start()
  try {
    return await during()
  } finally {
    await worker.stop()
  }
}

/** Waits until the worker has relayed every event. */
const allRelayed = (t: TestApp, receiver: WebhookReceiver) =>
  receiver.waitFor(
    async () =>
      (await t.db.selectFrom('events').select('id').where('dispatched_at', 'is', null).execute()).length ===
      0,
    10_000,
    'every event relayed',
  )

describe('retention: what a pass deletes and what it keeps', () => {
  let t: TestApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    t = await buildTestApp({
      webhookAllowPrivateUrls: true,
      // Six failed attempts take about a second; two exhausted deliveries disable an endpoint.
      webhookBackoffScale: 0.0002,
      webhookTimeoutMs: 2000,
      webhookDisableThreshold: 2,
    })
  })
  afterAll(async () => {
    await t?.close()
    await receiver?.close()
  })

  it('deletes events and finished deliveries past the window with their attempts, keeps young, unrelayed and pending ones, and never records', async () => {
    const w = await world(t)
    const { endpoint } = await endpointOn(w.root, receiver, ['operator.*'])
    const operators: Operator[] = []
    const delivered = await withWorker(t, async () => {
      for (let i = 0; i < 4; i++) operators.push(await w.operator())
      return deliveriesWhen(
        w.root,
        receiver,
        endpoint.id,
        (ds) => ds.length === 4 && ds.every((d) => d.status === 'succeeded'),
        'four succeeded deliveries',
      )
    })
    // Not relayed: no worker runs now.
    await w.operator()
    const events = (await eventsOf(t, w.accountId)).filter((e) => e.type === 'operator.created')
    const eventOf = (operator: Operator) =>
      events.find((e) => e.data.object.id === operator.id) as EventEnvelope
    const deliveryOf = (event: EventEnvelope) =>
      delivered.find((d) => d.event_id === event.id) as WebhookDelivery
    type Four<T> = [T, T, T, T]
    const [gone1, gone2, heldByPending, young] = operators.map(eventOf) as Four<EventEnvelope>
    const [first, second] = operators as Four<Operator>
    const unrelayed = events.at(-1) as EventEnvelope
    const pending = deliveryOf(heldByPending)
    // Records of every kind, as old as the deleted events: none of them is retention's to delete.
    const session = await w.session(first, '2026-01-05T08:00:00Z', '2026-01-05T16:00:00Z')
    await w.scan(second, new Date().toISOString())
    expect((await w.period('2026-01-01', '2026-01-31')).status).toBe(201)
    const records = ['operators', 'sessions', 'session_revisions', 'scans', 'pay_periods'] as const
    for (const table of records)
      await t.db
        .updateTable(table)
        .set({ created_at: Date.now() - 40 * DAY_MS })
        .where('account_id', '=', w.accountId)
        .execute()
    const recordCounts = await Promise.all(records.map((table) => rowCount(t.db, table)))

    const old = 31 * DAY_MS
    await age(
      t.db,
      'events',
      [gone1, gone2, heldByPending, unrelayed].map((e) => e.id),
      old,
    )
    await age(
      t.db,
      'webhook_deliveries',
      [gone1, gone2, heldByPending].map((e) => deliveryOf(e).id),
      old,
    )
    await t.db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: Date.now() + DAY_MS })
      .where('id', '=', pending.id)
      .execute()
    const attemptsBefore = await rowCount(t.db, 'webhook_attempts')

    const pass = await retentionOf(t).purge()
    expect(pass).toMatchObject({ events: 2, deliveries: 2, attempts: 2 })
    expect(await rowCount(t.db, 'webhook_attempts')).toBe(attemptsBefore - 2)
    for (const event of [gone1, gone2]) {
      expectError(await w.root.get(`/v1/events/${event.id}`), 404, 'not_found', 'resource_missing')
      expectError(
        await w.root.get(`/v1/webhook-deliveries/${deliveryOf(event).id}`),
        404,
        'not_found',
        'resource_missing',
      )
    }
    for (const event of [heldByPending, young, unrelayed])
      expect((await w.root.get(`/v1/events/${event.id}`)).status).toBe(200)
    expect((await w.root.get<WebhookDelivery>(`/v1/webhook-deliveries/${pending.id}`)).body.status).toBe(
      'pending',
    )
    expect((await w.root.get(`/v1/webhook-deliveries/${deliveryOf(young).id}`)).status).toBe(200)
    expect(await Promise.all(records.map((table) => rowCount(t.db, table)))).toEqual(recordCounts)
    expect((await w.root.get(`/v1/sessions/${session.id}`)).status).toBe(200)

    // Once the pending delivery is done, the next pass takes it and then its event.
    await t.db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', next_attempt_at: null })
      .where('id', '=', pending.id)
      .execute()
    expect(await retentionOf(t).purge()).toMatchObject({ events: 1, deliveries: 1 })
    expectError(await w.root.get(`/v1/events/${heldByPending.id}`), 404, 'not_found', 'resource_missing')
    expect((await w.root.get(`/v1/events/${unrelayed.id}`)).status).toBe(200)
  }, 30_000)

  it('leaves a recover of the last 14 days everything it needs, with the default window', async () => {
    const { api, key } = await freshAccount(t)
    let status = 500
    const { endpoint } = await endpointOn(api, receiver, ['operator.*'], () => ({ status }))
    await withWorker(t, async () => {
      await createOperator(api)
      await createOperator(api)
      await receiver.waitFor(
        async () =>
          (await api.get<WebhookEndpoint>(`/v1/webhook-endpoints/${endpoint.id}`)).body.status === 'disabled',
        15_000,
        'the endpoint auto-disabled',
      )
      // While disabled: an event that gets no delivery, which recover creates.
      await createOperator(api)
      await allRelayed(t, receiver)
    })

    // Everything nearly 14 days old (the endpoint older still, so the whole window is its own).
    const eventIds = (await eventsOf(t, key.account_id)).map((e) => e.id)
    const deliveryIds = (await deliveriesOf(api, endpoint.id)).map((d) => d.id)
    expect(deliveryIds).toHaveLength(2)
    const nearly14Days = 14 * DAY_MS - 3_600_000
    await age(t.db, 'events', eventIds, nearly14Days)
    await age(t.db, 'webhook_deliveries', deliveryIds, nearly14Days)
    await t.db
      .updateTable('webhook_endpoints')
      .set({ created_at: Date.now() - 20 * DAY_MS })
      .where('id', '=', endpoint.id)
      .execute()

    await retentionOf(t).purge()
    expect(await t.db.selectFrom('events').select('id').where('id', 'in', eventIds).execute()).toHaveLength(
      eventIds.length,
    )
    expect(await deliveriesOf(api, endpoint.id)).toHaveLength(2)

    status = 200
    expect((await api.patch(`/v1/webhook-endpoints/${endpoint.id}`, { status: 'enabled' })).status).toBe(200)
    const recovery = await api.post<WebhookRecovery>(`/v1/webhook-endpoints/${endpoint.id}/recover`, {
      since: new Date(Date.now() - 14 * DAY_MS + 60_000).toISOString(),
    })
    expect(recovery.status, JSON.stringify(recovery.body)).toBe(200)
    expect(recovery.body).toMatchObject({ recovered: 2, created: 1 })
    await withWorker(t, () =>
      deliveriesWhen(
        api,
        receiver,
        endpoint.id,
        (ds) => ds.length === 3 && ds.every((d) => d.status === 'succeeded'),
        'the three recovered deliveries sent',
      ),
    )
  }, 30_000)
})

describe('retention: batches', () => {
  let t: TestApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    t = await buildTestApp({ webhookAllowPrivateUrls: true })
  })
  afterAll(async () => {
    await t?.close()
    await receiver?.close()
  })

  /** `count` events of an account of their own, and when `delivered` one delivery each, 40 days old. */
  async function oldEvents(count: number, { delivered }: { delivered: boolean }) {
    const { api, key } = await freshAccount(t)
    if (delivered) await endpointOn(api, receiver, ['operator.*'])
    await withWorker(t, async () => {
      for (let i = 0; i < count; i++) await createOperator(api)
      await allRelayed(t, receiver)
      if (delivered)
        await receiver.waitFor(
          async () =>
            (
              await t.db
                .selectFrom('webhook_deliveries')
                .select('id')
                .where('account_id', '=', key.account_id)
                .where('status', '=', 'succeeded')
                .execute()
            ).length === count,
          15_000,
          `${count} deliveries sent`,
        )
    })
    const events = (await eventsOf(t, key.account_id)).map((e) => e.id)
    const deliveries = (
      await t.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('account_id', '=', key.account_id)
        .execute()
    ).map((d) => d.id)
    expect([events.length, deliveries.length]).toEqual([count, delivered ? count : 0])
    await age(t.db, 'events', events, 40 * DAY_MS)
    await age(t.db, 'webhook_deliveries', deliveries, 40 * DAY_MS)
    return { events, deliveries }
  }

  it('deletes in transactions of at most the batch size, walking past the rows it keeps', async () => {
    // More than a batch of events held by their pending deliveries, older than the rest: the walk
    // must go past them to the others.
    const held = await oldEvents(25, { delivered: true })
    await age(t.db, 'events', held.events, 50 * DAY_MS)
    const setStatus = (status: 'pending' | 'succeeded') =>
      t.db.updateTable('webhook_deliveries').set({ status }).where('id', 'in', held.deliveries).execute()
    const free = await oldEvents(45, { delivered: false })
    await setStatus('pending')

    const pass = await retentionOf(t, { batchSize: 20, pauseMs: 0 }).purge()
    // Deliveries: one batch, reading none (pending ones are not read). Events: 70 read 20 at a
    // time (20, 20, 20, 10), the 25 held ones kept.
    expect(pass).toEqual<RetentionPass>({
      events: 45,
      deliveries: 0,
      attempts: 0,
      transactions: 5,
      largestBatch: 20,
    })
    expect(await t.db.selectFrom('events').select('id').where('id', 'in', free.events).execute()).toEqual([])
    expect(
      await t.db.selectFrom('events').select('id').where('id', 'in', held.events).execute(),
    ).toHaveLength(25)

    await setStatus('succeeded')
    // Deliveries 20 and 5, then their events 20 and 5.
    expect(await retentionOf(t, { batchSize: 20, pauseMs: 0 }).purge()).toEqual<RetentionPass>({
      events: 25,
      deliveries: 25,
      attempts: 25,
      transactions: 4,
      largestBatch: 20,
    })
  }, 60_000)

  it('two passes at once (two worker processes, each its own connections) delete each row once, without error', async () => {
    const { events, deliveries } = await oldEvents(60, { delivered: true })
    const other = openServiceDatabase(t.config).db
    try {
      const passes = await Promise.all([
        retentionOf(t, { batchSize: 10, pauseMs: 0 }).purge(),
        retentionOf(t, { batchSize: 10, pauseMs: 0 }, other).purge(),
      ])
      expect(passes.every((p) => p.largestBatch <= 10)).toBe(true)
      const total = (field: 'events' | 'deliveries' | 'attempts') =>
        passes.reduce((sum, p) => sum + p[field], 0)
      expect([total('events'), total('deliveries'), total('attempts')]).toEqual([60, 60, 60])
      expect(await t.db.selectFrom('events').select('id').where('id', 'in', events).execute()).toEqual([])
      expect(
        await t.db.selectFrom('webhook_deliveries').select('id').where('id', 'in', deliveries).execute(),
      ).toEqual([])
    } finally {
      await other.destroy()
    }
  }, 60_000)
})

describe('retention: the tables hold exactly the window of writes while the service writes for longer than it', () => {
  const clock = useTestClock()
  const WINDOW_MS = 60_000
  const INTERVAL_MS = 10_000
  /** Writes every interval for twice the window; each create makes an event, a delivery, an attempt. */
  const STEPS = (2 * WINDOW_MS) / INTERVAL_MS
  const CREATES_PER_STEP = 3
  let t: TestApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    t = await buildTestApp({ webhookAllowPrivateUrls: true })
  })
  afterAll(async () => {
    await t?.close()
    await receiver?.close()
  })

  /** [events, deliveries, attempts] of the operators' creates. */
  const rows = async () => [
    Number(
      (
        await t.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('type', '=', 'operator.created')
          .executeTakeFirstOrThrow()
      ).n,
    ),
    await rowCount(t.db, 'webhook_deliveries'),
    await rowCount(t.db, 'webhook_attempts'),
  ]

  it('after each pass of its loop, keeps the rows of the writes at most the window old and no others', async () => {
    const { api } = await freshAccount(t)
    await endpointOn(api, receiver, ['operator.*'])
    expect(await rows()).toEqual([0, 0, 0])
    // Small batches: a pass walks several of them.
    const retention = retentionOf(t, {
      windowMs: WINDOW_MS,
      intervalMs: INTERVAL_MS,
      batchSize: 2,
      pauseMs: 0,
    })
    // Counts the loop's passes, so a step waits for the pass it set off.
    const passes: RetentionPass[] = []
    const purge = retention.purge.bind(retention)
    retention.purge = async () => {
      const pass = await purge()
      passes.push(pass)
      return pass
    }
    const writtenAt: number[] = []
    await withWorker(t, async () => {
      retention.start()
      try {
        // Its first pass is at its start.
        await waitUntil(
          () => passes.length,
          (n) => n === 1,
        )
        for (let step = 0; step < STEPS; step++) {
          for (let i = 0; i < CREATES_PER_STEP; i++) {
            await createOperator(api)
            writtenAt.push(clock.now())
          }
          // Relayed and sent at this instant too (the clock stands still while the worker works).
          const before = writtenAt.filter((at) => at >= clock.now() - WINDOW_MS).length
          await waitUntil(rows, (counts) => counts.every((n) => n === before))
          clock.advance(INTERVAL_MS)
          await waitUntil(
            () => passes.length,
            (n) => n === step + 2,
          )
          // A row exactly the window old is kept; one a millisecond older is not.
          const kept = writtenAt.filter((at) => at >= clock.now() - WINDOW_MS).length
          expect(await rows(), `after the pass at step ${step}`).toEqual([kept, kept, kept])
        }
      } finally {
        await retention.stop()
      }
    })
    // The bound was a test: twice the window written, the oldest half deleted, the window kept.
    expect(writtenAt).toHaveLength(STEPS * CREATES_PER_STEP)
    expect(await rows()).toEqual(Array(3).fill((WINDOW_MS / INTERVAL_MS) * CREATES_PER_STEP))
    expect(passes.slice(1).reduce((sum, pass) => sum + pass.events, 0)).toBe(
      writtenAt.length - (WINDOW_MS / INTERVAL_MS) * CREATES_PER_STEP,
    )
  }, 60_000)
})
