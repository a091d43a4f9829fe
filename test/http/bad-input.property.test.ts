import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_TYPES } from '../../src/core/errors.js'
import { type ApiClient, type ApiResponse, buildTestApp, type TestApp } from '../helpers/app.js'
import type { Operator } from '../helpers/assertions.js'

/**
 * No malformed input ever answers 500: bodies, query strings, headers and path ids drawn at random
 * are all answered below 500, and every refusal carries the error envelope with the request id.
 */

const RUNS = { numRuns: 150 }

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

function expectSane(res: ApiResponse, context: unknown) {
  const requestId = res.headers['x-request-id']
  const where = JSON.stringify(context)
  expect(res.status, where).toBeLessThan(500)
  expect(requestId, where).toMatch(/^req_[0-9a-f]{24}$/)
  if (res.status >= 200 && res.status < 300) return
  const body = res.body as { error?: Record<string, unknown> }
  expect(body?.error, where).toBeTypeOf('object')
  const error = body.error ?? {}
  expect(Object.keys(ERROR_TYPES), where).toContain(error.type)
  expect(error.message, where).toBeTypeOf('string')
  expect(error.request_id, where).toBe(requestId)
  for (const optional of ['code', 'param'] as const) {
    if (error[optional] !== undefined) expect(error[optional], where).toBeTypeOf('string')
  }
}

/** encodeURIComponent, tolerant of lone surrogates (which it refuses). */
function encode(text: string): string {
  try {
    return encodeURIComponent(text)
  } catch {
    return encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, '\uFFFD'))
  }
}

// Strings of every kind: full Unicode including lone surrogates and control characters, plus a
// few values chosen to hit edges (NUL, whitespace-only, prototype keys, very long).
const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\t\n', '__proto__', 'constructor', 'x'.repeat(300)),
)
/** A string with one awkward character somewhere: NUL, a lone surrogate, a line break, a non-character. */
const edgyString = fc
  .tuple(
    fc.string({ maxLength: 10 }),
    fc.constantFrom('\u0000', '\ud800', '\udfff', '\n', ' ', '\uffff', '\u2028'),
    fc.string({ maxLength: 10 }),
  )
  .map(([before, odd, after]) => before + odd + after)
const fieldString = fc.oneof(anyString, edgyString)
const anyJson = fc.jsonValue({ maxDepth: 4 })
const operatorField = fc.oneof(
  fc.constantFrom('ident', 'name', 'employee_id', 'is_active', '__proto__', 'constructor', 'prototype'),
  anyString,
)
const operatorValue = fc.oneof(anyString, anyJson, fc.boolean(), fc.constant(null))

/** Raw request payloads: JSON documents, objects shaped like operator bodies, and broken text. */
const rawBody = fc.oneof(
  // Nearly valid bodies, with awkward strings in the right places.
  fc
    .record(
      { ident: fieldString, name: fc.option(fieldString), employee_id: fc.option(fieldString) },
      { requiredKeys: ['ident'] },
    )
    .map((v) => JSON.stringify(v)),
  fc
    .record(
      { name: fc.option(fieldString), employee_id: fc.option(fieldString), is_active: fc.boolean() },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  anyJson.map((v) => JSON.stringify(v)),
  fc.dictionary(operatorField, operatorValue, { maxKeys: 5 }).map((v) => JSON.stringify(v)),
  fc
    .record(
      { ident: operatorValue, name: operatorValue, employee_id: operatorValue, is_active: operatorValue },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  // Prototype-poisoning shapes, which the JSON parser refuses.
  fc.constantFrom('{"__proto__":{"x":1},"ident":"p"}', '{"constructor":{"prototype":{"x":1}}}'),
  // Truncated JSON and arbitrary text.
  fc.json().chain((text) => fc.nat(text.length).map((n) => text.slice(0, n))),
  anyString,
  // Deep nesting, valid and not.
  fc.integer({ min: 1, max: 50_000 }).map((n) => `{"name":${'['.repeat(n)}${']'.repeat(n)}}`),
  fc.integer({ min: 1, max: 50_000 }).map((n) => '{"a":'.repeat(n)),
)

const queryKey = fc.oneof(
  fc.constantFrom('limit', 'cursor', 'is_active', 'ident', 'employee_id', 'limit[]', '__proto__', ''),
  anyString,
)
const queryValue = fc.oneof(
  fieldString.map(encode),
  fc.integer().map(String),
  fc.double().map(String),
  fc.constantFrom('true', 'false', '1', '0', '', '%', '%zz', '%E0%A4%A', '%00', '%FF', '+', '[]', '..'),
  fc.string({ unit: fc.constantFrom(..."abc%=&[]+.;,/?:@!$'()*-_~09".split('')) }),
)
const queryString = fc.oneof(
  // The known parameters, each with any value, plus maybe an unknown one.
  fc
    .tuple(
      fc.record(
        {
          limit: queryValue,
          cursor: queryValue,
          is_active: queryValue,
          ident: queryValue,
          employee_id: queryValue,
        },
        { requiredKeys: [] },
      ),
      fc.option(fc.tuple(queryKey, queryValue)),
    )
    .map(([known, extra]) =>
      [...Object.entries(known), ...(extra ? [extra] : [])].map(([k, v]) => `${encode(k)}=${v}`).join('&'),
    ),
  fc
    .array(fc.tuple(queryKey, queryValue), { maxLength: 5 })
    .map((pairs) => pairs.map(([k, v]) => `${encode(k)}=${v}`).join('&')),
  // Printable ASCII as is, unencoded.
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
)

/** Header values as an HTTP client can send them: tab, printable ASCII and Latin-1. */
const headerValue = fc.oneof(
  fc.string({
    unit: fc.oneof(
      fc.constant('\t'),
      fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
    ),
    maxLength: 300,
  }),
  fc.constantFrom('', ' ', 'Bearer', 'Bearer ', 'Bearer  x', 'bearer sk_test_x', 'Basic dXNlcjpwYXNz'),
  fc
    .string({ unit: fc.constantFrom(...'ABCxyz019_-'.split('')), maxLength: 140 })
    .map((s) => `Bearer sk_${s.length % 2 ? 'test' : 'live'}_${s}`),
)

/** Path ids: percent-encoded strings of any kind, and raw segments with URL metacharacters. */
const pathId = fc.oneof(
  fieldString.map(encode),
  fc.string({ unit: fc.constantFrom(...'ab_09%/?#.;:@&=+$,~é'.split('')), minLength: 1, maxLength: 80 }),
  fc.constantFrom(
    '%',
    '%zz',
    '%E0%A4%A',
    '%00',
    '%FF',
    '.',
    '..',
    '%2e%2e',
    'op_',
    'op_%00',
    'x'.repeat(200),
  ),
)

describe('no malformed input answers 500', () => {
  let t: TestApp
  let api: ApiClient
  let operatorId: string

  beforeAll(async () => {
    t = await buildTestApp()
    api = t.client((await t.key({ account: 'fuzz' })).secret)
    const res = await api.post<{ id: string }>('/v1/operators', { ident: 'fuzz-target', name: 'Target' })
    expect(res.status).toBe(201)
    operatorId = res.body.id
  })
  afterAll(() => t.close())

  function raw(method: Method, url: string, payload?: string, headers: Record<string, string> = {}) {
    return api.request({
      method,
      url,
      headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(payload === undefined ? {} : { payload }),
    })
  }

  it('refuses NUL in any string with 422 naming the param (PostgreSQL text cannot hold it)', async () => {
    const cases: Array<[Method, string, unknown, string]> = [
      ['POST', '/v1/operators', { ident: 'a\u0000b' }, 'ident'],
      ['POST', '/v1/operators', { ident: 'nul-name', name: '\u0000' }, 'name'],
      ['POST', '/v1/operators', { ident: 'nul-employee', employee_id: 'e\u0000' }, 'employee_id'],
      ['PATCH', `/v1/operators/${operatorId}`, { name: 'x\u0000' }, 'name'],
      ['PATCH', `/v1/operators/${operatorId}`, { employee_id: '\u0000' }, 'employee_id'],
      ['GET', '/v1/operators?ident=a%00b', undefined, 'ident'],
      ['GET', '/v1/operators?employee_id=%00', undefined, 'employee_id'],
      ['GET', '/v1/operators/op_%00', undefined, 'id'],
      ['PATCH', '/v1/operators/%00', { name: 'x' }, 'id'],
      ['DELETE', '/v1/operators/a%00', undefined, 'id'],
    ]
    const countOperators = async () =>
      Number(
        (
          await t.db
            .selectFrom('operators')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      )
    const before = await countOperators()
    for (const [method, url, body, param] of cases) {
      const res = await raw(method, url, body === undefined ? undefined : JSON.stringify(body))
      expectSane(res, { method, url, body })
      expect(res.status, url).toBe(422)
      expect((res.body as { error: { type: string; param: string } }).error).toMatchObject({
        type: 'validation_error',
        param,
      })
    }
    // Nothing was created or changed.
    const target = await api.get<Operator>(`/v1/operators/${operatorId}`)
    expect(target.body).toMatchObject({ name: 'Target', employee_id: null })
    expect(await countOperators()).toBe(before)
  })

  it('POST /v1/operators with any body', async () => {
    await fc.assert(
      fc.asyncProperty(rawBody, async (payload) => {
        expectSane(await raw('POST', '/v1/operators', payload), { payload })
      }),
      RUNS,
    )
  })

  it('POST /v1/operators with any body and an Idempotency-Key', async () => {
    await fc.assert(
      fc.asyncProperty(rawBody, fc.constantFrom('k1', 'k2', 'k3'), async (payload, key) => {
        expectSane(await raw('POST', '/v1/operators', payload, { 'idempotency-key': key }), { payload, key })
      }),
      RUNS,
    )
  })

  it('PATCH /v1/operators/{id} with any body', async () => {
    await fc.assert(
      fc.asyncProperty(rawBody, async (payload) => {
        expectSane(await raw('PATCH', `/v1/operators/${operatorId}`, payload), { payload })
      }),
      RUNS,
    )
  })

  it('GET /v1/operators with any query string', async () => {
    await fc.assert(
      fc.asyncProperty(queryString, async (query) => {
        expectSane(await raw('GET', `/v1/operators?${query}`), { query })
      }),
      RUNS,
    )
  })

  it('GET /v1/operators with a cursor derived from a real one', async () => {
    const first = await api.get<{ next_cursor: string | null }>('/v1/operators?limit=1')
    // Two operators exist by now at the latest (the target and the property runs' creates).
    const cursor = first.body.next_cursor ?? 'x.y'
    await fc.assert(
      fc.asyncProperty(fc.nat(cursor.length), fc.nat(cursor.length), anyString, async (from, to, insert) => {
        const mangled = cursor.slice(0, Math.min(from, to)) + insert + cursor.slice(Math.max(from, to))
        expectSane(await raw('GET', `/v1/operators?cursor=${encode(mangled)}`), { mangled })
      }),
      RUNS,
    )
  })

  it('any Authorization header', async () => {
    await fc.assert(
      fc.asyncProperty(
        headerValue,
        fc.constantFrom<[Method, string]>(['GET', '/v1/operators'], ['POST', '/v1/operators']),
        async (authorization, [method, url]) => {
          const payload = method === 'POST' ? JSON.stringify({ ident: 'never-created' }) : undefined
          const res = await raw(method, url, payload, { authorization })
          expectSane(res, { authorization, method })
          // None of these is a valid key.
          expect(res.status, JSON.stringify({ authorization })).toBe(401)
        },
      ),
      RUNS,
    )
  })

  it('any Idempotency-Key header', async () => {
    let n = 0
    await fc.assert(
      fc.asyncProperty(headerValue, async (key) => {
        n += 1
        const payload = JSON.stringify({ ident: `idem-${n}` })
        expectSane(await raw('POST', '/v1/operators', payload, { 'idempotency-key': key }), { key })
      }),
      RUNS,
    )
  })

  it('any path id on GET, PATCH and DELETE', async () => {
    await fc.assert(
      fc.asyncProperty(pathId, fc.constantFrom<Method>('GET', 'PATCH', 'DELETE'), async (id, method) => {
        const payload = method === 'PATCH' ? JSON.stringify({ name: 'renamed' }) : undefined
        expectSane(await raw(method, `/v1/operators/${id}`, payload), { id, method })
      }),
      RUNS,
    )
  })
})
