import { expect } from 'vitest'
import type { ApiClient } from './app.js'
import type { List, WebhookDelivery, WebhookEndpoint } from './assertions.js'
import type { Responder, WebhookReceiver } from './webhook-receiver.js'

/** An endpoint on a fresh path of `receiver`, answering as `respond` says (200 when not given). */
export async function endpointOn(
  api: ApiClient,
  receiver: WebhookReceiver,
  enabledEvents: string[],
  respond?: Responder,
): Promise<{ endpoint: WebhookEndpoint; path: string }> {
  const path = receiver.freshPath()
  if (respond !== undefined) receiver.respond(path, respond)
  const res = await api.post<WebhookEndpoint>('/v1/webhook-endpoints', {
    url: receiver.url(path),
    enabled_events: enabledEvents,
  })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return { endpoint: res.body, path }
}

/** Every delivery of an endpoint (newest first), through the API. */
export async function deliveriesOf(api: ApiClient, endpointId: string): Promise<WebhookDelivery[]> {
  const res = await api.get<List<WebhookDelivery>>(
    `/v1/webhook-deliveries?endpoint_id=${endpointId}&limit=200`,
  )
  expect(res.status).toBe(200)
  return res.body.data
}

/** Polls the endpoint's deliveries until `done` holds for them, and returns them. */
export function deliveriesWhen(
  api: ApiClient,
  receiver: WebhookReceiver,
  endpointId: string,
  done: (deliveries: WebhookDelivery[]) => boolean,
  description: string,
  timeoutMs = 15_000,
): Promise<WebhookDelivery[]> {
  return receiver.waitFor(
    async () => {
      const deliveries = await deliveriesOf(api, endpointId)
      return done(deliveries) ? deliveries : undefined
    },
    timeoutMs,
    description,
  )
}
