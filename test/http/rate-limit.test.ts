import { randomInt } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { retryAfterSeconds } from '../../src/http/rate-limit.js'
import { type ApiClient, type ApiResponse, buildTestApp, errorOf, type TestApp } from '../helpers/app.js'
import { useTestClock } from '../helpers/clock.js'
import { connectTestRedis } from '../helpers/redis.js'

const MAX = 3
const WINDOW_MS = 60_000

function expectLimitHeaders(res: ApiResponse, remaining: number, limit = MAX) {
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit))
  expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining))
}

/** The 429 of the spec: envelope `rate_limited`, `Retry-After` in whole seconds, both limit headers. */
function expectRateLimited(res: ApiResponse, windowMs = WINDOW_MS) {
  expect(res.status).toBe(429)
  const error = errorOf(res)
  expect(error.type).toBe('rate_limited')
  expect(error.message.length).toBeGreaterThan(0)
  expect(error.request_id).toMatch(/^req_/)
  expect(res.headers['x-request-id']).toBe(error.request_id)
  const retryAfter = String(res.headers['retry-after'])
  expect(retryAfter).toMatch(/^\d+$/)
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
  expect(Number(retryAfter)).toBeLessThanOrEqual(Math.ceil(windowMs / 1000))
  expectLimitHeaders(res, 0)
}

/** A client that sends its requests from `ip` (requests without a valid key are limited per IP). */
function fromIp(t: TestApp, secret: string | undefined, ip: string) {
  const client = t.client(secret)
  return {
    get: (url: string, headers: Record<string, string> = {}) =>
      client.request({ method: 'GET', url, headers, remoteAddress: ip }),
  }
}

describe('rate limiting (in-process counters)', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp({ rateLimitMax: MAX, rateLimitWindowMs: WINDOW_MS })
  })
  afterAll(() => t?.close())

  it('counts down on every response and answers the request past the limit with 429', async () => {
    const api = t.client((await t.key()).secret)
    const created = await api.post('/v1/operators', { ident: 'RL-1' })
    expect(created.status).toBe(201)
    expectLimitHeaders(created, 2)
    const listed = await api.get('/v1/operators')
    expect(listed.status).toBe(200)
    expectLimitHeaders(listed, 1)
    const listedAgain = await api.get('/v1/operators')
    expect(listedAgain.status).toBe(200)
    expectLimitHeaders(listedAgain, 0)

    expectRateLimited(await api.get('/v1/operators'))
    // A refused request does no work.
    const refused = await api.post('/v1/operators', { ident: 'RL-2' })
    expectRateLimited(refused)
    const rows = await t.db.selectFrom('operators').select('ident').where('ident', '=', 'RL-2').execute()
    expect(rows).toEqual([])
  })

  it('carries the headers on 4xx answers too, which count against the limit', async () => {
    const api = t.client((await t.key()).secret)
    const notFound = await api.get('/v1/operators/op_00000000000000000000000000')
    expect(notFound.status).toBe(404)
    expectLimitHeaders(notFound, 2)
    const invalid = await api.post('/v1/operators', {})
    expect(invalid.status).toBe(422)
    expectLimitHeaders(invalid, 1)
    const badCursor = await api.get('/v1/operators?cursor=nope')
    expect(badCursor.status).toBe(400)
    expectLimitHeaders(badCursor, 0)
    expectRateLimited(await api.get('/v1/operators'))
  })

  it('carries the headers on 403 answers', async () => {
    const reader = t.client((await t.key({ scopes: ['operators:read'] })).secret)
    const forbidden = await reader.post('/v1/operators', { ident: 'RL-3' })
    expect(forbidden.status).toBe(403)
    expectLimitHeaders(forbidden, 2)
  })

  it('limits each key on its own: an exhausted key does not affect another', async () => {
    const first = t.client((await t.key()).secret)
    const second = t.client((await t.key()).secret)
    for (let i = 0; i < MAX; i++) expect((await first.get('/v1/operators')).status).toBe(200)
    expectRateLimited(await first.get('/v1/operators'))

    const other = await second.get('/v1/operators')
    expect(other.status).toBe(200)
    expectLimitHeaders(other, MAX - 1)
  })

  it('limits requests without a valid key per client IP, with the headers on each 401', async () => {
    const ip = '198.51.100.7'
    const anonymous = fromIp(t, undefined, ip)
    const badKey = fromIp(t, `sk_test_${'Z'.repeat(32)}`, ip)

    const first = await anonymous.get('/v1/operators')
    expect(first.status).toBe(401)
    expectLimitHeaders(first, 2)
    const second = await badKey.get('/v1/operators')
    expect(second.status).toBe(401)
    expectLimitHeaders(second, 1)
    const third = await anonymous.get('/v1/operators', { authorization: 'Basic abc' })
    expect(third.status).toBe(401)
    expectLimitHeaders(third, 0)
    expectRateLimited(await anonymous.get('/v1/operators'))
    expectRateLimited(await badKey.get('/v1/operators'))

    // Another address has its own budget, and a valid key from the exhausted address is unaffected.
    const elsewhere = await fromIp(t, undefined, '198.51.100.8').get('/v1/operators')
    expect(elsewhere.status).toBe(401)
    expectLimitHeaders(elsewhere, 2)
    const withKey = await fromIp(t, (await t.key()).secret, ip).get('/v1/operators')
    expect(withKey.status).toBe(200)
    expectLimitHeaders(withKey, 2)
  })

  it('limits public routes per IP too, with the headers', async () => {
    const client = fromIp(t, undefined, '198.51.100.9')
    const health = await client.get('/healthz')
    expect(health.status).toBe(200)
    expectLimitHeaders(health, 2)
    const openapi = await client.get('/v1/openapi.json')
    expect(openapi.status).toBe(200)
    expectLimitHeaders(openapi, 1)
  })
})

describe('Retry-After', () => {
  it('is what is left of the window in whole seconds, rounded up, and never 0', () => {
    expect([0, 1, 999, 1000, 1001, 2500, 3000].map(retryAfterSeconds)).toEqual([1, 1, 1, 1, 2, 3, 3])
  })
})

describe('rate limiting: the window', () => {
  const clock = useTestClock()
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp({ rateLimitMax: 1, rateLimitWindowMs: WINDOW_MS })
  })
  afterAll(() => t?.close())

  it('lets a client that waited Retry-After through again, and not a millisecond sooner', async () => {
    const api = t.client((await t.key()).secret)
    const first = await api.get('/v1/operators')
    expect(first.status).toBe(200)
    expectLimitHeaders(first, 0, 1)
    const refused = await api.get('/v1/operators')
    expect(refused.status).toBe(429)
    expect(refused.headers['x-ratelimit-limit']).toBe('1')
    expect(refused.headers['x-ratelimit-remaining']).toBe('0')
    // Whole seconds, rounded up: what is left of the window, all of it while the clock stands still.
    const retryAfter = String(refused.headers['retry-after'])
    expect(retryAfter).toBe(String(WINDOW_MS / 1000))
    clock.advance(Number(retryAfter) * 1000 - 1)
    const late = await api.get('/v1/operators')
    expect(late.status).toBe(429)
    expect(late.headers['retry-after']).toBe('1')
    clock.advance(1)
    expect((await api.get('/v1/operators')).status).toBe(200)
  })
})

// Probed once at load: skipped when Redis is absent, a failure when REQUIRE_REDIS=1.
const redisProbe = await connectTestRedis()
await redisProbe?.quit()

describe.skipIf(!redisProbe)('rate limiting shared through Redis', () => {
  let first: TestApp
  let second: TestApp

  beforeAll(async () => {
    const [redisA, redisB] = [await connectTestRedis(), await connectTestRedis()]
    if (!redisA || !redisB) throw new Error('Redis answered the probe but not the suite')
    first = await buildTestApp({ rateLimitMax: MAX, rateLimitWindowMs: WINDOW_MS }, { redis: redisA })
    // A second API process: same database, its own Redis connection.
    second = await buildTestApp(
      { rateLimitMax: MAX, rateLimitWindowMs: WINDOW_MS },
      { redis: redisB, database: first.database },
    )
  })
  afterAll(async () => {
    await second?.app.close()
    await first?.close()
  })

  it('shares one limit per key between two apps', async () => {
    // Key ids are new on every run, so the Redis counters of earlier runs never collide.
    const secret = (await first.key()).secret
    const a: ApiClient = first.client(secret)
    const b: ApiClient = second.client(secret)

    const r1 = await a.get('/v1/operators')
    expect(r1.status).toBe(200)
    expectLimitHeaders(r1, 2)
    const r2 = await b.get('/v1/operators')
    expect(r2.status).toBe(200)
    expectLimitHeaders(r2, 1)
    const r3 = await a.post('/v1/operators', { ident: 'RD-1' })
    expect(r3.status).toBe(201)
    expectLimitHeaders(r3, 0)

    expectRateLimited(await b.get('/v1/operators'))
    expectRateLimited(await a.get('/v1/operators'))

    // Another key, through either app, is unaffected.
    const other = await second.client((await first.key()).secret).get('/v1/operators')
    expect(other.status).toBe(200)
    expectLimitHeaders(other, 2)
  })

  it('shares the per-IP limit of requests without a key between two apps', async () => {
    // A random address per run, so reruns (and the other database's run) start from zero.
    const ip = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`
    const a = fromIp(first, undefined, ip)
    const b = fromIp(second, undefined, ip)
    expectLimitHeaders(await a.get('/v1/operators'), 2)
    expectLimitHeaders(await b.get('/v1/operators'), 1)
    expectLimitHeaders(await a.get('/v1/operators'), 0)
    expectRateLimited(await b.get('/v1/operators'))
  })
})
