import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type List, uniq, type WebhookDelivery } from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import { freshAccount } from '../../helpers/fixtures.js'
import { deliveriesWhen, endpointOn } from '../../helpers/webhook-endpoints.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'

describe('GET /v1/webhook-deliveries by creation time', () => {
  const clock = useTestClock()
  let t: TestApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    t = await buildTestApp({ worker: 'inline', webhookAllowPrivateUrls: true })
  })
  afterAll(async () => {
    await t?.close()
    await receiver?.close()
  })

  it('filters by created_from (inclusive) and created_to (exclusive), with the other filters', async () => {
    const { api } = await freshAccount(t)
    const { endpoint } = await endpointOn(api, receiver, ['operator.*'])
    const createOne = async (count: number) => {
      expect((await api.post('/v1/operators', { ident: uniq('op'), name: 'Ada' })).status).toBe(201)
      // Succeeded, not only created: the status filter below must see both as delivered.
      return deliveriesWhen(
        api,
        receiver,
        endpoint.id,
        (ds) => ds.length === count && ds.every((d) => d.status === 'succeeded'),
        `${count} succeeded deliveries`,
      )
    }
    const [first] = await createOne(1)
    // The second delivery is created a step of the service's clock later.
    clock.advance(20)
    const [second] = await createOne(2)
    if (!first || !second) throw new Error('missing deliveries')
    expect(Date.parse(second.created) - Date.parse(first.created)).toBe(20)

    const list = async (query: string) => {
      const res = await api.get<List<WebhookDelivery>>(
        `/v1/webhook-deliveries?endpoint_id=${endpoint.id}&${query}`,
      )
      expect(res.status).toBe(200)
      return res.body.data.map((d) => d.id)
    }
    expect(await list(`created_from=${second.created}`)).toEqual([second.id])
    expect(await list(`created_to=${second.created}`)).toEqual([first.id])
    expect(await list(`created_from=${first.created}&created_to=${second.created}`)).toEqual([first.id])
    expect(await list(`created_from=${first.created}&status=succeeded`)).toEqual([second.id, first.id])
    expect(
      await list(`created_from=${encodeURIComponent(new Date(clock.now() + 60_000).toISOString())}`),
    ).toEqual([])
  })

  it('refuses an instant that is not one, naming the param', async () => {
    const { api } = await freshAccount(t)
    expectError(
      await api.get('/v1/webhook-deliveries?created_from=yesterday'),
      422,
      'validation_error',
      'invalid_timestamp',
      'created_from',
    )
    expectError(
      await api.get('/v1/webhook-deliveries?created_to=2026-13-01T00:00:00Z'),
      422,
      'validation_error',
      'invalid_timestamp',
      'created_to',
    )
  })
})
