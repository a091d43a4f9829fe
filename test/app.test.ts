import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from './helpers/app.js'

describe('app', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it('answers /healthz without a key, with a request id and rate-limit headers', async () => {
    const res = await t.client(undefined).get('/healthz')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok' })
    expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/)
    expect(res.headers['x-ratelimit-limit']).toBe('1000000')
    expect(res.headers['x-ratelimit-remaining']).toBe('999999')
  })

  it('serves the OpenAPI 3.1 document without a key', async () => {
    const res = await t
      .client(undefined)
      .get<{ openapi: string; paths: Record<string, unknown> }>('/v1/openapi.json')
    expect(res.status).toBe(200)
    expect(res.body.openapi).toBe('3.1.0')
    expect(Object.keys(res.body.paths)).toContain('/v1/operators/{id}')
  })
})
