import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dispatchEvents } from '../../../src/modules/events/relay.js'
import { WebhookWorker } from '../../../src/modules/webhooks/worker.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { uniq } from '../../helpers/assertions.js'
import { freshAccount } from '../../helpers/fixtures.js'
import { endpointOn } from '../../helpers/webhook-endpoints.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'

/**
 * A worker with few slots (8) and a backlog of a hanging and a failing endpoint due before the
 * healthy endpoint's deliveries. With claims oldest-due-first and 16 slots per endpoint, the
 * hanging endpoint's backlog took every slot and the healthy endpoint waited for the hanging
 * attempts to time out; with per-endpoint windows it gets everything while they still hang.
 */
describe('a failing receiver never delays a healthy one', () => {
  let t: TestApp
  let receiver: WebhookReceiver
  let release = () => {}
  const released = new Promise<void>((resolve) => {
    release = resolve
  })

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    t = await buildTestApp({ worker: 'off', webhookAllowPrivateUrls: true })
  })
  afterAll(async () => {
    release()
    await t?.close()
    await receiver?.close()
  })

  it('delivers to the healthy endpoint while the hanging one has not answered once', async () => {
    const { api } = await freshAccount(t)
    const hanging = await endpointOn(api, receiver, ['operator.*'], { heldUntil: released })
    const failing = await endpointOn(api, receiver, ['operator.*'], { status: 500, delayMs: 100 })
    const healthy = await endpointOn(api, receiver, ['location.*'])
    const BACKLOG = 20
    for (let i = 0; i < BACKLOG; i++)
      expect((await api.post('/v1/operators', { ident: uniq('op'), name: 'Ada' })).status).toBe(201)
    while ((await dispatchEvents(t.db)) > 0) {}
    const HEALTHY = 10
    for (let i = 0; i < HEALTHY; i++)
      expect((await api.post('/v1/locations', { name: uniq('loc') })).status).toBe(201)
    while ((await dispatchEvents(t.db)) > 0) {}

    const worker = new WebhookWorker(
      t.db,
      {
        // Far beyond the test: the hanging attempts stay open until released.
        timeoutMs: 120_000,
        backoffScale: 0.0002,
        disableThreshold: 1000,
        allowPrivateUrls: true,
        maxInFlight: 8,
        pollMs: 20,
      },
      { info: () => {}, error: () => {} },
    )
    worker.start()
    try {
      await receiver.waitForRequests(healthy.path, HEALTHY, 10_000)
      // Nothing of the hanging endpoint has come back, and the failing one went on being retried.
      expect(receiver.requestsTo(hanging.path).length).toBeLessThan(8)
      expect(receiver.requestsTo(failing.path).length).toBeGreaterThan(0)
    } finally {
      release()
      await worker.stop()
    }
  }, 30_000)
})
