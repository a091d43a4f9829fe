import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { type WebhookDelivery as Delivery, waitUntil } from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'
import { expectNoMoreAttempts } from '../../helpers/webhook-schedule.js'

/**
 * An endpoint disabled by hand while an attempt to it is in flight: the attempt is still logged, but
 * its outcome neither revives the stopped delivery nor counts against the endpoint, and its lease is
 * given back, so a recover sends the delivery at once.
 */
describe('an attempt that finishes after its endpoint was disabled', () => {
  const clock = useTestClock()
  let t: TestApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    t = await buildTestApp({
      worker: 'inline',
      webhookAllowPrivateUrls: true,
      webhookDisableThreshold: 1,
    })
  })
  afterAll(async () => {
    await t.close()
    await receiver.close()
  })

  it.each([
    ['a retryable failure (500)', 500],
    ['a final failure (410)', 410],
  ])('%s leaves the delivery stopped and the endpoint as the user left it', async (_name, status) => {
    const since = new Date(clock.now()).toISOString()
    const key = await t.key({ account: `inflight-${status}` })
    const api = t.client(key.secret)
    const path = receiver.freshPath()
    // Answered once the endpoint has been disabled: the attempt is in flight meanwhile.
    let answer = () => {}
    receiver.respond(path, { status, heldUntil: new Promise<void>((resolve) => (answer = resolve)) })
    const endpoint = await api.post<{ id: string }>('/v1/webhook-endpoints', {
      url: receiver.url(path),
      enabled_events: ['operator.created'],
    })
    expect(endpoint.status).toBe(201)
    expect((await api.post('/v1/operators', { ident: `W-${status}` })).status).toBe(201)

    await receiver.waitForRequests(path, 1)
    const disabled = await api.patch(`/v1/webhook-endpoints/${endpoint.body.id}`, { status: 'disabled' })
    expect(disabled.body).toMatchObject({ status: 'disabled', disabled_reason: 'manual' })
    answer()

    const list = async () =>
      (await api.get<{ data: Delivery[] }>(`/v1/webhook-deliveries?endpoint_id=${endpoint.body.id}`)).body
        .data
    const [delivery] = await waitUntil(list, ([first]) => first?.attempts.length === 1)
    expect(delivery?.attempts.map((a) => a.status_code)).toEqual([status])
    expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null })

    const after = await api.get(`/v1/webhook-endpoints/${endpoint.body.id}`)
    expect(after.body).toMatchObject({ status: 'disabled', disabled_reason: 'manual' })
    const row = await t.db
      .selectFrom('webhook_endpoints')
      .select('consecutive_failures')
      .where('id', '=', endpoint.body.id)
      .executeTakeFirstOrThrow()
    expect(row.consecutive_failures).toBe(0)
    // Nothing more is sent to the disabled endpoint, whatever the time.
    await expectNoMoreAttempts({ clock, db: t.db, receiver }, endpoint.body.id, path, 1)

    // The attempt's record gave its lease back: re-enabled and recovered, the delivery is sent at
    // once, not when the lease (2 × timeout + 30 s) runs out.
    const lease = await t.db
      .selectFrom('webhook_deliveries')
      .select('locked_until')
      .where('id', '=', delivery?.id as string)
      .executeTakeFirstOrThrow()
    expect(lease.locked_until).toBeNull()
    receiver.respond(path, { status: 200 })
    await api.patch(`/v1/webhook-endpoints/${endpoint.body.id}`, { status: 'enabled' })
    const recovered = await api.post(`/v1/webhook-endpoints/${endpoint.body.id}/recover`, {
      since,
    })
    expect(recovered.body).toMatchObject({ recovered: 1, created: 0 })
    await receiver.waitForRequests(path, 2, 10_000)
  })
})
