import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import SwaggerParser from '@apidevtools/swagger-parser'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ref } from '../src/core/schemas.js'
import { COMPONENT_SCHEMAS } from '../src/http/openapi.js'
import { EVENT_TYPES } from '../src/modules/events/types.js'
import { WebhookEndpoint } from '../src/modules/webhooks/schemas.js'
import { TEST_EVENT_TYPE } from '../src/modules/webhooks/subscription.js'
import { buildTestApp, ResponseConformance, type TestApp } from './helpers/app.js'
import { registeredRoutes } from './helpers/routes.js'

type Json = Record<string, unknown>
interface Operation {
  tags?: string[]
  security?: unknown[]
  parameters?: Array<{ $ref?: string; name?: string; in?: string }>
  requestBody?: { content: Record<string, { schema: Json }> }
  responses: Record<string, { $ref?: string; headers?: Record<string, { $ref?: string }>; content?: Json }>
}
interface Document {
  openapi: string
  info: { title: string; version: string; description: string }
  tags: Array<{ name: string; description?: string }>
  security: unknown[]
  paths: Record<string, Record<string, Operation>>
  webhooks: Record<string, { post: Operation }>
  components: {
    schemas: Record<string, Json>
    securitySchemes: Record<string, Json>
    responses: Record<string, { headers?: Record<string, { $ref?: string }>; content?: Json }>
    parameters: Record<string, { name: string; in: string; required?: boolean }>
    headers: Record<string, Json>
  }
}

const toTemplate = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}')
const BODY_METHODS = ['POST', 'PATCH', 'DELETE']
/** A browser's navigations (sign-in with SSO), public, whose one success is a redirect (302), not a 2xx. */
const SSO_PATHS = ['/v1/auth/sso/start', '/v1/auth/sso/callback']
/** Signing in, and the links of e-mails: public, and refusing a wrong password with 401. */
const SIGN_IN_PATHS = ['/v1/auth/sign-in', '/v1/auth/accept-invite']
/**
 * The /v1 routes served without a key: the document itself, pairing a device with its code, SSO,
 * signing in, what the sign-in page asks first, and the password links.
 */
const PUBLIC_PATHS = [
  '/v1/openapi.json',
  '/v1/device-pairings',
  ...SSO_PATHS,
  ...SIGN_IN_PATHS,
  '/v1/auth/methods',
  '/v1/auth/forgot-password',
  '/v1/auth/reset-password',
]
/** A signed-in person's own session: the cookie alone (no account, no key). */
const SIGNED_IN_PATHS = ['/v1/auth/session', '/v1/auth/sign-out', '/v1/auth/password']
/** The POSTs that run through the idempotent create runner. */
const IDEMPOTENT = [
  'POST /v1/operators',
  'POST /v1/locations',
  'POST /v1/devices',
  'POST /v1/sessions',
  'POST /v1/scans',
  'POST /v1/scans/batch',
  'POST /v1/webhook-endpoints',
  'POST /v1/webhook-endpoints/{id}/rotate-secret',
  'POST /v1/webhook-endpoints/{id}/send-test',
  'POST /v1/pay-periods',
  'POST /v1/pay-rules',
  'POST /v1/api-keys',
  'POST /v1/users',
]
const RESOURCE_SCHEMAS = [
  'Operator',
  'Location',
  'Device',
  'Session',
  'SessionRevision',
  'Scan',
  'PayPeriod',
  'PayRule',
  'TimesheetEntry',
  'WebhookEndpoint',
  'WebhookEndpointWithSecret',
  'WebhookDelivery',
  'WebhookAttempt',
  'WebhookRecovery',
  'Event',
  'ErrorEnvelope',
  'DeletedLocation',
  'DeletedDevice',
  'DeletedSession',
  'DeletedWebhookEndpoint',
]

/**
 * The `$id` of every schema that a module's `schemas.ts` exports, found by reading src/modules/ (no
 * list to keep): the named schemas the document must have.
 */
async function moduleSchemaIds(): Promise<string[]> {
  const modules = path.resolve(import.meta.dirname, '../src/modules')
  const ids: string[] = []
  for (const entry of readdirSync(modules, { withFileTypes: true })) {
    const file = path.join(modules, entry.name, 'schemas.ts')
    if (!entry.isDirectory() || !existsSync(file)) continue
    const exported: Record<string, unknown> = await import(file)
    for (const value of Object.values(exported)) {
      const id = (value as { $id?: unknown } | null | undefined)?.$id
      if (typeof id === 'string') ids.push(id)
    }
  }
  return ids
}

describe('the OpenAPI document', () => {
  let t: TestApp
  let doc: Document
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
    )

  beforeAll(async () => {
    t = await buildTestApp()
    const res = await t.client(undefined).get<Document>('/v1/openapi.json')
    expect(res.status).toBe(200)
    doc = res.body
  })
  afterAll(() => t?.close())

  it('is a valid OpenAPI 3.1 document (swagger-parser)', async () => {
    expect(doc.openapi).toBe('3.1.0')
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined()
  })

  it('documents every /v1 route the app registered, and nothing else', () => {
    const routes = registeredRoutes(t.app).filter((r) => r.method !== 'HEAD')
    const api = routes.filter((r) => r.url.startsWith('/v1/'))
    expect(api.length).toBeGreaterThan(20)
    for (const route of api) {
      expect(
        doc.paths[toTemplate(route.url)]?.[route.method.toLowerCase()],
        `${route.method} ${route.url}`,
      ).toBeDefined()
    }
    const documented = operations().map((o) => `${o.method} ${o.path}`)
    expect(documented.sort()).toEqual(api.map((r) => `${r.method} ${toTemplate(r.url)}`).sort())
    // Outside /v1/: the health and readiness checks, the reference UI, the manager console and the
    // kiosk page with its service worker, hidden by design.
    const others = routes.filter((r) => !r.url.startsWith('/v1/')).map((r) => r.url)
    expect(others.filter((u) => !u.startsWith('/docs') && !u.startsWith('/console')).sort()).toEqual([
      '/healthz',
      '/kiosk',
      '/kiosk/',
      '/kiosk/sw.js',
      '/readyz',
    ])
    for (const url of others) expect(doc.paths[url]).toBeUndefined()
  })

  it('gives every operation the error responses its shape can produce, by reference', () => {
    for (const { path, method, operation } of operations()) {
      const where = `${method} ${path}`
      const statuses = Object.keys(operation.responses)
      const isPublic = PUBLIC_PATHS.includes(path)
      const expected = ['400', '422', '429', '500', '503']
      if (!isPublic) expected.push('401', '403')
      if (path.includes('{')) expected.push('404')
      if (BODY_METHODS.includes(method)) expected.push('413', '415')
      if (IDEMPOTENT.includes(where)) expected.push('409')
      expect(statuses, where).toEqual(expect.arrayContaining(expected))
      expect(
        statuses.filter((s) => s.startsWith(SSO_PATHS.includes(path) ? '3' : '2')),
        where,
      ).toHaveLength(1)
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        const shared = operation.responses[status]?.$ref
        expect(shared, `${where} ${status}`).toMatch(/^#\/components\/responses\//)
        const response = doc.components.responses[String(shared).split('/').pop() as string]
        expect(response?.content, `${where} ${status}`).toEqual({
          'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } },
        })
        expect(response?.headers?.['X-Request-Id']).toEqual({ $ref: '#/components/headers/X-Request-Id' })
      }
      if (isPublic) {
        expect(statuses, where).not.toContain('403')
        if (!SIGN_IN_PATHS.includes(path)) expect(statuses, where).not.toContain('401')
      }
    }
    expect(doc.components.responses.RateLimited?.headers?.['Retry-After']).toEqual({
      $ref: '#/components/headers/Retry-After',
    })
    expect(doc.components.responses.MethodNotAllowed?.headers?.Allow).toEqual({
      $ref: '#/components/headers/Allow',
    })
  })

  it("declares the bearer key and cookie schemes: either for account routes, none for public ones, the cookie for the person's session alone", () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.components.securitySchemes.cookieAuth).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'att_session',
    })
    expect(doc.security).toEqual([{ bearerAuth: [] }, { cookieAuth: [] }])
    for (const { path, method, operation } of operations()) {
      if (PUBLIC_PATHS.includes(path)) expect(operation.security, `${method} ${path}`).toEqual([])
      else if (SIGNED_IN_PATHS.includes(path))
        expect(operation.security, `${method} ${path}`).toEqual([{ cookieAuth: [] }])
      else expect(operation.security, `${method} ${path}`).toBeUndefined()
    }
  })

  it('documents Idempotency-Key on every idempotent POST, and only there', () => {
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
    })
    for (const { path, method, operation } of operations()) {
      const has = (operation.parameters ?? []).some(
        (p) => p.$ref === '#/components/parameters/IdempotencyKey',
      )
      expect(has, `${method} ${path}`).toBe(IDEMPOTENT.includes(`${method} ${path}`))
      const success = Object.entries(operation.responses).find(([s]) =>
        s.startsWith(SSO_PATHS.includes(path) ? '3' : '2'),
      )?.[1]
      expect(success?.headers?.['X-Request-Id'], `${method} ${path}`).toEqual({
        $ref: '#/components/headers/X-Request-Id',
      })
      expect(success?.headers?.['X-RateLimit-Remaining'], `${method} ${path}`).toBeDefined()
      expect(success?.headers?.['Idempotent-Replayed'] !== undefined, `${method} ${path}`).toBe(has)
    }
  })

  it('names every resource schema once and refers to it instead of copying it', () => {
    for (const name of RESOURCE_SCHEMAS) expect(doc.components.schemas[name], name).toBeDefined()
    // No resource object is spelled out inline anywhere else: an object schema whose `object`
    // property is a resource kind appears only under components.schemas.
    const inline: string[] = []
    const walk = (node: unknown, at: string) => {
      if (node && typeof node === 'object') {
        const kind = (node as { properties?: { object?: { const?: unknown; enum?: unknown[] } } }).properties
          ?.object
        const literal = kind?.const ?? kind?.enum?.[0]
        if (typeof literal === 'string' && literal !== 'list') inline.push(`${at} (${literal})`)
        for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`)
      }
    }
    walk(doc.paths, '#/paths')
    walk(doc.webhooks, '#/webhooks')
    expect(inline).toEqual([])
    expect(doc.paths['/v1/operators/{id}']?.get?.responses['200']?.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/Operator' } },
    })
    expect(doc.components.schemas.SessionRevision).toMatchObject({
      properties: { before: { anyOf: [{ $ref: '#/components/schemas/Session' }, { type: 'null' }] } },
    })
  })

  it("names every schema with a $id that a module's schemas.ts exports, and nothing else but the error envelope", async () => {
    const ids = await moduleSchemaIds()
    expect(Object.keys(doc.components.schemas).sort()).toEqual(['ErrorEnvelope', ...ids].sort())
  })

  it('has one webhook per event type: the envelope narrowed to the type and its resource, signed headers, 2xx/410', () => {
    const expected = [...EVENT_TYPES, TEST_EVENT_TYPE]
    expect(Object.keys(doc.webhooks).sort()).toEqual([...expected].sort())
    const objects: Record<string, string> = {
      session: 'Session',
      operator: 'Operator',
      device: 'Device',
      location: 'Location',
      scan: 'Scan',
      pay_period: 'PayPeriod',
      pay_rule: 'PayRule',
      webhook_endpoint: 'WebhookEndpoint',
    }
    for (const type of expected) {
      const post = doc.webhooks[type]?.post as Operation
      const schema = post.requestBody?.content['application/json']?.schema
      expect(schema, type).toEqual({
        allOf: [
          { $ref: '#/components/schemas/Event' },
          {
            type: 'object',
            required: ['type', 'data'],
            properties: {
              type: { const: type },
              data: {
                type: 'object',
                required: ['object'],
                properties: {
                  object: { $ref: `#/components/schemas/${objects[type.split('.')[0] as string]}` },
                },
              },
            },
          },
        ],
      })
      const headers = (post.parameters ?? []).map(
        (p) => doc.components.parameters[String(p.$ref).split('/').pop() as string],
      )
      expect(
        headers.map((h) => [h?.name, h?.in, h?.required]),
        type,
      ).toEqual([
        ['X-Service-Signature', 'header', true],
        ['X-Service-Id', 'header', true],
        ['X-Service-Event', 'header', true],
      ])
      expect(Object.keys(post.responses), type).toEqual(expect.arrayContaining(['2XX', '410']))
      expect(post.security, type).toEqual([])
    }
  })

  it('describes the events the service really emits (GET /v1/events validated against the webhooks)', async () => {
    const api = t.client((await t.key({ account: 'webhook-docs' })).secret)
    const operator = await api.post<{ id: string; ident: string }>('/v1/operators', { ident: 'DOC-1' })
    const location = await api.post<{ id: string }>('/v1/locations', { name: 'Docs hall' })
    await api.post('/v1/devices', { code: 'DOC-DEV', location_id: location.body.id })
    await api.post('/v1/sessions', {
      operator_id: operator.body.id,
      device_id: 'DOC-DEV',
      check_in: { time: '2026-01-05T08:00:00Z' },
      check_out: { time: '2026-01-05T16:00:00Z' },
    })
    await api.post('/v1/scans', { device_id: 'DOC-DEV', operator_ident: 'DOC-1' })
    await api.patch(`/v1/operators/${operator.body.id}`, { name: 'Renamed' })
    await api.delete(`/v1/operators/${operator.body.id}`)
    const events = await api.get<{ data: Array<{ type: string }> }>('/v1/events?limit=200')
    expect(events.status).toBe(200)

    const ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats.default(ajv)
    ajv.addSchema({ ...doc, $id: 'urn:attendance:document' })
    const seen = new Set<string>()
    for (const event of events.body.data) {
      seen.add(event.type)
      const pointer = `urn:attendance:document#/webhooks/${encodeURIComponent(event.type)}/post/requestBody/content/application~1json/schema`
      const validate = ajv.compile({ $ref: pointer })
      expect(validate(event), `${event.type}: ${JSON.stringify(validate.errors)}`).toBe(true)
    }
    expect([...seen]).toEqual(
      expect.arrayContaining([
        'operator.created',
        'operator.updated',
        'operator.deactivated',
        'location.created',
        'device.created',
        'session.completed',
        'session.flagged',
        'scan.checked_in',
      ]),
    )
  })

  it('has an info description covering auth, modes, errors, pagination and idempotency, and described tags', () => {
    for (const topic of ['Authentication', 'Modes', 'Errors', 'Pagination', 'Idempotency', 'Rate limits']) {
      expect(doc.info.description).toContain(`**${topic}.**`)
    }
    const declared = new Map(doc.tags.map((tag) => [tag.name, tag.description]))
    const used = new Set(operations().flatMap((o) => o.operation.tags ?? []))
    for (const tag of used) expect(declared.get(tag), tag).toEqual(expect.any(String))
    for (const { path, method, operation } of operations())
      expect(operation.tags, `${method} ${path}`).toHaveLength(1)
  })

  it('documents the errors a route gives for its shape, where no other suite sends garbage', async () => {
    // Every request below goes through ApiClient, whose conformance check throws when the status
    // is not documented for the route or the body is not the ErrorEnvelope.
    const api = t.client((await t.key({ account: 'garbage-docs' })).secret)
    const operator = await api.post<{ id: string }>('/v1/operators', { ident: 'G-1' })
    const text = { 'content-type': 'text/plain' }
    const cases: Array<[string, string, Record<string, string>, string | undefined, number]> = [
      ['DELETE', `/v1/operators/${operator.body.id}`, text, 'x', 415],
      ['DELETE', `/v1/operators/${operator.body.id}`, { 'content-type': 'application/json' }, '{', 400],
      ['POST', '/v1/webhook-deliveries/whd_missing/resend', text, 'x', 415],
      ['POST', '/v1/webhook-endpoints/we_missing/send-test', text, 'x', 415],
      ['GET', '/v1/events?x=%00', {}, undefined, 422],
      ['GET', `/v1/operators/${operator.body.id}?x=%00`, {}, undefined, 422],
      ['GET', '/v1/openapi.json?x=%00', {}, undefined, 422],
      ['PUT', '/v1/operators', {}, undefined, 405],
      ['GET', '/v1/nothing-here', {}, undefined, 404],
    ]
    for (const [method, url, headers, payload, status] of cases) {
      const res = await api.request({
        method: method as 'GET',
        url,
        headers,
        ...(payload === undefined ? {} : { payload }),
      })
      expect(res.status, `${method} ${url}`).toBe(status)
    }
  })

  it('serves the interactive reference at /docs without a key, from the package (HTML, then its assets)', async () => {
    const anonymous = t.client(undefined)
    const page = await anonymous.get('/docs')
    expect(page.status).toBe(200)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(String(page.body)).toContain('swagger-ui')
    const bundle = await anonymous.get('/docs/static/swagger-ui-bundle.js')
    expect(bundle.status).toBe(200)
    expect(bundle.headers['content-type']).toMatch(/javascript/)
    const json = await anonymous.get<Document>('/docs/json')
    expect(json.status).toBe(200)
    expect(json.body.openapi).toBe('3.1.0')
  })
})

describe('named schemas in the serializer', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    app = Fastify()
    for (const schema of COMPONENT_SCHEMAS) app.addSchema(schema)
    const endpoint = {
      object: 'webhook_endpoint',
      id: 'we_1',
      url: 'https://example.com/hook',
      enabled_events: ['*'],
      description: null,
      status: 'enabled',
      disabled_reason: null,
      livemode: false,
      created: '2026-01-01T00:00:00.000Z',
      updated: '2026-01-01T00:00:00.000Z',
    }
    app.get('/leak', { schema: { response: { 200: ref(WebhookEndpoint) } } }, async () => ({
      ...endpoint,
      secret: 'whsec_must_not_appear',
      internal_column: 1,
    }))
    await app.ready()
  })
  afterAll(() => app.close())

  it('drops fields a referenced schema does not declare (a secret never leaks through a $ref)', async () => {
    const res = await app.inject({ method: 'GET', url: '/leak' })
    expect(res.statusCode).toBe(200)
    const body = res.json() as Json
    expect(body.id).toBe('we_1')
    expect(body).not.toHaveProperty('secret')
    expect(body).not.toHaveProperty('internal_column')
  })
})

describe('response conformance (the check every ApiClient request runs)', () => {
  let t: TestApp
  let check: ResponseConformance
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
    statusCode: status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req_1', ...headers },
    body: JSON.stringify(body),
  })
  const error = { error: { type: 'not_found', message: 'No such operator.', request_id: 'req_1' } }

  beforeAll(async () => {
    t = await buildTestApp()
    check = new ResponseConformance(structuredClone(t.app.swagger()) as never)
  })
  afterAll(() => t?.close())

  it('accepts documented answers', () => {
    expect(() => check.check('GET', '/v1/operators/op_1?x=1', json(404, error))).not.toThrow()
    expect(() =>
      check.check(
        'GET',
        '/v1/operators',
        json(200, { object: 'list', data: [], has_more: false, next_cursor: null }),
      ),
    ).not.toThrow()
    expect(() => check.check('GET', '/nowhere', json(404, error))).not.toThrow()
  })

  it('refuses a body that does not match, naming route, status and the schema error', () => {
    const operator = {
      object: 'operator',
      id: 'op_1',
      ident: 'A',
      name: null,
      employee_id: null,
      is_active: true,
      pay_rule_id: null,
      has_pin: false,
      home_location_id: null,
      start_date: null,
      end_date: null,
      livemode: false,
      created: '2026-01-01T00:00:00.000Z',
      updated: '2026-01-01T00:00:00.000Z',
    }
    expect(() => check.check('POST', '/v1/operators', json(201, operator))).not.toThrow()
    expect(() => check.check('POST', '/v1/operators', json(201, { ...operator, extra: 1 }))).toThrow(
      /POST \/v1\/operators answered 201 .*additional properties/,
    )
    expect(() =>
      check.check('GET', '/v1/operators/op_1', json(200, { ...operator, is_active: 'yes' })),
    ).toThrow(/GET \/v1\/operators\/\{id\} answered 200 .*\/is_active must be boolean/)
    expect(() => check.check('GET', '/v1/operators/op_1', json(404, { error: { type: 'nope' } }))).toThrow(
      /answered 404 .*does not match/,
    )
  })

  it('refuses a status the route does not document, a missing required header, an undocumented /v1 answer', () => {
    // A list documents 404 (a signed-in person's Attendance-Account that is not theirs), not 409.
    expect(() => check.check('GET', '/v1/operators', json(409, error))).toThrow(
      /GET \/v1\/operators answered 409, which the OpenAPI document does not list/,
    )
    const noId = { ...json(404, error), headers: { 'content-type': 'application/json' } }
    expect(() => check.check('GET', '/v1/operators/op_1', noId)).toThrow(
      /without its documented header X-Request-Id/,
    )
    expect(() => check.check('GET', '/v1/secret-route', json(200, {}))).toThrow(/no such operation/)
    expect(() => check.check('PUT', '/v1/operators', json(405, error))).toThrow(/without an Allow header/)
  })
})
