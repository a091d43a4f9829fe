import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  DEFAULT_MAX_PER_ENDPOINT,
  EndpointWindows,
  INITIAL_ENDPOINT_WINDOW,
  MAX_REMEMBERED_WINDOWS,
} from '../../../src/modules/webhooks/endpoint-windows.js'
import { dispatchEvents } from '../../../src/modules/webhooks/outbox-relay.js'
import { WebhookWorker } from '../../../src/modules/webhooks/worker.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { uniq, waitUntil } from '../../helpers/assertions.js'
import { parked, useTestClock } from '../../helpers/clock.js'
import { freshAccount } from '../../helpers/fixtures.js'
import { endpointOn } from '../../helpers/webhook-endpoints.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'
import { heldDeliveries, INLINE_APP_WAITS, waitWhileTimePasses } from '../../helpers/webhook-schedule.js'

/** Windows over a worker's holdings that the test sets by hand. */
function windowsHolding(held: Record<string, number>, maxPerEndpoint = DEFAULT_MAX_PER_ENDPOINT) {
  return new EndpointWindows(maxPerEndpoint, (id) => held[id] ?? 0)
}

describe('per-endpoint windows', () => {
  it(`start at ${INITIAL_ENDPOINT_WINDOW}, or at maxPerEndpoint when that is smaller`, () => {
    expect(windowsHolding({}).of('we_a')).toBe(INITIAL_ENDPOINT_WINDOW)
    expect(windowsHolding({}, 2).of('we_a')).toBe(2)
  })

  it('grow by one after each 2xx up to maxPerEndpoint and halve after each failure, never below 1', () => {
    const windows = windowsHolding({}, 6)
    const after = (succeeded: boolean) => {
      windows.adapt('we_a', succeeded)
      return windows.of('we_a')
    }
    expect([true, true, true, true].map(after)).toEqual([5, 6, 6, 6])
    expect([false, false, false, false].map(after)).toEqual([3, 1, 1, 1])
    expect(after(true)).toBe(2)
    expect(windows.of('we_b')).toBe(INITIAL_ENDPOINT_WINDOW)
  })

  it('leave a claim what each window can start: full endpoints skipped, other caps listed', () => {
    const held = { we_full: INITIAL_ENDPOINT_WINDOW, we_some: 1, we_grown: 2 }
    const windows = windowsHolding(held)
    windows.adapt('we_grown', true)
    windows.adapt('we_idle', false)
    expect(windows.free('we_some')).toBe(INITIAL_ENDPOINT_WINDOW - 1)
    const limits = windows.claimLimits(Object.keys(held))
    expect(limits.skipEndpoints).toEqual(['we_full'])
    expect(Object.fromEntries(limits.endpointCaps)).toEqual({
      we_some: INITIAL_ENDPOINT_WINDOW - 1,
      we_grown: INITIAL_ENDPOINT_WINDOW + 1 - 2,
      we_idle: INITIAL_ENDPOINT_WINDOW / 2,
    })
  })

  it(`remember ${MAX_REMEMBERED_WINDOWS} windows of endpoints with nothing in hand, forgetting the least recently adapted`, () => {
    const windows = windowsHolding({ we_0: 1 })
    for (let i = 0; i <= MAX_REMEMBERED_WINDOWS + 1; i++) windows.adapt(`we_${i}`, false)
    const remembered = windows.claimLimits([]).endpointCaps
    expect(remembered.size).toBe(MAX_REMEMBERED_WINDOWS)
    // we_0 is the oldest but in hand, so it stays; we_1 and we_2 go.
    expect(remembered.has('we_0')).toBe(true)
    expect(remembered.has('we_1')).toBe(false)
    expect(remembered.has('we_2')).toBe(false)
    expect(windows.of('we_1')).toBe(INITIAL_ENDPOINT_WINDOW)
    expect(remembered.get(`we_${MAX_REMEMBERED_WINDOWS + 1}`)).toBe(INITIAL_ENDPOINT_WINDOW / 2)
  })
})

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

describe('a receiver that hangs (inline worker)', () => {
  // Standing still: the worker's loops park on it, which tells when they have done what they can.
  const clock = useTestClock()
  // A receiver that has never answered has the initial window: it holds that many attempts open.
  it(`holds at most ${INITIAL_ENDPOINT_WINDOW} attempts open and never delays another endpoint`, async () => {
    const receiver = await WebhookReceiver.start()
    // A timeout far beyond the test, so the hanging attempts stay open until released.
    const t = await buildTestApp({
      worker: 'inline',
      webhookAllowPrivateUrls: true,
      webhookTimeoutMs: 120_000,
    })
    let release = () => {}
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    try {
      const api = t.client((await t.key()).secret)
      const hanging = receiver.freshPath('hanging')
      receiver.respond(hanging, { heldUntil: released })
      const healthy = receiver.freshPath('healthy')
      const endpointIds: string[] = []
      for (const path of [hanging, healthy]) {
        const created = await api.post<{ id: string }>('/v1/webhook-endpoints', {
          url: receiver.url(path),
          enabled_events: ['operator.created'],
        })
        expect(created.status).toBe(201)
        endpointIds.push(created.body.id)
      }
      const hangingId = endpointIds[0] as string
      const EVENTS = DEFAULT_MAX_PER_ENDPOINT * 2 + 8
      for (let i = 0; i < EVENTS; i++) {
        expect((await api.post('/v1/operators', { ident: uniq('hang') })).status).toBe(201)
      }

      // The healthy endpoint gets every event while the hanging one has not answered once.
      await waitWhileTimePasses(
        clock,
        () => receiver.requestsTo(healthy).length,
        (n) => n >= EVENTS,
      )
      await receiver.waitForRequests(hanging, INITIAL_ENDPOINT_WINDOW)
      // Every loop parked, every claim it made committed: an attempt beyond the window would hold
      // its delivery now, whether or not its request has arrived yet.
      await parked(clock, INLINE_APP_WAITS)
      expect(await heldDeliveries(t.db, [hangingId])).toHaveLength(INITIAL_ENDPOINT_WINDOW)
      expect(receiver.requestsTo(hanging)).toHaveLength(INITIAL_ENDPOINT_WINDOW)

      release()
      await waitWhileTimePasses(
        clock,
        () => receiver.requestsTo(hanging).length,
        (n) => n >= EVENTS,
      )
      // Every attempt recorded (so every request it made has been answered, and counted) and the
      // loops parked: a delivery sent twice would show here.
      await waitUntil(
        () => heldDeliveries(t.db, [hangingId]),
        (held) => held.length === 0,
      )
      await parked(clock, INLINE_APP_WAITS)
      const ids = receiver.requestsTo(hanging).map((r) => r.headers['x-service-id'])
      expect(ids).toHaveLength(EVENTS)
      expect(new Set(ids).size).toBe(EVENTS)
    } finally {
      release()
      await t.close()
      await receiver.close()
    }
  }, 60_000)
})
