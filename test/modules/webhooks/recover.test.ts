import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../../src/lib/ids.js'
import { MAX_SCHEDULED_ATTEMPTS } from '../../../src/modules/webhooks/policy.js'
import { RECOVER_BATCH } from '../../../src/modules/webhooks/service.js'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import {
  expectError,
  type WebhookRecovery as Recovery,
  uniq,
  type WebhookEndpoint,
} from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import { freshAccount } from '../../helpers/fixtures.js'
import { deliveriesOf, deliveriesWhen, endpointOn } from '../../helpers/webhook-endpoints.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'
import {
  expectNoMoreAttempts,
  stepToNextAttempt,
  waitWhileTimePasses,
} from '../../helpers/webhook-schedule.js'

const DAY_MS = 86_400_000

describe('POST /v1/webhook-endpoints/{id}/recover', () => {
  // The six attempts of a delivery take the real schedule's hour and a half, stepped through.
  const clock = useTestClock()
  let t: TestApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    t = await buildTestApp({
      worker: 'inline',
      webhookAllowPrivateUrls: true,
      webhookTimeoutMs: 2000,
      webhookDisableThreshold: 2,
    })
  })
  afterAll(async () => {
    await t?.close()
    await receiver?.close()
  })

  const createOperator = async (api: ApiClient) =>
    expect((await api.post('/v1/operators', { ident: uniq('op'), name: 'Ada' })).status).toBe(201)

  const recover = (api: ApiClient, id: string, body: Record<string, string>) =>
    api.post<Recovery>(`/v1/webhook-endpoints/${id}/recover`, body)

  async function waitUntilDisabled(api: ApiClient, id: string) {
    return receiver.waitFor(
      async () => {
        const res = await api.get<WebhookEndpoint>(`/v1/webhook-endpoints/${id}`)
        return res.body.status === 'disabled' ? res.body : undefined
      },
      15_000,
      `endpoint ${id} to be auto-disabled`,
    )
  }

  /** Steps the clock through the endpoint's schedule until none of its deliveries is pending. */
  async function throughTheSchedule(endpointId: string) {
    while ((await stepToNextAttempt(clock, t.db, [endpointId])) !== undefined) {}
  }

  /** An endpoint whose receiver failed every attempt of two deliveries, so it was auto-disabled. */
  async function disabledEndpoint(api: ApiClient, answer: () => number) {
    const { endpoint, path } = await endpointOn(api, receiver, ['operator.*'], () => ({ status: answer() }))
    await createOperator(api)
    await createOperator(api)
    await receiver.waitForRequests(path, 2)
    await throughTheSchedule(endpoint.id)
    await waitUntilDisabled(api, endpoint.id)
    return { endpoint, path }
  }

  it('puts failed deliveries back on the same whd_ ids, creates the missed ones, and never resends a success', async () => {
    const { api } = await freshAccount(t)
    const since = new Date(clock.now()).toISOString()
    // An event before the endpoint existed (a second before, on the service's clock, which stands
    // still otherwise): neither the dispatcher nor recover gives it to it.
    await createOperator(api)
    clock.advance(1000)
    let status = 500
    const { endpoint, path } = await disabledEndpoint(api, () => status)
    const failed = await deliveriesOf(api, endpoint.id)
    expect(failed.map((d) => [d.status, d.attempts.length])).toEqual([
      ['failed', MAX_SCHEDULED_ATTEMPTS],
      ['failed', MAX_SCHEDULED_ATTEMPTS],
    ])
    // While disabled: no delivery is made (once dispatched; otherwise the re-enabled endpoint would
    // get it from the dispatcher rather than from recover).
    await createOperator(api)
    await receiver.waitFor(
      async () =>
        (await t.db.selectFrom('events').select('id').where('dispatched_at', 'is', null).execute()).length ===
        0,
      10_000,
      'every event dispatched',
    )

    // Recovered a second later: the window ends at the service's "now", exclusive.
    clock.advance(1000)
    status = 200
    expect((await api.patch(`/v1/webhook-endpoints/${endpoint.id}`, { status: 'enabled' })).status).toBe(200)
    const first = await recover(api, endpoint.id, { since })
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({
      object: 'webhook_recovery',
      endpoint_id: endpoint.id,
      since,
      recovered: 2,
      created: 1,
    })

    // Each of the recover's batches is due a second after the one before it.
    await throughTheSchedule(endpoint.id)
    const delivered = await deliveriesWhen(
      api,
      receiver,
      endpoint.id,
      (ds) => ds.length === 3 && ds.every((d) => d.status === 'succeeded'),
      'three succeeded deliveries',
    )
    for (const before of failed) {
      const after = delivered.find((d) => d.id === before.id)
      // Same whd_ id; a new round of scheduled attempts appended to the old one.
      expect(after?.attempts.map((a) => a.kind)).toEqual(Array(MAX_SCHEDULED_ATTEMPTS + 1).fill('scheduled'))
      expect(after?.attempts.at(-1)?.status_code).toBe(200)
    }
    const ids = receiver.requestsTo(path).map((r) => r.headers['x-service-id'])
    expect(new Set(ids)).toEqual(new Set(delivered.map((d) => d.id)))

    const again = await recover(api, endpoint.id, { since })
    expect(again.body).toMatchObject({ recovered: 0, created: 0 })
    await expectNoMoreAttempts(
      { clock, db: t.db, receiver },
      endpoint.id,
      path,
      receiver.requestsTo(path).length,
    )
  }, 30_000)

  it('gives recovered deliveries the normal schedule: six more attempts, the 410 rule, and auto-disable', async () => {
    const { api } = await freshAccount(t)
    const since = new Date(clock.now()).toISOString()
    let status = 500
    const { endpoint } = await disabledEndpoint(api, () => status)
    // Both recovered deliveries fail their whole new round.
    expect((await api.patch(`/v1/webhook-endpoints/${endpoint.id}`, { status: 'enabled' })).status).toBe(200)
    expect((await recover(api, endpoint.id, { since })).body).toMatchObject({ recovered: 2, created: 0 })
    await throughTheSchedule(endpoint.id)
    await waitUntilDisabled(api, endpoint.id)
    let deliveries = await deliveriesOf(api, endpoint.id)
    expect(deliveries.map((d) => [d.status, d.attempts.length])).toEqual([
      ['failed', 2 * MAX_SCHEDULED_ATTEMPTS],
      ['failed', 2 * MAX_SCHEDULED_ATTEMPTS],
    ])

    status = 410
    expect((await api.patch(`/v1/webhook-endpoints/${endpoint.id}`, { status: 'enabled' })).status).toBe(200)
    expect((await recover(api, endpoint.id, { since })).body).toMatchObject({ recovered: 2 })
    // Two more exhausted deliveries (one attempt each: 410 is final) disable it once more.
    const disabled = await waitUntilDisabled(api, endpoint.id)
    expect(disabled.disabled_reason).toMatch(/2 consecutive/)
    deliveries = await deliveriesOf(api, endpoint.id)
    expect(deliveries.map((d) => [d.status, d.attempts.length, d.attempts.at(-1)?.status_code])).toEqual([
      ['failed', 2 * MAX_SCHEDULED_ATTEMPTS + 1, 410],
      ['failed', 2 * MAX_SCHEDULED_ATTEMPTS + 1, 410],
    ])
  }, 30_000)

  it('refuses a window more than 14 days back, a malformed or empty window, a disabled endpoint, and read keys', async () => {
    const { api, account } = await freshAccount(t)
    const { endpoint } = await endpointOn(api, receiver, ['*'])
    const longAgo = new Date(clock.now() - 15 * DAY_MS).toISOString()
    expectError(
      await recover(api, endpoint.id, { since: longAgo }),
      422,
      'validation_error',
      'invalid_value',
      'since',
    )
    expectError(
      await recover(api, endpoint.id, { since: 'yesterday' }),
      422,
      'validation_error',
      'invalid_timestamp',
      'since',
    )
    // A valid window's start: a minute before the service's clock.
    const now = new Date(clock.now() - 60_000).toISOString()
    expectError(
      await recover(api, endpoint.id, { since: now, until: now }),
      422,
      'validation_error',
      'invalid_time_range',
      'until',
    )
    expectError(await recover(api, endpoint.id, {}), 422, 'validation_error', 'missing_param', 'since')
    expectError(await recover(api, 'we_missing', { since: now }), 404, 'not_found')

    const readOnly = t.client((await t.key({ account, scopes: ['webhooks:read'] })).secret)
    expectError(await recover(readOnly, endpoint.id, { since: now }), 403, 'insufficient_scope')

    expect((await api.patch(`/v1/webhook-endpoints/${endpoint.id}`, { status: 'disabled' })).status).toBe(200)
    expectError(await recover(api, endpoint.id, { since: now }), 409, 'conflict', 'endpoint_disabled')
  })
})

describe('recover at scale and under concurrency', () => {
  const clock = useTestClock()
  let t: TestApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    t = await buildTestApp({
      worker: 'inline',
      webhookAllowPrivateUrls: true,
      // The clock passes a poll at each look while the test waits for the deliveries: a lease (twice
      // this plus 30 s) far longer than that wait keeps each claimed delivery its attempt's.
      webhookTimeoutMs: 3_600_000,
    })
  })
  afterAll(async () => {
    await t?.close()
    await receiver?.close()
  })

  /** `count` events of the account, each with a failed delivery to the endpoint, written directly. */
  async function failedDeliveries(endpoint: WebhookEndpoint, accountId: string, count: number) {
    const now = clock.now()
    for (let i = 0; i < count; i += 500) {
      const rows = Array.from({ length: Math.min(500, count - i) }, () => {
        const id = newId('evt')
        const envelope = {
          object: 'event',
          id,
          type: 'operator.created',
          api_version: '2026-11-22',
          livemode: false,
          created: new Date(now).toISOString(),
          data: { object: { object: 'operator', id: newId('op') } },
        }
        return {
          id,
          account_id: accountId,
          livemode: 0 as const,
          type: 'operator.created',
          created_at: now,
          payload: JSON.stringify(envelope),
          dispatched_at: now,
        }
      })
      await t.db.insertInto('events').values(rows).execute()
      await t.db
        .insertInto('webhook_deliveries')
        .values(
          rows.map((e) => ({
            id: newId('whd'),
            account_id: accountId,
            livemode: 0 as const,
            endpoint_id: endpoint.id,
            event_id: e.id,
            event_type: e.type,
            status: 'failed' as const,
            scheduled_attempts: MAX_SCHEDULED_ATTEMPTS,
            next_attempt_at: null,
            locked_until: null,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute()
    }
  }

  it('recovers more than a batch of failed deliveries once, even when two recovers race, each sent once', async () => {
    const { api, key } = await freshAccount(t)
    const since = new Date(clock.now() - 1000).toISOString()
    const { endpoint, path } = await endpointOn(api, receiver, ['operator.*'])
    const count = 2 * RECOVER_BATCH + 300
    await failedDeliveries(endpoint, key.account_id, count)
    // Recovered a second later: the window ends at the service's "now", exclusive.
    clock.advance(1000)

    const [a, b] = await Promise.all([
      api.post<Recovery>(`/v1/webhook-endpoints/${endpoint.id}/recover`, { since }),
      api.post<Recovery>(`/v1/webhook-endpoints/${endpoint.id}/recover`, { since }),
    ])
    expect([a.status, b.status]).toEqual([200, 200])
    expect(a.body.recovered + b.body.recovered).toBe(count)
    expect(a.body.created + b.body.created).toBe(0)

    await waitWhileTimePasses(
      clock,
      () => new Set(receiver.requestsTo(path).map((r) => r.headers['x-service-id'])).size,
      (distinct) => distinct === count,
      90_000,
    )
    // A third recover while the last ones are being recorded: nothing that succeeded goes out again.
    await api.post(`/v1/webhook-endpoints/${endpoint.id}/recover`, { since })
    await expectNoMoreAttempts({ clock, db: t.db, receiver }, endpoint.id, path, count)
  }, 120_000)

  it('keeps one delivery per event and endpoint with a unique index, not only a check', async () => {
    const { api, key } = await freshAccount(t)
    const { endpoint } = await endpointOn(api, receiver, ['operator.*'])
    await failedDeliveries(endpoint, key.account_id, 1)
    const [row] = await t.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('endpoint_id', '=', endpoint.id)
      .execute()
    if (!row) throw new Error('no delivery')
    await expect(
      t.db
        .insertInto('webhook_deliveries')
        .values({ ...row, id: newId('whd') })
        .execute(),
    ).rejects.toThrow(/unique/i)
  })
})
