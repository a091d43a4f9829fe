import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AttendanceApiError,
  AttendanceClient,
  AttendanceConnectionError,
  AttendanceRateLimitError,
  AttendanceValidationError,
  type Fetch,
} from '../../packages/client/src/index.js'
import { requestFingerprint } from '../../src/http/idempotency.js'
import { caught, networkError, recordingFetch, type ServedApp, serveApp, uniq } from './setup.js'

/** An error envelope answer as the API gives one, for a fetch that stands in for a failing upstream. */
function errorResponse(status: number, type: string, code?: string, headers: Record<string, string> = {}) {
  return new Response(
    JSON.stringify({ error: { type, code, message: `injected ${status}`, request_id: 'req_injected' } }),
    { status, headers: { 'content-type': 'application/json', 'x-request-id': 'req_injected', ...headers } },
  )
}

describe('retries, backoff and idempotency keys (real API over HTTP)', () => {
  let served: ServedApp

  beforeAll(async () => {
    served = await serveApp()
  })
  afterAll(async () => {
    await served?.close()
  })

  async function operatorsWithIdent(client: AttendanceClient, ident: string) {
    return (await client.operators.list({ ident })).data
  }

  /**
   * A client whose fetch never answers until aborted, as a hung server would (one retry, 100 ms an
   * attempt), how many attempts it has made, and why each was aborted.
   */
  function hungClient(): { client: AttendanceClient; attempts: () => number; aborts: unknown[] } {
    let attempts = 0
    const aborts: unknown[] = []
    const hung: Fetch = (_input, init) =>
      new Promise<Response>((_resolve, reject) => {
        attempts++
        init?.signal?.addEventListener('abort', () => {
          aborts.push(init.signal?.reason)
          reject(init.signal?.reason)
        })
      })
    const client = new AttendanceClient({
      apiKey: 'sk_test_unused',
      baseUrl: served.baseUrl,
      maxRetries: 1,
      timeoutMs: 100,
      fetch: hung,
    })
    return { client, attempts: () => attempts, aborts }
  }

  it('a create whose answer was lost after the server committed is retried with the same key: one object', async () => {
    const { fetch, exchanges } = recordingFetch(async (index, real) => {
      const response = await real()
      // The first attempt reaches the server and commits; the client then loses the connection.
      if (index === 0) {
        expect(response.status).toBe(201)
        throw networkError()
      }
      return response
    })
    const { client } = await served.client(undefined, { fetch })
    const ident = uniq('W')

    const operator = await client.operators.create({ ident, name: 'Ada' })

    expect(exchanges).toHaveLength(2)
    const [first, second] = exchanges
    const key = first?.headers.get('idempotency-key')
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(second?.headers.get('idempotency-key')).toBe(key)
    expect(second?.body).toBe(first?.body)
    // The second answer is the stored one, replayed.
    expect(second?.status).toBe(201)
    expect(second?.responseHeaders?.get('idempotent-replayed')).toBe('true')
    expect(operator).toMatchObject({ ident, name: 'Ada' })
    const stored = await operatorsWithIdent(client, ident)
    expect(stored.map((o) => o.id)).toEqual([operator.id])
    expect((await client.operators.list()).data).toHaveLength(1)
  })

  it("uses the caller's idempotencyKey on every attempt, and each call gets a fresh key otherwise", async () => {
    // Set to lose the answer of the next request after the server has handled it.
    let loseNextAnswer = false
    const { fetch, exchanges } = recordingFetch(async (_index, real) => {
      const response = await real()
      if (loseNextAnswer) {
        loseNextAnswer = false
        throw networkError()
      }
      return response
    })
    const { client } = await served.client(undefined, { fetch })
    const operator = await client.operators.create({ ident: uniq('W') })
    const device = await client.devices.create({ code: uniq('DEV') })
    exchanges.length = 0
    loseNextAnswer = true

    const body = {
      operator_id: operator.id,
      device_id: device.code,
      check_in: { time: '2026-02-02T08:00:00Z' },
      check_out: { time: '2026-02-02T12:00:00Z' },
    }
    const session = await client.sessions.create(body, { idempotencyKey: 'payroll-import-42' })
    expect(exchanges.map((e) => e.headers.get('idempotency-key'))).toEqual([
      'payroll-import-42',
      'payroll-import-42',
    ])
    // The same key again (a re-run of the import) replays rather than creating a second session.
    const again = await client.sessions.create(body, { idempotencyKey: 'payroll-import-42' })
    expect(again.id).toBe(session.id)
    expect((await client.sessions.list()).data.map((s) => s.id)).toEqual([session.id])

    // Two separate calls without a key: two keys, two objects.
    exchanges.length = 0
    await client.locations.create({ name: 'A' })
    await client.locations.create({ name: 'A' })
    const keys = exchanges.map((e) => e.headers.get('idempotency-key'))
    expect(keys).toHaveLength(2)
    expect(new Set(keys).size).toBe(2)
    expect((await client.locations.list()).data).toHaveLength(2)
    // GET, PATCH and DELETE carry no key.
    exchanges.length = 0
    await client.operators.retrieve(operator.id)
    await client.operators.update(operator.id, { name: 'x' })
    expect(exchanges.map((e) => e.headers.get('idempotency-key'))).toEqual([null, null])
  })

  it('retries 409 idempotency_key_in_use until the first request with the key has finished', async () => {
    const key = await served.key()
    const idempotencyKey = uniq('key')
    const body = { ident: uniq('W') }
    // A first request with this key is still running (its claim is fresh)...
    const now = Date.now()
    await served.t.db
      .insertInto('idempotency_keys')
      .values({
        account_id: key.account_id,
        livemode: 0,
        key: `${key.id}:${idempotencyKey}`,
        fingerprint: requestFingerprint('POST', '/v1/operators', body),
        status: 'in_flight',
        response_status: null,
        response_body: null,
        created_at: now,
        locked_at: now,
      })
      .execute()
    const { fetch, exchanges } = recordingFetch(async (_index, real) => {
      const response = await real()
      // ...and releases it (as a failed first request does) once the client has been told "in use".
      if (response.status === 409) {
        await served.t.db
          .deleteFrom('idempotency_keys')
          .where('key', '=', `${key.id}:${idempotencyKey}`)
          .execute()
      }
      return response
    })
    const { client } = await served.client(key, { fetch })

    const operator = await client.operators.create(body, { idempotencyKey })

    expect(exchanges.map((e) => e.status)).toEqual([409, 201])
    expect(operator.ident).toBe(body.ident)
    expect(await operatorsWithIdent(client, body.ident)).toHaveLength(1)
  })

  it('retries 5xx and network errors with backoff, then succeeds (custom fetch failing twice)', async () => {
    const { fetch, exchanges } = recordingFetch(async (index, real, exchange) => {
      if (index === 0) throw networkError()
      if (index === 1) {
        exchange.status = 503
        return errorResponse(503, 'api_error')
      }
      return real()
    })
    const { client } = await served.client(undefined, { fetch })

    const operator = await client.operators.create({ ident: uniq('W') })

    expect(exchanges.map((e) => e.status)).toEqual([undefined, 503, 201])
    const keys = exchanges.map((e) => e.headers.get('idempotency-key'))
    expect(new Set(keys).size).toBe(1)
    // Backoff between attempts: 250–500 ms after the first failure, 500–1000 ms after the second.
    const [a, b, c] = exchanges.map((e) => e.sentAt)
    expect((b ?? 0) - (a ?? 0)).toBeGreaterThanOrEqual(240)
    expect((c ?? 0) - (b ?? 0)).toBeGreaterThanOrEqual(490)
    expect(await client.operators.retrieve(operator.id)).toEqual(operator)
  })

  /** A JSON call and a streamed one: both go through the client's one retry loop, so they retry alike. */
  const TIMESHEET = { from: '2026-11-01', to: '2026-11-30' }
  const timesheetCalls = [
    {
      name: 'request (timesheets.list)',
      call: async (client: AttendanceClient) => (await client.timesheets.list(TIMESHEET)).object,
    },
    {
      name: 'stream (timesheets.csv)',
      call: async (client: AttendanceClient) =>
        (await new Response((await client.timesheets.csv(TIMESHEET)).body).text()).split('\r\n')[0],
    },
  ]

  it.each(timesheetCalls)(
    '$name: a network error, then a 503 asking Retry-After: 1, then the answer',
    async ({ call }) => {
      const { fetch, exchanges } = recordingFetch(async (index, real, exchange) => {
        if (index === 0) throw networkError()
        if (index === 1) {
          exchange.status = 503
          return errorResponse(503, 'api_error', undefined, { 'retry-after': '1' })
        }
        return real()
      })
      const { client } = await served.client(undefined, { fetch })

      expect(await call(client)).toMatch(/^(list|operator_ident,.*)$/)
      expect(exchanges.map((e) => e.status)).toEqual([undefined, 503, 200])
      // The backoff after no answer (250–500 ms), then the Retry-After the 503 asked for.
      const [a, b, c] = exchanges.map((e) => e.sentAt)
      expect((b ?? 0) - (a ?? 0)).toBeGreaterThanOrEqual(240)
      expect((c ?? 0) - (b ?? 0)).toBeGreaterThanOrEqual(1000 - 20)
    },
  )

  it.each(timesheetCalls)(
    '$name: the last 5xx after maxRetries is thrown; a 4xx is not retried',
    async ({ call }) => {
      const failing = recordingFetch(async () => errorResponse(502, 'api_error'))
      const { client } = await served.client(undefined, { fetch: failing.fetch, maxRetries: 2 })
      expect(await caught(() => call(client))).toMatchObject({ status: 502, requestId: 'req_injected' })
      expect(failing.exchanges).toHaveLength(3)

      const refusing = recordingFetch()
      const unscoped = await served.key({ scopes: ['sessions:read'] })
      const refusal = await caught(async () =>
        call((await served.client(unscoped, { fetch: refusing.fetch })).client),
      )
      expect(refusal).toBeInstanceOf(AttendanceApiError)
      expect(refusal).toMatchObject({ status: 403, code: 'missing_scope' })
      expect(refusing.exchanges).toHaveLength(1)
    },
  )

  it.each(timesheetCalls)(
    '$name: an attempt that outlives timeoutMs is retried, then a timed-out connection error',
    async ({ call }) => {
      const { client, attempts } = hungClient()
      const error = await caught(() => call(client))
      expect(error).toBeInstanceOf(AttendanceConnectionError)
      expect(error).toMatchObject({ timedOut: true, attempts: 2 })
      expect(attempts()).toBe(2)
    },
  )

  it('a retrieve retried past two 500s gets the object', async () => {
    const { client: plain, key } = await served.client()
    const operator = await plain.operators.create({ ident: uniq('W') })
    const { fetch, exchanges } = recordingFetch(async (index, real, exchange) => {
      if (index >= 2) return real()
      exchange.status = 500
      return errorResponse(500, 'api_error')
    })
    const { client } = await served.client(key, { fetch })
    expect(await client.operators.retrieve(operator.id)).toEqual(operator)
    expect(exchanges.map((e) => e.status)).toEqual([500, 500, 200])
  })

  it('gives up after maxRetries: the last 5xx is thrown as a typed error', async () => {
    const { fetch, exchanges } = recordingFetch(async () => errorResponse(502, 'api_error'))
    const { client } = await served.client(undefined, { fetch, maxRetries: 2 })
    const error = await caught(() => client.operators.list())
    expect(exchanges).toHaveLength(3)
    expect(error).toBeInstanceOf(AttendanceApiError)
    expect(error).toMatchObject({ status: 502, type: 'api_error', requestId: 'req_injected' })
  })

  it('a network failure after every retry is an AttendanceConnectionError (nothing listening)', async () => {
    // A loopback port that was free a moment ago: connections are refused.
    const port = await new Promise<number>((resolve) => {
      const server = createServer()
      server.listen(0, '127.0.0.1', () => {
        const address = server.address()
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
      })
    })
    const { fetch, exchanges } = recordingFetch()
    const client = new AttendanceClient({
      apiKey: 'sk_test_unused',
      baseUrl: `http://127.0.0.1:${port}`,
      maxRetries: 2,
      fetch,
    })
    const error = await caught(() => client.operators.create({ ident: 'W-1' }))
    expect(error).toBeInstanceOf(AttendanceConnectionError)
    expect(error).not.toBeInstanceOf(AttendanceApiError)
    expect((error as AttendanceConnectionError).attempts).toBe(3)
    expect((error as AttendanceConnectionError).timedOut).toBe(false)
    expect((error as Error).cause).toBeInstanceOf(Error)
    expect(exchanges).toHaveLength(3)
    expect(new Set(exchanges.map((e) => e.headers.get('idempotency-key'))).size).toBe(1)
  })

  it('an attempt that outlives timeoutMs is aborted and retried; all timing out is a timed-out connection error', async () => {
    const { client, attempts, aborts } = hungClient()
    const error = await caught(() => client.operators.list())
    expect(error).toBeInstanceOf(AttendanceConnectionError)
    expect((error as AttendanceConnectionError).timedOut).toBe(true)
    expect((error as AttendanceConnectionError).attempts).toBe(2)
    expect((error as Error).message).toContain('timed out after 100 ms')
    expect(attempts()).toBe(2)
    // Each attempt was ended by its own deadline, the client's timer of timeoutMs, and by nothing else.
    expect(aborts).toEqual([new Error('no answer within 100 ms'), new Error('no answer within 100 ms')])
  })

  it("the caller's AbortSignal stops the call at once, without retries or wrapping", async () => {
    const controller = new AbortController()
    const { fetch, exchanges } = recordingFetch(async (_index, real) => {
      controller.abort(new Error('caller gave up'))
      return real()
    })
    const { client } = await served.client(undefined, { fetch })
    const error = await caught(() => client.operators.list({}, { signal: controller.signal }))
    expect(error).toEqual(new Error('caller gave up'))
    expect(exchanges).toHaveLength(1)
  })

  it('never retries other 4xx answers', async () => {
    const { fetch, exchanges } = recordingFetch()
    const { client } = await served.client(undefined, { fetch })
    const ident = uniq('W')
    await client.operators.create({ ident })
    exchanges.length = 0

    expect(await caught(() => client.operators.create({ ident }))).toMatchObject({
      status: 409,
      code: 'duplicate_ident',
    })
    expect(
      await caught(() => client.operators.create({ name: 'no ident' } as unknown as { ident: string })),
    ).toBeInstanceOf(AttendanceValidationError)
    expect(await caught(() => client.operators.retrieve('op_missing'))).toMatchObject({ status: 404 })
    expect(await caught(() => client.operators.list({ cursor: 'garbage' }))).toMatchObject({ status: 400 })
    expect(exchanges.map((e) => e.status)).toEqual([409, 422, 404, 400])
  })
})

describe('429 rate limiting (real limiter: 2 requests per 2 s window)', () => {
  let served: ServedApp

  beforeAll(async () => {
    served = await serveApp({ rateLimitMax: 2, rateLimitWindowMs: 2000 })
  })
  afterAll(async () => {
    await served?.close()
  })

  it('waits the Retry-After the 429 asked for, then retries and succeeds', async () => {
    const { fetch, exchanges } = recordingFetch()
    const { client } = await served.client(undefined, { fetch })

    const results = []
    for (let i = 0; i < 3; i++) results.push(await client.operators.list())
    expect(results.every((r) => r.object === 'list')).toBe(true)

    const limited = exchanges.findIndex((e) => e.status === 429)
    expect(limited).toBe(2)
    const refused = exchanges[limited]
    const retryAfter = Number(refused?.responseHeaders?.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    const next = exchanges[limited + 1]
    expect(next?.status).toBe(200)
    // Sent once the limiter's window had ended, as Retry-After told: the first request of a new one.
    expect(next?.responseHeaders?.get('x-ratelimit-remaining')).toBe('1')
  })

  it('with no retries left, a 429 is an AttendanceRateLimitError carrying Retry-After', async () => {
    const { client } = await served.client(undefined, { maxRetries: 0 })
    await client.operators.list()
    await client.operators.list()
    const error = await caught(() => client.operators.list())
    expect(error).toBeInstanceOf(AttendanceRateLimitError)
    expect(error).toMatchObject({ status: 429, type: 'rate_limited', code: 'rate_limited' })
    expect((error as AttendanceRateLimitError).retryAfterSeconds).toBeGreaterThanOrEqual(1)
  })
})
