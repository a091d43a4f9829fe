import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createReceiver } from '../../packages/client/examples/receiver.js'
import {
  constructWebhookEvent,
  type Operator,
  verifyWebhook,
  type WebhookDelivery,
  type WebhookEvent,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from '../../packages/client/src/index.js'
import { waitUntil } from '../helpers/assertions.js'
import { type ReceivedRequest, WebhookReceiver } from '../helpers/webhook-receiver.js'
import { type ServedApp, serveApp, uniq } from './setup.js'

const signatureOf = (request: ReceivedRequest) => {
  const value = request.headers['x-service-signature']
  return Array.isArray(value) ? value.join(',') : (value ?? '')
}

function reasonOf(fn: () => void): WebhookVerificationReason | 'did_not_throw' {
  try {
    fn()
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason
    throw error
  }
  return 'did_not_throw'
}

describe('verifyWebhook from the client package, on deliveries made by the service (inline worker)', () => {
  let served: ServedApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    served = await serveApp({
      worker: 'inline',
      webhookAllowPrivateUrls: true,
      webhookBackoffScale: 0.0005,
      webhookTimeoutMs: 2000,
    })
  })
  afterAll(async () => {
    await served?.close()
    await receiver?.close()
  })

  it('accepts a real delivery; refuses a tampered body, a wrong secret and a stale timestamp', async () => {
    const { client } = await served.client()
    const path = receiver.freshPath()
    const endpoint = await client.webhookEndpoints.create({
      url: receiver.url(path),
      enabled_events: ['operator.created'],
    })
    const operator = await client.operators.create({ ident: uniq('W'), name: 'Ada' })

    const [request] = await receiver.waitForRequests(path, 1)
    if (!request) throw new Error('no delivery')
    const signature = signatureOf(request)
    expect(() => verifyWebhook(request.body, signature, endpoint.secret)).not.toThrow()
    expect(() => verifyWebhook(Buffer.from(request.body, 'utf8'), signature, [endpoint.secret])).not.toThrow()

    const event = constructWebhookEvent(request.body, signature, endpoint.secret)
    expect(event).toMatchObject({ object: 'event', type: 'operator.created', livemode: false })
    expect(event.id).toMatch(/^evt_/)
    expect((event.data.object as Operator).id).toBe(operator.id)
    expect(request.headers['x-service-event']).toBe('operator.created')
    // What was delivered is the event the API serves.
    expect(await client.events.retrieve(event.id)).toEqual(event)

    const tampered = request.body.replace('"Ada"', '"Eve"')
    expect(tampered).not.toBe(request.body)
    expect(reasonOf(() => verifyWebhook(tampered, signature, endpoint.secret))).toBe('no_matching_signature')
    expect(reasonOf(() => verifyWebhook(request.body, signature, 'whsec_not_the_secret'))).toBe(
      'no_matching_signature',
    )
    const t = Number(/t=(\d+)/.exec(signature)?.[1])
    expect(reasonOf(() => verifyWebhook(request.body, signature, endpoint.secret, { now: t + 301 }))).toBe(
      'timestamp_outside_tolerance',
    )
    expect(reasonOf(() => verifyWebhook(request.body, 'garbage', endpoint.secret))).toBe('malformed_header')
  })

  it('during a secret rotation a delivery verifies with the new secret and with the previous one', async () => {
    const { client } = await served.client()
    const path = receiver.freshPath()
    const endpoint = await client.webhookEndpoints.create({ url: receiver.url(path), enabled_events: ['*'] })
    const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id, { grace_hours: 1 })
    await client.webhookEndpoints.sendTest(endpoint.id)

    const [request] = await receiver.waitForRequests(path, 1)
    if (!request) throw new Error('no delivery')
    const signature = signatureOf(request)
    expect(signature.match(/v1=/g)).toHaveLength(2)
    expect(() => verifyWebhook(request.body, signature, rotated.secret)).not.toThrow()
    expect(() => verifyWebhook(request.body, signature, endpoint.secret)).not.toThrow()
    expect(() => verifyWebhook(request.body, signature, [rotated.secret, endpoint.secret])).not.toThrow()
    expect(constructWebhookEvent(request.body, signature, rotated.secret).type).toBe('webhook_endpoint.test')
  })

  describe('examples/receiver.ts', () => {
    let server: Server
    let url: string
    const secrets: string[] = []
    const handled: WebhookEvent[] = []

    beforeAll(async () => {
      server = createReceiver({ secrets, onEvent: (event) => void handled.push(event) })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`
    })
    afterAll(async () => {
      await new Promise<void>((resolve) => {
        server?.close(() => resolve())
        server?.closeAllConnections()
      })
    })

    it('verifies each delivery, handles each event once and answers a repeat 200 "duplicate"', async () => {
      const { client } = await served.client()
      const endpoint = await client.webhookEndpoints.create({ url, enabled_events: ['operator.*'] })
      secrets.push(endpoint.secret)

      const operator = await client.operators.create({ ident: uniq('W') })
      // The receiver handles operator.created.
      const first = await waitUntil(
        () => handled[0],
        (event): event is WebhookEvent => event !== undefined,
      )
      expect(first).toMatchObject({ type: 'operator.created' })
      expect((first.data.object as Operator).id).toBe(operator.id)

      const delivery = await waitUntil(
        async () => (await client.webhookDeliveries.list({ endpoint_id: endpoint.id })).data[0],
        (latest): latest is WebhookDelivery => latest?.status === 'succeeded',
      )
      expect(delivery.attempts.at(-1)).toMatchObject({ status_code: 200, response_excerpt: 'ok' })

      // The same event again (a resend is the same delivery, the same event id): not handled twice.
      const resent = await client.webhookDeliveries.resend(delivery.id)
      expect(resent.attempts.at(-1)).toMatchObject({
        kind: 'resend',
        status_code: 200,
        response_excerpt: 'duplicate',
      })
      expect(handled).toHaveLength(1)

      // A forged delivery is refused before any handling.
      const forged = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`,
        },
        body: JSON.stringify({ ...first, id: 'evt_forged' }),
      })
      expect(forged.status).toBe(400)
      expect(await forged.text()).toBe('rejected: no_matching_signature')
      expect(handled).toHaveLength(1)

      // A new event is handled.
      await client.operators.update(operator.id, { name: 'Renamed' })
      // The receiver handles operator.updated.
      await waitUntil(
        () => handled.length,
        (count) => count === 2,
      )
      expect(handled.map((e) => e.type)).toEqual(['operator.created', 'operator.updated'])
      expect(new Set(handled.map((e) => e.id)).size).toBe(2)
    })
  })
})
