import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import { type EventEnvelope, uniq, type WebhookEndpoint } from '../../helpers/assertions.js'
import { eventsOf, freshAccount } from '../../helpers/fixtures.js'
import { endpointOn } from '../../helpers/webhook-endpoints.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'

describe('webhook_endpoint.disabled', () => {
  let t: TestApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    t = await buildTestApp({
      worker: 'inline',
      webhookAllowPrivateUrls: true,
      webhookBackoffScale: 0.0002,
      webhookDisableThreshold: 1,
    })
  })
  afterAll(async () => {
    await t?.close()
    await receiver?.close()
  })

  const disabledEventsOf = async (accountId: string) =>
    (await eventsOf(t, accountId)).filter((e) => e.type === 'webhook_endpoint.disabled')

  async function disableByFailures(api: ApiClient, accountId: string, id: string, expected: number) {
    expect((await api.post('/v1/operators', { ident: uniq('op'), name: 'Ada' })).status).toBe(201)
    return receiver.waitFor(
      async () => {
        const events = await disabledEventsOf(accountId)
        return events.length === expected ? events : undefined
      },
      15_000,
      `${expected} webhook_endpoint.disabled event(s) about ${id}`,
    )
  }

  it('is emitted once per auto-disablement, carries the endpoint without its secret, and reaches every subscriber but that endpoint', async () => {
    const { api, key } = await freshAccount(t)
    const failing = await endpointOn(api, receiver, ['*'], { status: 500 })
    const watcher = await endpointOn(api, receiver, ['webhook_endpoint.disabled'])
    const everything = await endpointOn(api, receiver, ['webhook_endpoint.*', 'location.*'])
    const unrelated = await endpointOn(api, receiver, ['operator.*'])

    const [event] = await disableByFailures(api, key.account_id, failing.endpoint.id, 1)
    const endpoint = (await api.get<WebhookEndpoint>(`/v1/webhook-endpoints/${failing.endpoint.id}`)).body
    expect(endpoint.status).toBe('disabled')
    expect(event?.data.object).toEqual(endpoint)
    expect(event?.data.object).not.toHaveProperty('secret')
    expect(JSON.stringify(event)).not.toContain('whsec_')

    for (const { path } of [watcher, everything]) {
      const [received] = await receiver.waitFor(
        () => {
          const about = receiver
            .requestsTo(path)
            .filter((r) => (JSON.parse(r.body) as EventEnvelope).type === 'webhook_endpoint.disabled')
          return about.length > 0 ? about : undefined
        },
        10_000,
        `the disabled event at ${path}`,
      )
      expect((JSON.parse(received?.body ?? '{}') as EventEnvelope).id).toBe(event?.id)
    }
    const sentTo = await t.db
      .selectFrom('webhook_deliveries')
      .select('endpoint_id')
      .where('event_id', '=', event?.id ?? '')
      .execute()
    expect(sentTo.map((d) => d.endpoint_id).sort()).toEqual(
      [watcher.endpoint.id, everything.endpoint.id].sort(),
    )
    expect(sentTo.map((d) => d.endpoint_id)).not.toContain(unrelated.endpoint.id)

    // Re-enabled, it fails again: a second disablement, a second event; recover does not give the
    // endpoint the news of its own disablement either.
    expect(
      (await api.patch(`/v1/webhook-endpoints/${failing.endpoint.id}`, { status: 'enabled' })).status,
    ).toBe(200)
    const since = new Date(Date.parse(event?.created ?? '') - 1000).toISOString()
    receiver.respond(failing.path, { status: 200 })
    const recovery = await api.post<{ created: number }>(
      `/v1/webhook-endpoints/${failing.endpoint.id}/recover`,
      {
        since,
      },
    )
    expect(recovery.status).toBe(200)
    const deliveries = await t.db
      .selectFrom('webhook_deliveries')
      .select('event_type')
      .where('endpoint_id', '=', failing.endpoint.id)
      .execute()
    expect(deliveries.map((d) => d.event_type)).not.toContain('webhook_endpoint.disabled')

    receiver.respond(failing.path, { status: 500 })
    const events = await disableByFailures(api, key.account_id, failing.endpoint.id, 2)
    expect(events.map((e) => e.data.object.id)).toEqual([failing.endpoint.id, failing.endpoint.id])
  }, 30_000)

  it('is not emitted when an endpoint is disabled by hand', async () => {
    const { api, key } = await freshAccount(t)
    const { endpoint } = await endpointOn(api, receiver, ['*'])
    expect((await api.patch(`/v1/webhook-endpoints/${endpoint.id}`, { status: 'disabled' })).status).toBe(200)
    expect(await disabledEventsOf(key.account_id)).toEqual([])
  })
})
