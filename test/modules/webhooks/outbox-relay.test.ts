import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recordEvents } from '../../../src/modules/events/outbox.js'
import { DISPATCH_BATCH, dispatchEvents } from '../../../src/modules/webhooks/outbox-relay.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { uniq } from '../../helpers/assertions.js'
import { freshAccount } from '../../helpers/fixtures.js'

/** The relay runs by hand here (no worker), so an event can wait while an endpoint is created. */
describe('the outbox relay', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp({ worker: 'off', webhookAllowPrivateUrls: true })
  })
  afterAll(async () => {
    await t?.close()
  })

  async function endpoint(api: ReturnType<TestApp['client']>) {
    const res = await api.post<{ id: string }>('/v1/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hook',
      enabled_events: ['*'],
    })
    expect(res.status).toBe(201)
    return res.body.id
  }

  it('gives an endpoint only the events that happened after it was created, though dispatched after', async () => {
    const { api } = await freshAccount(t)
    const before = await api.post<{ id: string }>('/v1/operators', { ident: uniq('op'), name: 'Ada' })
    expect(before.status).toBe(201)
    const endpointId = await endpoint(api)
    const after = await api.post<{ id: string }>('/v1/operators', { ident: uniq('op'), name: 'Bea' })
    expect(after.status).toBe(201)

    while ((await dispatchEvents(t.db)) > 0) {}
    const deliveries = await t.db
      .selectFrom('webhook_deliveries')
      .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
      .select('events.payload')
      .where('endpoint_id', '=', endpointId)
      .execute()
    expect(
      deliveries.map((d) => (JSON.parse(d.payload) as { data: { object: { id: string } } }).data.object.id),
    ).toEqual([after.body.id])
  })

  it(`dispatches at most ${DISPATCH_BATCH} events a call, each once, and answers 0 when none is left`, async () => {
    const { api, key } = await freshAccount(t)
    const endpointId = await endpoint(api)
    while ((await dispatchEvents(t.db)) > 0) {}
    const auth = { principalId: key.id, locationIds: null, accountId: key.account_id, livemode: false }
    const types = Array.from({ length: DISPATCH_BATCH + 1 }, () => 'operator.updated' as const)
    await t.db
      .transaction()
      .execute((trx) => recordEvents(trx, auth, types, { object: 'operator', id: 'op_relay' }))

    expect(await dispatchEvents(t.db)).toBe(DISPATCH_BATCH)
    expect(await dispatchEvents(t.db)).toBe(1)
    expect(await dispatchEvents(t.db)).toBe(0)
    const undispatched = await t.db
      .selectFrom('events')
      .select('id')
      .where('account_id', '=', key.account_id)
      .where('dispatched_at', 'is', null)
      .execute()
    expect(undispatched).toEqual([])
    const deliveries = await t.db
      .selectFrom('webhook_deliveries')
      .select((eb) => [
        eb.fn.countAll<number | string>().as('count'),
        eb.fn.count<number | string>('event_id').distinct().as('events'),
      ])
      .where('endpoint_id', '=', endpointId)
      .executeTakeFirstOrThrow()
    expect({ count: Number(deliveries.count), events: Number(deliveries.events) }).toEqual({
      count: DISPATCH_BATCH + 1,
      events: DISPATCH_BATCH + 1,
    })
  })
})
