import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadSecret } from '../../src/db/settings.js'
import { Paginator } from '../../src/http/pagination.js'
import { type ApiClient, type ApiResponse, buildTestApp, type TestApp } from '../helpers/app.js'
import { expectError as expectErrorEnvelope, type List, type Operator } from '../helpers/assertions.js'
import { createTestDatabase } from '../helpers/database.js'

const ERROR_TYPES = [
  'bad_request',
  'authentication_error',
  'insufficient_scope',
  'not_found',
  'conflict',
  'validation_error',
  'rate_limited',
  'api_error',
]

/**
 * Asserts the error envelope of the spec: besides what the shared `expectError` checks (status,
 * `error.type`, a non-empty `error.message`, `error.request_id` equal to `X-Request-Id`), a JSON
 * body of `error` alone, a known type and no field outside the envelope.
 */
function expectError(
  res: ApiResponse,
  status: number,
  type: string,
  fields: { code?: string; param?: string } = {},
) {
  const error = expectErrorEnvelope(res, status, type, fields.code, fields.param)
  expect(res.headers['content-type']).toMatch(/^application\/json/)
  expect(Object.keys(res.body as object)).toEqual(['error'])
  expect(ERROR_TYPES).toContain(error.type)
  for (const field of Object.keys(error)) {
    expect(['type', 'message', 'request_id', 'code', 'param']).toContain(field)
  }
  return error
}

const json = { 'content-type': 'application/json' }

describe('error envelope', () => {
  let t: TestApp
  let api: ApiClient
  let operatorId: string

  beforeAll(async () => {
    t = await buildTestApp()
    api = t.client((await t.key()).secret)
    const created = await api.post<{ id: string }>('/v1/operators', { ident: 'E-1' })
    expect(created.status).toBe(201)
    operatorId = created.body.id
  })
  afterAll(() => t?.close())

  describe('routing', () => {
    it('answers an unknown route with 404 not_found, without a key', async () => {
      const res = await t.client(undefined).get('/v1/no-such-thing')
      expectError(res, 404, 'not_found')
    })

    it('answers an unknown route with 404 not_found, with a valid key', async () => {
      expectError(await api.get('/v1/no-such-thing'), 404, 'not_found')
      expectError(await api.post('/nowhere', { a: 1 }), 404, 'not_found')
    })

    it('answers an unknown resource id with 404 not_found', async () => {
      expectError(await api.get('/v1/operators/op_00000000000000000000000000'), 404, 'not_found')
    })

    it('answers a wrong method with 405 and an Allow header listing the methods of the path', async () => {
      const collection = await api.request({ method: 'PUT', url: '/v1/operators', payload: {} })
      expectError(collection, 405, 'bad_request', { code: 'method_not_allowed' })
      const allowed = String(collection.headers.allow).split(/,\s*/)
      expect(allowed).toEqual(expect.arrayContaining(['GET', 'POST']))
      expect(allowed).not.toContain('PUT')

      const item = await t.client(undefined).request({ method: 'POST', url: `/v1/operators/${operatorId}` })
      expectError(item, 405, 'bad_request', { code: 'method_not_allowed' })
      const itemAllowed = String(item.headers.allow).split(/,\s*/)
      expect(itemAllowed).toEqual(expect.arrayContaining(['GET', 'PATCH', 'DELETE']))
      expect(itemAllowed).not.toContain('POST')
    })

    it('answers a malformed URL with 400 and the envelope, not 500', async () => {
      const error = expectError(await api.get('/v1/operators/%E0%A4%A'), 400, 'bad_request')
      expect(error.code).toBe('malformed_url')
    })

    it('gives every error its own request id', async () => {
      const a = expectError(await api.get('/v1/no-such-thing'), 404, 'not_found')
      const b = expectError(await api.get('/v1/no-such-thing'), 404, 'not_found')
      expect(a.request_id).not.toBe(b.request_id)
    })
  })

  describe('request bodies', () => {
    it('answers malformed JSON with 400 invalid_json', async () => {
      const res = await api.request({
        method: 'POST',
        url: '/v1/operators',
        headers: json,
        payload: '{"ident": "x",',
      })
      expectError(res, 400, 'bad_request', { code: 'invalid_json' })
    })

    it('answers an empty body sent as JSON with 400 invalid_json', async () => {
      const res = await api.request({ method: 'POST', url: '/v1/operators', headers: json, payload: '' })
      expectError(res, 400, 'bad_request', { code: 'invalid_json' })
    })

    it('answers a missing body on a create with 400 invalid_body', async () => {
      expectError(await api.post('/v1/operators'), 400, 'bad_request', { code: 'invalid_body' })
    })

    it.each([
      ['an array', '[{"ident": "x"}]'],
      ['a string', '"x"'],
      ['a number', '5'],
      ['null', 'null'],
    ])('answers a JSON body that is %s with 400 invalid_body', async (_label, payload) => {
      const create = await api.request({ method: 'POST', url: '/v1/operators', headers: json, payload })
      expectError(create, 400, 'bad_request', { code: 'invalid_body' })
      const update = await api.request({
        method: 'PATCH',
        url: `/v1/operators/${operatorId}`,
        headers: json,
        payload,
      })
      expectError(update, 400, 'bad_request', { code: 'invalid_body' })
    })

    it.each([
      ['text/plain', 'ident=x'],
      ['application/x-www-form-urlencoded', 'ident=x'],
    ])(
      'answers Content-Type %s with 415 and the envelope, creating nothing',
      async (contentType, payload) => {
        const res = await api.request({
          method: 'POST',
          url: '/v1/operators',
          headers: { 'content-type': contentType },
          payload,
        })
        expectError(res, 415, 'bad_request')
        const list = await api.get<{ data: Array<{ ident: string }> }>('/v1/operators?ident=x')
        expect(list.body.data).toEqual([])
      },
    )

    it('answers a body over 1 MiB with 413 and the envelope', async () => {
      const payload = JSON.stringify({ ident: 'big', name: 'x'.repeat(1024 * 1024) })
      expect(Buffer.byteLength(payload)).toBeGreaterThan(1024 * 1024)
      const res = await api.request({ method: 'POST', url: '/v1/operators', headers: json, payload })
      expectError(res, 413, 'bad_request')
    })
  })

  describe('validation', () => {
    it('names a missing ident: 422 missing_param', async () => {
      expectError(await api.post('/v1/operators', {}), 422, 'validation_error', {
        code: 'missing_param',
        param: 'ident',
      })
      expectError(await api.post('/v1/operators', { name: 'No Ident' }), 422, 'validation_error', {
        code: 'missing_param',
        param: 'ident',
      })
    })

    it('names an unknown body field: 422 unknown_param', async () => {
      expectError(await api.post('/v1/operators', { ident: 'U-1', colour: 'red' }), 422, 'validation_error', {
        code: 'unknown_param',
        param: 'colour',
      })
      expectError(
        await api.patch(`/v1/operators/${operatorId}`, { ident: 'renamed' }),
        422,
        'validation_error',
        {
          code: 'unknown_param',
          param: 'ident',
        },
      )
    })

    it('names a field of the wrong type: 422 invalid_type, with no coercion', async () => {
      expectError(await api.post('/v1/operators', { ident: 5 }), 422, 'validation_error', {
        code: 'invalid_type',
        param: 'ident',
      })
      expectError(
        await api.patch(`/v1/operators/${operatorId}`, { is_active: 'yes' }),
        422,
        'validation_error',
        {
          code: 'invalid_type',
          param: 'is_active',
        },
      )
      expectError(await api.patch(`/v1/operators/${operatorId}`, { name: 12 }), 422, 'validation_error', {
        code: 'invalid_type',
        param: 'name',
      })
      // Nothing of the refused requests was stored.
      const list = await api.get<{ data: Array<{ ident: string }> }>('/v1/operators?ident=5')
      expect(list.body.data).toEqual([])
      const operator = await api.get<{ name: string | null; is_active: boolean }>(
        `/v1/operators/${operatorId}`,
      )
      expect(operator.body).toMatchObject({ name: null, is_active: true })
    })

    it('names a value out of bounds: 422 invalid_value', async () => {
      expectError(await api.post('/v1/operators', { ident: 'x'.repeat(65) }), 422, 'validation_error', {
        code: 'invalid_value',
        param: 'ident',
      })
      expectError(
        await api.post('/v1/operators', { ident: 'N-1', name: 'n'.repeat(201) }),
        422,
        'validation_error',
        {
          code: 'invalid_value',
          param: 'name',
        },
      )
      expectError(
        await api.patch(`/v1/operators/${operatorId}`, { name: 'n'.repeat(201) }),
        422,
        'validation_error',
        {
          code: 'invalid_value',
          param: 'name',
        },
      )
      // The bounds themselves are accepted.
      const atBounds = await api.post('/v1/operators', { ident: 'x'.repeat(64), name: 'n'.repeat(200) })
      expect(atBounds.status).toBe(201)
    })

    it.each([
      ['0', 'invalid_value'],
      ['201', 'invalid_value'],
      ['-1', 'invalid_value'],
      ['1.5', 'invalid_type'],
      ['abc', 'invalid_type'],
      ['', 'invalid_type'],
    ])('refuses limit=%s with 422 param limit', async (limit, code) => {
      const res = await api.get(`/v1/operators?limit=${limit}`)
      expectError(res, 422, 'validation_error', { code, param: 'limit' })
    })

    it('accepts limit at both bounds', async () => {
      expect((await api.get('/v1/operators?limit=1')).status).toBe(200)
      expect((await api.get('/v1/operators?limit=200')).status).toBe(200)
    })

    it('refuses an unknown query parameter with 422 unknown_param', async () => {
      expectError(await api.get('/v1/operators?colour=red'), 422, 'validation_error', {
        code: 'unknown_param',
        param: 'colour',
      })
    })
  })

  describe('cursors', () => {
    let firstCursor: string

    beforeAll(async () => {
      for (const ident of ['C-1', 'C-2', 'C-3']) {
        expect((await api.post('/v1/operators', { ident })).status).toBe(201)
      }
      const page = await api.get<List<Operator>>('/v1/operators?limit=1')
      expect(page.body.has_more).toBe(true)
      firstCursor = page.body.next_cursor ?? ''
    })

    it('follows its own cursor (the control case)', async () => {
      const page = await api.get<{ data: unknown[] }>(
        `/v1/operators?limit=1&cursor=${encodeURIComponent(firstCursor)}`,
      )
      expect(page.status).toBe(200)
      expect(page.body.data).toHaveLength(1)
    })

    it.each([
      ['garbage', 'not-a-cursor'],
      ['empty', ''],
      ['three parts', 'a.b.c'],
      ['base64 without a signature', Buffer.from('{"k":"op_1"}').toString('base64url')],
      ['too long', 'a'.repeat(600)],
    ])('refuses a malformed cursor (%s) with 400 invalid_cursor', async (_label, cursor) => {
      const res = await api.get(`/v1/operators?cursor=${encodeURIComponent(cursor)}`)
      expectError(res, 400, 'bad_request', { code: 'invalid_cursor' })
    })

    it('refuses a repeated cursor parameter with 400 invalid_cursor', async () => {
      const cursor = encodeURIComponent(firstCursor)
      const res = await api.get(`/v1/operators?cursor=${cursor}&cursor=${cursor}`)
      expectError(res, 400, 'bad_request', { code: 'invalid_cursor' })
    })

    it('refuses a tampered cursor with 400 invalid_cursor', async () => {
      const [payload, signature] = firstCursor.split('.') as [string, string]
      const forgedPayload = Buffer.from(JSON.stringify({ k: 'op_ZZZZZZZZZZZZZZZZZZZZZZZZZZ' })).toString(
        'base64url',
      )
      const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`
      for (const cursor of [`${forgedPayload}.${signature}`, `${payload}.${flipped}`, `${payload}.`]) {
        const res = await api.get(`/v1/operators?cursor=${encodeURIComponent(cursor)}`)
        expectError(res, 400, 'bad_request', { code: 'invalid_cursor' })
      }
    })

    it("refuses another account's cursor with 400 invalid_cursor", async () => {
      const other = t.client((await t.key({ account: 'globex' })).secret)
      const res = await other.get(`/v1/operators?cursor=${encodeURIComponent(firstCursor)}`)
      expectError(res, 400, 'bad_request', { code: 'invalid_cursor' })
    })

    it("refuses the other mode's cursor with 400 invalid_cursor", async () => {
      const live = t.client((await t.key({ mode: 'live' })).secret)
      const res = await live.get(`/v1/operators?cursor=${encodeURIComponent(firstCursor)}`)
      expectError(res, 400, 'bad_request', { code: 'invalid_cursor' })
    })

    it('refuses a genuine cursor of another list with 400 invalid_cursor', async () => {
      // A cursor the service itself signed, for the same caller, but for another list.
      const key = await t.key()
      const paginator = new Paginator(await loadSecret(t.db, 'cursor_secret'))
      const auth = { principalId: key.id, locationIds: null, accountId: key.account_id, livemode: false }
      const rows = [{ id: 'ses_2' }, { id: 'ses_1' }]
      const page = await paginator.page(
        'sessions',
        auth,
        { limit: 1 },
        async () => rows,
        (row) => row,
      )
      expect(page.next_cursor).toEqual(expect.any(String))
      const res = await t
        .client(key.secret)
        .get(`/v1/operators?cursor=${encodeURIComponent(page.next_cursor ?? '')}`)
      expectError(res, 400, 'bad_request', { code: 'invalid_cursor' })
    })
  })
})

describe('unexpected failures', () => {
  let t: TestApp
  let api: ApiClient

  beforeAll(async () => {
    // Its own PostgreSQL database: a table dropped in the run's shared one fails the migrations of
    // the test files beside it (test/helpers/database.ts).
    t = await buildTestApp({}, { database: await createTestDatabase({ ownPostgresDatabase: true }) })
    api = t.client((await t.key()).secret)
    expect((await api.post('/v1/operators', { ident: 'before-the-failure' })).status).toBe(201)
    // A real failure underneath the HTTP layer: the table the routes query is gone.
    await sql`drop table operators`.execute(t.db)
  })
  afterAll(() => t?.close())

  const internals =
    /operators|select|insert|sqlite|relation|no such table|syntax|stack|node_modules|\.ts:|\bat /i

  it('answers a failing read with 500 api_error and a generic message', async () => {
    const res = await api.get('/v1/operators')
    const error = expectError(res, 500, 'api_error')
    expect(error.code).toBeUndefined()
    expect(error.param).toBeUndefined()
    expect(res.raw.body).not.toMatch(internals)
  })

  it('answers a failing create with 500 api_error and a generic message', async () => {
    const res = await api.post('/v1/operators', { ident: 'after-the-failure' })
    expectError(res, 500, 'api_error')
    expect(res.raw.body).not.toMatch(internals)
  })

  it('answers a failing retrieval with 500 api_error, with a request id', async () => {
    const res = await api.get('/v1/operators/op_00000000000000000000000000')
    const error = expectError(res, 500, 'api_error')
    expect(error.request_id).toMatch(/^req_[0-9a-f]+$/)
    expect(res.raw.body).not.toMatch(internals)
  })
})
