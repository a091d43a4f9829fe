import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AttendanceValidationError } from '../../packages/client/src/index.js'
import { WebhookReceiver } from '../helpers/webhook-receiver.js'
import { type ServedApp, serveApp } from './setup.js'

describe('client.webhookEndpoints.recover against the real API over HTTP', () => {
  let served: ServedApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    served = await serveApp({ webhookAllowPrivateUrls: true })
  })
  afterAll(async () => {
    await served?.close()
    await receiver?.close()
  })

  it('answers the webhook_recovery, and refuses a window more than 14 days back', async () => {
    const { client } = await served.client()
    const endpoint = await client.webhookEndpoints.create({
      url: receiver.url(receiver.freshPath()),
      enabled_events: ['*'],
    })
    const since = new Date(Date.now() - 3_600_000).toISOString()
    const until = new Date().toISOString()
    const recovery = await client.webhookEndpoints.recover(endpoint.id, { since, until })
    expect(recovery).toEqual({
      object: 'webhook_recovery',
      endpoint_id: endpoint.id,
      since,
      until,
      recovered: 0,
      created: 0,
    })
    const longAgo = new Date(Date.now() - 15 * 86_400_000).toISOString()
    const refused = await client.webhookEndpoints.recover(endpoint.id, { since: longAgo }).catch((e) => e)
    expect(refused).toBeInstanceOf(AttendanceValidationError)
    expect(refused).toMatchObject({ code: 'invalid_value', param: 'since' })
  })
})
