import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dispatchEvents } from '../../../src/modules/events/relay.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { uniq } from '../../helpers/assertions.js'
import { freshAccount } from '../../helpers/fixtures.js'

/** The dispatcher runs by hand here (no worker), so an event can wait while an endpoint is created. */
describe('an endpoint receives only events that happened after it was created', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp({ worker: 'off', webhookAllowPrivateUrls: true })
  })
  afterAll(async () => {
    await t?.close()
  })

  it('does not get an event created before it, though dispatched after', async () => {
    const { api } = await freshAccount(t)
    const before = await api.post<{ id: string }>('/v1/operators', { ident: uniq('op'), name: 'Ada' })
    expect(before.status).toBe(201)
    const endpoint = await api.post<{ id: string }>('/v1/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hook',
      enabled_events: ['*'],
    })
    expect(endpoint.status).toBe(201)
    const after = await api.post<{ id: string }>('/v1/operators', { ident: uniq('op'), name: 'Bea' })
    expect(after.status).toBe(201)

    while ((await dispatchEvents(t.db)) > 0) {}
    const deliveries = await t.db
      .selectFrom('webhook_deliveries')
      .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
      .select('events.payload')
      .where('endpoint_id', '=', endpoint.body.id)
      .execute()
    expect(
      deliveries.map((d) => (JSON.parse(d.payload) as { data: { object: { id: string } } }).data.object.id),
    ).toEqual([after.body.id])
  })
})
