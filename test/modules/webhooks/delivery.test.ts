import { createHmac, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyWebhook, WebhookVerificationError } from '../../../packages/client/src/webhooks.js'
import {
  LAST_RETRY_DELAY_MS,
  MAX_SCHEDULED_ATTEMPTS,
  RETRY_AFTER_CAP_MS,
  RETRY_DELAYS_MS,
  RETRY_JITTER,
} from '../../../src/modules/webhooks/policy.js'
import { type ApiClient, buildTestApp, errorOf, type TestApp } from '../../helpers/app.js'
import {
  type WebhookDelivery as Delivery,
  type WebhookEndpoint as Endpoint,
  type WebhookEndpointWithSecret as EndpointWithSecret,
  type EventEnvelope as Envelope,
  ISO_MS,
  uniq,
} from '../../helpers/assertions.js'
import { parked, useTestClock } from '../../helpers/clock.js'
import { freshAccount } from '../../helpers/fixtures.js'
import {
  type ReceivedRequest,
  type ReceiverResponse,
  WebhookReceiver,
} from '../../helpers/webhook-receiver.js'
import {
  expectNoMoreAttempts,
  heldDeliveries,
  INLINE_APP_WAITS,
  nextAttemptAt,
  stepToNextAttempt,
  WORKER_POLL_MS,
} from '../../helpers/webhook-schedule.js'

const envelopeOf = (request: ReceivedRequest) => JSON.parse(request.body) as Envelope
const header = (request: ReceivedRequest, name: string) => {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(',') : value
}

/** `t=…,v1=…[,v1=…]` split into its timestamp and its v1 values, in order. */
function signatureParts(request: ReceivedRequest) {
  const value = header(request, 'x-service-signature') ?? ''
  const parts = value.split(',').map((p) => p.split('='))
  return {
    t: Number(parts.find(([k]) => k === 't')?.[1]),
    v1: parts.filter(([k]) => k === 'v1').map(([, v]) => v),
  }
}

/** The HMAC as a receiver computes it: key = UTF-8 bytes of the whole `whsec_…` string. */
function hmac(secret: string, t: number, body: string) {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${body}`, 'utf8').digest('hex')
}

function expectRejected(request: ReceivedRequest, secret: string) {
  let error: unknown
  try {
    verifyWebhook(request.body, header(request, 'x-service-signature') ?? '', secret)
  } catch (caught) {
    error = caught
  }
  expect(error).toBeInstanceOf(WebhookVerificationError)
  expect((error as WebhookVerificationError).reason).toBe('no_matching_signature')
}

describe('webhook delivery to a real receiver (inline worker)', () => {
  // The service's schedule as it is (a minute to an hour between attempts): the clock is stepped to
  // each retry, and stands still otherwise, so a poll never finds what a wake-up did not.
  const clock = useTestClock()
  let t: TestApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    t = await buildTestApp({
      worker: 'inline',
      webhookAllowPrivateUrls: true,
      webhookTimeoutMs: 2000,
      webhookDisableThreshold: 2,
    })
  })
  afterAll(async () => {
    await t?.close()
    await receiver?.close()
  })

  async function createEndpoint(
    api: ApiClient,
    enabledEvents: string[],
    respond?: Parameters<WebhookReceiver['respond']>[1],
  ) {
    const path = receiver.freshPath()
    if (respond !== undefined) receiver.respond(path, respond)
    const res = await api.post<EndpointWithSecret>('/v1/webhook-endpoints', {
      url: receiver.url(path),
      enabled_events: enabledEvents,
    })
    expect(res.status).toBe(201)
    const { secret, ...endpoint } = res.body
    return { endpoint: endpoint as Endpoint, secret, path }
  }

  async function createOperator(api: ApiClient, ident = uniq('op')) {
    const res = await api.post<{ id: string; ident: string }>('/v1/operators', { ident, name: 'Ada' })
    expect(res.status).toBe(201)
    return res.body
  }

  async function getDelivery(api: ApiClient, id: string) {
    const res = await api.get<Delivery>(`/v1/webhook-deliveries/${id}`)
    expect(res.status).toBe(200)
    return res.body
  }

  /** Polls the delivery until it is no longer pending (or `until` holds). */
  function settledDelivery(api: ApiClient, id: string, until = (d: Delivery) => d.status !== 'pending') {
    return receiver.waitFor(
      async () => {
        const delivery = await getDelivery(api, id)
        return until(delivery) ? delivery : undefined
      },
      15_000,
      `delivery ${id} to settle`,
    )
  }

  async function getEndpoint(api: ApiClient, id: string) {
    const res = await api.get<Endpoint>(`/v1/webhook-endpoints/${id}`)
    expect(res.status).toBe(200)
    return res.body
  }

  async function endpointRow(id: string) {
    return t.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  }

  /** Every delivery row of an event, whoever owns it. */
  async function deliveryRowsOfEvent(eventId: string) {
    return t.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId).execute()
  }

  /** Verifies as a receiver would, its "now" the service's clock (which the tests move hours on). */
  function verify(body: string | Buffer, signature: string, secrets: string | string[]) {
    verifyWebhook(body, signature, secrets, { now: Math.floor(clock.now() / 1000) })
  }

  /**
   * The next scheduled attempt among the endpoints' deliveries, which must reach `path`: a poll
   * before it is due nothing is sent (the sender's poll then finds it not due, and holds nothing),
   * and the step to its time, the sender's next poll, sends it at that time. Returns its request.
   */
  async function nextRetry(endpointIds: string[], path: string): Promise<ReceivedRequest> {
    const before = receiver.requestsTo(path).length
    const seen = receiver.requests.length
    const due = await nextAttemptAt(clock, t.db, endpointIds)
    if (due === undefined) throw new Error(`no attempt scheduled for ${endpointIds.join(', ')}`)
    clock.set(due - WORKER_POLL_MS)
    await parked(clock, INLINE_APP_WAITS)
    expect(receiver.requests).toHaveLength(seen)
    expect(await heldDeliveries(t.db, endpointIds)).toEqual([])
    clock.set(due)
    const request = (await receiver.waitForRequests(path, before + 1))[before] as ReceivedRequest
    expect(request.receivedAt).toBe(due)
    return request
  }

  /** The request on `path` carrying the event about `objectId`. */
  function requestAbout(path: string, objectId: string) {
    return receiver.waitFor(
      () => receiver.requestsTo(path).find((r) => envelopeOf(r).data.object.id === objectId),
      10_000,
      `a request to ${path} about ${objectId}`,
    )
  }

  it('delivers each event only to endpoints whose enabled_events match it', async () => {
    const { api } = await freshAccount(t)
    const exact = await createEndpoint(api, ['operator.updated'])
    const resource = await createEndpoint(api, ['operator.*'])
    const all = await createEndpoint(api, ['*'])
    const none = await createEndpoint(api, ['location.created', 'session.*'])

    const operator = await createOperator(api)
    expect((await api.patch(`/v1/operators/${operator.id}`, { name: 'Grace' })).status).toBe(200)

    // Deliveries run concurrently, so their arrival order is not fixed: compare the sets of types.
    const typesOf = (requests: ReceivedRequest[]) => requests.map((r) => header(r, 'x-service-event')).sort()
    const allSeen = await receiver.waitForRequests(all.path, 2)
    const resourceSeen = await receiver.waitForRequests(resource.path, 2)
    const exactSeen = await receiver.waitForRequests(exact.path, 1)
    expect(typesOf(allSeen)).toEqual(['operator.created', 'operator.updated'])
    expect(typesOf(resourceSeen)).toEqual(['operator.created', 'operator.updated'])
    expect(typesOf(exactSeen)).toEqual(['operator.updated'])

    // Both events have been dispatched (each one's deliveries are created together): nothing else exists.
    const eventOf = (type: string) =>
      envelopeOf(allSeen.find((r) => header(r, 'x-service-event') === type) as ReceivedRequest).id
    expect((await deliveryRowsOfEvent(eventOf('operator.created'))).map((d) => d.endpoint_id).sort()).toEqual(
      [resource.endpoint.id, all.endpoint.id].sort(),
    )
    expect((await deliveryRowsOfEvent(eventOf('operator.updated'))).map((d) => d.endpoint_id).sort()).toEqual(
      [exact.endpoint.id, resource.endpoint.id, all.endpoint.id].sort(),
    )
    expect(receiver.requestsTo(none.path)).toEqual([])
    expect(receiver.requestsTo(exact.path)).toHaveLength(1)

    // The non-matching endpoint is alive: a location event reaches it (and `*`), not the operator ones.
    const location = await api.post<{ id: string }>('/v1/locations', { name: uniq('site') })
    expect(location.status).toBe(201)
    const noneSeen = await receiver.waitForRequests(none.path, 1)
    expect(noneSeen.map((r) => header(r, 'x-service-event'))).toEqual(['location.created'])
    await receiver.waitForRequests(all.path, 3)
    expect(receiver.requestsTo(resource.path)).toHaveLength(2)
    expect(receiver.requestsTo(exact.path)).toHaveLength(1)
  })

  it('signs and labels each POST; the body is exactly the event envelope', async () => {
    const { api } = await freshAccount(t)
    const { endpoint, secret, path } = await createEndpoint(api, ['operator.created'], {
      status: 200,
      body: 'thanks',
    })
    const operator = await api.post<Record<string, unknown>>('/v1/operators', {
      ident: uniq('op'),
      name: 'Ada',
      employee_id: 'E-1',
    })
    expect(operator.status).toBe(201)
    const [request] = await receiver.waitForRequests(path, 1)
    if (!request) throw new Error('unreachable')

    expect(request.method).toBe('POST')
    expect(request.path).toBe(path)
    expect(header(request, 'content-type')).toBe('application/json')
    expect(header(request, 'user-agent')).toBe('AttendanceService-Webhooks/1.0')
    expect(header(request, 'x-service-event')).toBe('operator.created')
    const deliveryId = header(request, 'x-service-id') ?? ''
    expect(deliveryId).toMatch(/^whd_[0-9A-Z]{26}$/)

    const signature = header(request, 'x-service-signature') ?? ''
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    const { t: timestamp, v1 } = signatureParts(request)
    // Signed at the attempt's time, on the service's clock (which stood still until it arrived).
    expect(timestamp).toBe(Math.floor(request.receivedAt / 1000))
    expect(v1).toEqual([hmac(secret, timestamp, request.body)])
    expect(() => verify(request.body, signature, secret)).not.toThrow()
    expect(() => verify(Buffer.from(request.body, 'utf8'), signature, [secret])).not.toThrow()
    expectRejected({ ...request, body: request.body.replace('Ada', 'Eve') }, secret)
    expectRejected(request, `whsec_${randomBytes(32).toString('base64url')}`)
    // The key is the secret string itself, not its base64 payload decoded.
    expect(v1[0]).not.toBe(
      createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
        .update(`${timestamp}.${request.body}`)
        .digest('hex'),
    )

    const envelope = envelopeOf(request)
    expect(Object.keys(envelope).sort()).toEqual([
      'api_version',
      'created',
      'data',
      'id',
      'livemode',
      'object',
      'type',
    ])
    expect(envelope).toMatchObject({ object: 'event', type: 'operator.created', livemode: false })
    expect(envelope.id).toMatch(/^evt_[0-9A-Z]{26}$/)
    expect(envelope.api_version).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(envelope.created).toMatch(ISO_MS)
    expect(envelope.data.object).toEqual(operator.body)
    const fromApi = await api.get<Envelope>(`/v1/events/${envelope.id}`)
    expect(fromApi.status).toBe(200)
    expect(envelope).toEqual(fromApi.body)
    const stored = await t.db
      .selectFrom('events')
      .select('payload')
      .where('id', '=', envelope.id)
      .executeTakeFirstOrThrow()
    expect(request.body).toBe(stored.payload)

    const delivery = await settledDelivery(api, deliveryId)
    expect(delivery).toMatchObject({
      object: 'webhook_delivery',
      id: deliveryId,
      endpoint_id: endpoint.id,
      event_id: envelope.id,
      event_type: 'operator.created',
      status: 'succeeded',
      next_attempt_at: null,
      livemode: false,
    })
    expect(delivery.attempts).toHaveLength(1)
    const [attempt] = delivery.attempts
    expect(attempt).toMatchObject({
      kind: 'scheduled',
      status_code: 200,
      error: null,
      response_excerpt: 'thanks',
    })
    expect(attempt?.attempted_at).toMatch(ISO_MS)
    expect(attempt?.duration_ms).toBeGreaterThanOrEqual(0)
  })

  it('retries failures with the same X-Service-Id until a 2xx', async () => {
    const { api } = await freshAccount(t)
    const { path, endpoint } = await createEndpoint(
      api,
      ['operator.created'],
      [{ status: 500, body: 'boom' }, { status: 500 }, { status: 200 }],
    )
    await createOperator(api)
    const [first] = await receiver.waitForRequests(path, 1)
    const requests = [
      first as ReceivedRequest,
      await nextRetry([endpoint.id], path),
      await nextRetry([endpoint.id], path),
    ]
    const id = header(requests[0] as ReceivedRequest, 'x-service-id') ?? ''
    expect(requests.map((r) => header(r, 'x-service-id'))).toEqual([id, id, id])
    expect(new Set(requests.map((r) => r.body)).size).toBe(1)

    const delivery = await settledDelivery(api, id)
    expect(delivery.status).toBe('succeeded')
    expect(delivery.next_attempt_at).toBeNull()
    expect(delivery.attempts.map((a) => [a.kind, a.status_code])).toEqual([
      ['scheduled', 500],
      ['scheduled', 500],
      ['scheduled', 200],
    ])
    expect(delivery.attempts[0]?.error).toEqual(expect.any(String))
    expect(delivery.attempts[0]?.response_excerpt).toBe('boom')
    expect(delivery.attempts[2]?.error).toBeNull()
    await expectNoMoreAttempts({ clock, db: t.db, receiver }, endpoint.id, path, 3)
  })

  it('a 410 stops the delivery after one request', async () => {
    const { api } = await freshAccount(t)
    const { path, endpoint } = await createEndpoint(api, ['operator.created'], { status: 410 })
    await createOperator(api)
    const [request] = await receiver.waitForRequests(path, 1)
    const delivery = await settledDelivery(api, header(request as ReceivedRequest, 'x-service-id') ?? '')
    expect(delivery.status).toBe('failed')
    expect(delivery.next_attempt_at).toBeNull()
    expect(delivery.attempts.map((a) => a.status_code)).toEqual([410])
    await expectNoMoreAttempts({ clock, db: t.db, receiver }, endpoint.id, path, 1)
    expect((await endpointRow(endpoint.id)).consecutive_failures).toBe(1)
  })

  it(`gives up after exactly ${MAX_SCHEDULED_ATTEMPTS} attempts, backing off exponentially`, async () => {
    expect(MAX_SCHEDULED_ATTEMPTS).toBe(6)
    const { api } = await freshAccount(t)
    const { path, endpoint } = await createEndpoint(api, ['operator.created'], { status: 500 })
    await createOperator(api)
    const requests = await receiver.waitForRequests(path, 1)
    for (let n = 1; n < MAX_SCHEDULED_ATTEMPTS; n++) requests.push(await nextRetry([endpoint.id], path))
    const id = header(requests[0] as ReceivedRequest, 'x-service-id') ?? ''
    expect(new Set(requests.map((r) => header(r, 'x-service-id')))).toEqual(new Set([id]))

    const delivery = await settledDelivery(api, id)
    expect(delivery.status).toBe('failed')
    expect(delivery.next_attempt_at).toBeNull()
    expect(delivery.attempts).toHaveLength(6)
    expect(delivery.attempts.every((a) => a.kind === 'scheduled' && a.status_code === 500)).toBe(true)

    // On the service's clock: 1 min, 2.8 min, 7.7 min, 21.5 min and 1 h after the attempt before,
    // each ± RETRY_JITTER, so each gap is longer than the one before.
    const gaps = requests.slice(1).map((r, i) => r.receivedAt - (requests[i] as ReceivedRequest).receivedAt)
    expect(gaps).toHaveLength(RETRY_DELAYS_MS.length)
    for (const [n, gap] of gaps.entries()) {
      const scheduled = RETRY_DELAYS_MS[n] as number
      expect(gap).toBeGreaterThanOrEqual(Math.round(scheduled * (1 - RETRY_JITTER)))
      expect(gap).toBeLessThanOrEqual(Math.round(scheduled * (1 + RETRY_JITTER)))
      if (n > 0) expect(gap).toBeGreaterThan(gaps[n - 1] as number)
    }
    expect(gaps[4]).toBeGreaterThanOrEqual(LAST_RETRY_DELAY_MS * (1 - RETRY_JITTER))

    await expectNoMoreAttempts({ clock, db: t.db, receiver }, endpoint.id, path, MAX_SCHEDULED_ATTEMPTS)
    expect((await endpointRow(endpoint.id)).consecutive_failures).toBe(1)
    expect((await getEndpoint(api, endpoint.id)).status).toBe('enabled')
  })

  it('honours Retry-After on 429 and 503 when it asks for longer than the schedule, capped at one hour', async () => {
    const { api } = await freshAccount(t)
    const retryAfter = (status: number, seconds?: number): ReceiverResponse[] => [
      { status, headers: seconds === undefined ? {} : { 'retry-after': String(seconds) } },
      { status: 200 },
    ]
    const plain = await createEndpoint(api, ['operator.created'], retryAfter(429))
    const shorter = await createEndpoint(api, ['operator.created'], retryAfter(429, 1))
    const tenMinutes = await createEndpoint(api, ['operator.created'], retryAfter(503, 600))
    const capped = await createEndpoint(api, ['operator.created'], retryAfter(503, 7200))
    const targets = [plain, shorter, tenMinutes, capped]
    await createOperator(api)
    const ids = targets.map((e) => e.endpoint.id)
    const deliveryIds = await Promise.all(
      targets.map(async ({ path }) => {
        const [first] = await receiver.waitForRequests(path, 1)
        const id = header(first as ReceivedRequest, 'x-service-id') ?? ''
        await settledDelivery(api, id, (d) => d.attempts.length === 1)
        return id
      }),
    )
    // Every first attempt recorded and the app parked, then read: the delivery and its attempts are
    // two reads, which a record committing between them would set apart.
    await nextAttemptAt(clock, t.db, ids)
    const firstAttempts = await Promise.all(
      deliveryIds.map(async (id) => {
        const scheduled = await getDelivery(api, id)
        expect(scheduled.attempts).toHaveLength(1)
        const at = Date.parse(scheduled.attempts[0]?.attempted_at ?? '')
        return { id, at, wait: Date.parse(scheduled.next_attempt_at ?? '') - at }
      }),
    )
    const [plainWait, shorterWait, tenMinutesWait, cappedWait] = firstAttempts.map((a) => a.wait)
    const [lowest, highest] = [1 - RETRY_JITTER, 1 + RETRY_JITTER].map((f) =>
      Math.round((RETRY_DELAYS_MS[0] as number) * f),
    )
    // No Retry-After, or one shorter than the schedule's first minute: the schedule.
    for (const wait of [plainWait, shorterWait]) {
      expect(wait).toBeGreaterThanOrEqual(lowest as number)
      expect(wait).toBeLessThanOrEqual(highest as number)
    }
    expect(tenMinutesWait).toBe(600_000)
    // Two hours asked, one granted.
    expect(cappedWait).toBe(RETRY_AFTER_CAP_MS)

    // Stepped from one due retry to the next: none is sent before its time.
    while ((await stepToNextAttempt(clock, t.db, ids)) !== undefined) {}
    for (const [i, { path }] of targets.entries()) {
      const { id, at, wait } = firstAttempts[i] as (typeof firstAttempts)[number]
      const [first, second, ...more] = receiver.requestsTo(path)
      expect(first?.receivedAt).toBe(at)
      expect(second?.receivedAt).toBeGreaterThanOrEqual(at + wait)
      expect(more).toEqual([])
      const delivery = await getDelivery(api, id)
      expect(delivery.status).toBe('succeeded')
      expect(delivery.attempts).toHaveLength(2)
    }
  })

  it('counts a 3xx as a failure and never follows the redirect', async () => {
    const { api } = await freshAccount(t)
    const target = receiver.freshPath('moved')
    const { path, endpoint } = await createEndpoint(
      api,
      ['operator.created'],
      [
        { status: 302, headers: { location: receiver.url(target) } },
        { status: 307, headers: { location: receiver.url(target) } },
        { status: 200 },
      ],
    )
    await createOperator(api)
    const requests = await receiver.waitForRequests(path, 1)
    requests.push(await nextRetry([endpoint.id], path), await nextRetry([endpoint.id], path))
    const delivery = await settledDelivery(api, header(requests[0] as ReceivedRequest, 'x-service-id') ?? '')
    expect(delivery.status).toBe('succeeded')
    expect(delivery.attempts.map((a) => a.status_code)).toEqual([302, 307, 200])
    expect(delivery.attempts[0]?.error).toEqual(expect.any(String))
    expect(delivery.attempts[1]?.error).toEqual(expect.any(String))
    expect(receiver.requestsTo(target)).toEqual([])
  })

  it('auto-disables after the threshold of exhausted deliveries; re-enabling resumes with new events only', async () => {
    const { api } = await freshAccount(t)
    // The endpoint's answer depends on the operator an event is about (its ident prefix).
    const byIdent = (request: ReceivedRequest): ReceiverResponse => {
      const ident = String(envelopeOf(request).data.object.ident ?? '')
      if (ident.startsWith('exhaust-')) return { status: 500 }
      if (ident.startsWith('gone-')) return { status: 410 }
      if (ident.startsWith('slow-')) return { status: 503, headers: { 'retry-after': '3600' } }
      return { status: 200 }
    }
    const target = await createEndpoint(api, ['operator.created'], byIdent)
    const witness = await createEndpoint(api, ['*'])

    // A delivery that is still pending (waiting out a long Retry-After) when the endpoint is disabled.
    const slow = await createOperator(api, uniq('slow'))
    const slowRequest = await requestAbout(target.path, slow.id)
    const slowId = header(slowRequest, 'x-service-id') ?? ''

    const exhausted = await createOperator(api, uniq('exhaust'))
    const gone = await createOperator(api, uniq('gone'))
    // Through the schedule (its hour and a half holds the slow one's retry an hour on), until the
    // disable stops what is left.
    while ((await stepToNextAttempt(clock, t.db, [target.endpoint.id])) !== undefined) {}
    const disabled = await receiver.waitFor(
      async () => {
        const endpoint = await getEndpoint(api, target.endpoint.id)
        return endpoint.status === 'disabled' ? endpoint : undefined
      },
      15_000,
      'the endpoint to be auto-disabled',
    )
    expect(disabled.disabled_reason).toEqual(expect.any(String))
    expect(disabled.disabled_reason).not.toBe('manual')

    const exhaustedRequests = receiver
      .requestsTo(target.path)
      .filter((r) => envelopeOf(r).data.object.id === exhausted.id)
    expect(exhaustedRequests).toHaveLength(6)
    const goneRequests = receiver
      .requestsTo(target.path)
      .filter((r) => envelopeOf(r).data.object.id === gone.id)
    expect(goneRequests).toHaveLength(1)
    const slowDelivery = await getDelivery(api, slowId)
    expect(slowDelivery.status).toBe('failed')
    expect(slowDelivery.next_attempt_at).toBeNull()
    expect(slowDelivery.attempts.length).toBeGreaterThanOrEqual(1)
    expect(slowDelivery.attempts.length).toBeLessThan(6)
    const slowAttempts = slowDelivery.attempts.length

    // While disabled: no new deliveries, no test sends, no resends.
    const during = await createOperator(api, uniq('during'))
    const duringEvent = envelopeOf(await requestAbout(witness.path, during.id)).id
    expect((await deliveryRowsOfEvent(duringEvent)).map((d) => d.endpoint_id)).toEqual([witness.endpoint.id])
    const test = await api.post(`/v1/webhook-endpoints/${target.endpoint.id}/send-test`)
    expect(test.status).toBe(409)
    expect(errorOf(test).code).toBe('endpoint_disabled')
    const resend = await api.post(`/v1/webhook-deliveries/${slowId}/resend`)
    expect(resend.status).toBe(409)
    expect(errorOf(resend).code).toBe('endpoint_disabled')

    const enabled = await api.patch<Endpoint>(`/v1/webhook-endpoints/${target.endpoint.id}`, {
      status: 'enabled',
    })
    expect(enabled.status).toBe(200)
    expect(enabled.body).toMatchObject({ status: 'enabled', disabled_reason: null })
    expect((await endpointRow(target.endpoint.id)).consecutive_failures).toBe(0)

    const after = await createOperator(api, uniq('after'))
    const afterRequest = await requestAbout(target.path, after.id)
    // Recorded before the next attempt is made: a success recorded after a later failure (group
    // commit can hold it a moment) would reset the count that failure made.
    await settledDelivery(api, header(afterRequest, 'x-service-id') ?? '')
    // The failure count starts again from zero: one more exhausted delivery stays under the threshold.
    const goneAgain = await createOperator(api, uniq('gone'))
    const goneAgainRequest = await requestAbout(target.path, goneAgain.id)
    await settledDelivery(api, header(goneAgainRequest, 'x-service-id') ?? '')
    expect((await getEndpoint(api, target.endpoint.id)).status).toBe('enabled')
    expect((await endpointRow(target.endpoint.id)).consecutive_failures).toBe(1)

    const seenByTarget = receiver.requestsTo(target.path).map((r) => envelopeOf(r).data.object.id)
    expect(seenByTarget).not.toContain(during.id)
    expect(seenByTarget.filter((id) => id === slow.id)).toHaveLength(slowAttempts)
    expect((await getDelivery(api, slowId)).status).toBe('failed')
  })

  it('needs the exhausted deliveries to be consecutive: a 2xx in between resets the count', async () => {
    const { api } = await freshAccount(t)
    const { endpoint, path } = await createEndpoint(api, ['operator.created'], (request) =>
      String(envelopeOf(request).data.object.ident).startsWith('gone-') ? { status: 410 } : { status: 200 },
    )
    const step = async (prefix: string) => {
      const operator = await createOperator(api, uniq(prefix))
      const request = await requestAbout(path, operator.id)
      return settledDelivery(api, header(request, 'x-service-id') ?? '')
    }
    expect((await step('gone')).status).toBe('failed')
    expect((await endpointRow(endpoint.id)).consecutive_failures).toBe(1)
    expect((await step('ok')).status).toBe('succeeded')
    expect((await endpointRow(endpoint.id)).consecutive_failures).toBe(0)
    expect((await step('gone')).status).toBe('failed')
    expect((await getEndpoint(api, endpoint.id)).status).toBe('enabled')
    expect((await step('gone')).status).toBe('failed')
    const disabled = await getEndpoint(api, endpoint.id)
    expect(disabled.status).toBe('disabled')
    expect(disabled.disabled_reason).toEqual(expect.any(String))
  })

  it('signs with both secrets during a rotation grace, new first, and with one after grace_hours 0', async () => {
    const { api } = await freshAccount(t)
    const { endpoint, secret: s0, path } = await createEndpoint(api, ['operator.created'])
    const rotate = async (body: Record<string, unknown>) => {
      const res = await api.post<EndpointWithSecret>(
        `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`,
        body,
      )
      expect(res.status).toBe(200)
      return res.body.secret
    }
    const delivered = async () => requestAbout(path, (await createOperator(api)).id)

    const s1 = await rotate({ grace_hours: 1 })
    let request = await delivered()
    let { t: ts, v1 } = signatureParts(request)
    expect(v1).toEqual([hmac(s1, ts, request.body), hmac(s0, ts, request.body)])
    const twoValues = header(request, 'x-service-signature') ?? ''
    expect(twoValues).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/)
    expect(() => verify(request.body, twoValues, s1)).not.toThrow()
    expect(() => verify(request.body, twoValues, s0)).not.toThrow()
    expectRejected(request, `whsec_${randomBytes(32).toString('base64url')}`)

    // The default grace (24 h) keeps the secret just replaced; the one before it is gone.
    const s2 = await rotate({})
    request = await delivered()
    ;({ t: ts, v1 } = signatureParts(request))
    expect(v1).toEqual([hmac(s2, ts, request.body), hmac(s1, ts, request.body)])
    expectRejected(request, s0)

    const s3 = await rotate({ grace_hours: 0 })
    request = await delivered()
    ;({ t: ts, v1 } = signatureParts(request))
    expect(header(request, 'x-service-signature')).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(v1).toEqual([hmac(s3, ts, request.body)])
    expect(() => verify(request.body, header(request, 'x-service-signature') ?? '', s3)).not.toThrow()
    expectRejected(request, s2)
    expectRejected(request, s1)
  })

  it('send-test reaches only that endpoint, signed like every delivery', async () => {
    const { api } = await freshAccount(t)
    const tested = await createEndpoint(api, ['*'])
    const other = await createEndpoint(api, ['*'])
    const res = await api.post<Delivery>(`/v1/webhook-endpoints/${tested.endpoint.id}/send-test`)
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ endpoint_id: tested.endpoint.id, event_type: 'webhook_endpoint.test' })

    const [request] = await receiver.waitForRequests(tested.path, 1)
    if (!request) throw new Error('unreachable')
    expect(header(request, 'x-service-id')).toBe(res.body.id)
    expect(header(request, 'x-service-event')).toBe('webhook_endpoint.test')
    expect(() =>
      verify(request.body, header(request, 'x-service-signature') ?? '', tested.secret),
    ).not.toThrow()
    const envelope = envelopeOf(request)
    expect(envelope).toMatchObject({
      object: 'event',
      id: res.body.event_id,
      type: 'webhook_endpoint.test',
      livemode: false,
    })
    expect(envelope.data.object).toEqual(await getEndpoint(api, tested.endpoint.id))
    expect(request.body).not.toContain('whsec_')

    // A later event reaches the other endpoint, so anything dispatched before it has been too.
    const operator = await createOperator(api)
    await requestAbout(other.path, operator.id)
    expect(receiver.requestsTo(other.path).map((r) => header(r, 'x-service-event'))).toEqual([
      'operator.created',
    ])
    expect((await deliveryRowsOfEvent(res.body.event_id)).map((d) => d.endpoint_id)).toEqual([
      tested.endpoint.id,
    ])
    expect((await settledDelivery(api, res.body.id)).status).toBe('succeeded')
  })

  it('resend appends one attempt to the same delivery; failed resends never count towards auto-disable', async () => {
    const { api } = await freshAccount(t)
    let status = 410
    const { endpoint, path } = await createEndpoint(api, ['operator.created'], () => ({
      status,
      body: `s${status}`,
    }))
    await createOperator(api)
    const [first] = await receiver.waitForRequests(path, 1)
    const id = header(first as ReceivedRequest, 'x-service-id') ?? ''
    expect((await settledDelivery(api, id)).status).toBe('failed')
    expect((await endpointRow(endpoint.id)).consecutive_failures).toBe(1)

    status = 500
    for (let i = 1; i <= 2; i++) {
      const res = await api.post<Delivery>(`/v1/webhook-deliveries/${id}/resend`)
      expect(res.status).toBe(200)
      expect(res.body.id).toBe(id)
      expect(res.body.status).toBe('failed')
      expect(res.body.next_attempt_at).toBeNull()
      expect(res.body.attempts).toHaveLength(1 + i)
      expect(res.body.attempts.at(-1)).toMatchObject({
        kind: 'resend',
        status_code: 500,
        response_excerpt: 's500',
      })
    }
    // Threshold 2: had the failed resends counted, the endpoint would be disabled by now.
    expect((await endpointRow(endpoint.id)).consecutive_failures).toBe(1)
    expect((await getEndpoint(api, endpoint.id)).status).toBe('enabled')
    // A failed resend is one attempt, not retried on the schedule.
    await expectNoMoreAttempts({ clock, db: t.db, receiver }, endpoint.id, path, 3)
    const requests = receiver.requestsTo(path)
    expect(requests.map((r) => header(r, 'x-service-id'))).toEqual([id, id, id])
    expect(new Set(requests.map((r) => r.body)).size).toBe(1)

    status = 200
    const ok = await api.post<Delivery>(`/v1/webhook-deliveries/${id}/resend`)
    expect(ok.status).toBe(200)
    expect(ok.body.status).toBe('succeeded')
    expect(ok.body.attempts.map((a) => [a.kind, a.status_code])).toEqual([
      ['scheduled', 410],
      ['resend', 500],
      ['resend', 500],
      ['resend', 200],
    ])
    expect((await endpointRow(endpoint.id)).consecutive_failures).toBe(0)

    // Whatever its status: a succeeded delivery can be replayed too.
    const again = await api.post<Delivery>(`/v1/webhook-deliveries/${id}/resend`)
    expect(again.status).toBe(200)
    expect(again.body.attempts).toHaveLength(5)
    expect(again.body.status).toBe('succeeded')
    expect(receiver.requestsTo(path)).toHaveLength(5)
    const last = receiver.requestsTo(path).at(-1) as ReceivedRequest
    expect(header(last, 'x-service-id')).toBe(id)
    const secret = await endpointSecret(endpoint.id)
    expect(() => verify(last.body, header(last, 'x-service-signature') ?? '', secret)).not.toThrow()

    const missing = await api.post('/v1/webhook-deliveries/whd_01JAAAAAAAAAAAAAAAAAAAAAAA/resend')
    expect(missing.status).toBe(404)
  })

  async function endpointSecret(id: string) {
    return (await endpointRow(id)).secret
  }

  it('keeps events within their account and mode', async () => {
    const accountA = uniq('acct')
    const accountB = uniq('acct')
    const contexts = [
      await freshAccount(t, 'test', accountA),
      await freshAccount(t, 'live', accountA),
      await freshAccount(t, 'test', accountB),
      await freshAccount(t, 'live', accountB),
    ]
    const endpoints = []
    for (const { api } of contexts) endpoints.push(await createEndpoint(api, ['*']))
    const operators = []
    for (const { api } of contexts) operators.push(await createOperator(api))

    for (const [i, { key }] of contexts.entries()) {
      const { path, endpoint } = endpoints[i] as (typeof endpoints)[number]
      const operator = operators[i] as (typeof operators)[number]
      const request = await requestAbout(path, operator.id)
      const envelope = envelopeOf(request)
      expect(envelope.livemode).toBe(key.mode === 'live')
      expect(endpoint.livemode).toBe(key.mode === 'live')
      expect((await deliveryRowsOfEvent(envelope.id)).map((d) => d.endpoint_id)).toEqual([endpoint.id])
    }
    for (const [i, { path }] of endpoints.entries()) {
      expect(receiver.requestsTo(path).map((r) => envelopeOf(r).data.object.id)).toEqual([operators[i]?.id])
    }
  })
})
