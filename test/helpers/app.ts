import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Redis } from 'ioredis'
import { buildApp } from '../../src/app.js'
import { type Config, loadConfig } from '../../src/config.js'
import { openServiceDatabase } from '../../src/db/connection.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { GroupCommitStats } from '../../src/db/sqlite/driver.js'
import type { Db } from '../../src/db/types.js'
import type { Scope } from '../../src/modules/keys/scopes.js'
import { type CreatedKey, createKey, type Mode } from '../../src/modules/keys/service.js'
import { createTestDatabase, type TestDatabase } from './database.js'

// Where the tests read an error's envelope from; it lives with the assertions, which need no database.
export { errorOf } from './assertions.js'

export interface TestApp {
  app: FastifyInstance
  /** The app's own database handle, for assertions on stored rows (e.g. the events table). */
  db: Db
  /** SQLite: the group commits of that handle (how many COMMITs carried how many transactions). */
  groupCommits: GroupCommitStats | undefined
  config: Config
  database: TestDatabase
  /** Creates a key through the same service the CLI uses. */
  key(options?: { account?: string; mode?: Mode; scopes?: Scope[]; expiresAt?: Date }): Promise<CreatedKey>
  /** A small HTTP client bound to one key. */
  client(secret: string | undefined): ApiClient
  close(): Promise<void>
}

/**
 * Builds the real app on a fresh database of the dialect under test. The rate limit is high by
 * default so suites are not throttled; rate-limit tests pass their own `config`.
 */
export async function buildTestApp(
  overrides: Partial<Config> = {},
  dependencies: { redis?: Redis; database?: TestDatabase; logStream?: { write(line: string): void } } = {},
): Promise<TestApp> {
  // Two apps may share one database (as two API processes would): pass the first one's `database`.
  const database = dependencies.database ?? (await createTestDatabase({ migrated: true }))
  const config: Config = {
    ...loadConfig({}),
    databaseUrl: database.url,
    logLevel: 'silent',
    rateLimitMax: 1_000_000,
    // Webhook suites turn the inline worker on; others need no background polling.
    worker: 'off',
    ...overrides,
  }
  const { db, groupCommits } = openServiceDatabase(config)
  await migrateToLatest(db)
  // Logs are silent unless a test turns them up (`logLevel`) and reads them (`logStream`).
  const app = await buildApp({ config, db, redis: dependencies.redis, logStream: dependencies.logStream })
  await app.ready()
  return {
    app,
    db,
    groupCommits,
    config,
    database,
    key: (options = {}) =>
      createKey(db, {
        account: options.account ?? 'acme',
        mode: options.mode ?? 'test',
        scopes: options.scopes,
        expiresAt: options.expiresAt,
      }),
    client: (secret) => new ApiClient(app, secret),
    close: async () => {
      await app.close()
      await database.drop()
    },
  }
}

export interface ApiResponse<T = unknown> {
  status: number
  headers: LightMyRequestResponse['headers']
  body: T
  raw: LightMyRequestResponse
}

export class ApiClient {
  constructor(
    private readonly app: FastifyInstance,
    private readonly secret: string | undefined,
  ) {}

  get<T = Record<string, unknown>>(url: string, headers: Record<string, string> = {}) {
    return this.request<T>({ method: 'GET', url, headers })
  }

  post<T = Record<string, unknown>>(url: string, body?: unknown, headers: Record<string, string> = {}) {
    return this.request<T>({
      method: 'POST',
      url,
      headers,
      ...(body === undefined ? {} : { payload: body as object }),
    })
  }

  patch<T = Record<string, unknown>>(url: string, body: unknown, headers: Record<string, string> = {}) {
    return this.request<T>({ method: 'PATCH', url, headers, payload: body as object })
  }

  delete<T = Record<string, unknown>>(url: string, headers: Record<string, string> = {}) {
    return this.request<T>({ method: 'DELETE', url, headers })
  }

  async request<T>(options: InjectOptions): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...(options.headers as Record<string, string>) }
    if (this.secret !== undefined && headers.authorization === undefined)
      headers.authorization = `Bearer ${this.secret}`
    const raw = await this.app.inject({ ...options, headers })
    // Every answer must be one the OpenAPI document describes: drift fails the test that saw it.
    conformanceOf(this.app).check(
      String(options.method ?? 'GET'),
      String(options.url ?? options.path ?? '/'),
      raw,
    )
    const text = raw.body
    let body: unknown = text
    try {
      body = text.length ? JSON.parse(text) : undefined
    } catch {
      // Not JSON: tests assert on the text itself.
    }
    return { status: raw.statusCode, headers: raw.headers, body: body as T, raw }
  }
}

interface DocumentResponse {
  $ref?: string
  description?: string
  headers?: Record<string, { $ref?: string; required?: boolean }>
  content?: Record<string, { schema?: unknown }>
}
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses?: Record<string, DocumentResponse> }>>
  components: {
    responses?: Record<string, DocumentResponse>
    headers?: Record<string, { required?: boolean }>
  }
}

const DOCUMENT_ID = 'urn:attendance:openapi'

/** A JSON pointer into the document, as a URI fragment Ajv resolves. */
function pointer(...tokens: string[]): string {
  return `${DOCUMENT_ID}#/${tokens.map((t) => encodeURIComponent(t.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')}`
}

/**
 * Checks answers against the app's own OpenAPI document: the status must be documented for the
 * operation (method and path template), the documented required headers present, and a JSON body
 * valid against the documented schema (Ajv 2020 over the whole document, so `$ref`s to components
 * resolve; validators compiled once per operation and status). A request that matches no
 * operation (unknown path or method) must get a 4xx error envelope; 2xx answers outside /v1/
 * (health check, the /docs reference) are outside the contract.
 */
export class ResponseConformance {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true })
  private readonly validators = new Map<string, ValidateFunction>()
  private readonly templates: Array<{ template: string; pattern: RegExp; literal: number }>

  constructor(private readonly document: OpenApiDocument) {
    addFormats.default(this.ajv)
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID })
    this.templates = Object.keys(document.paths)
      .map((template) => ({
        template,
        pattern: new RegExp(
          `^${template
            .split(/\{[^}]+\}/)
            .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
            .join('[^/]+')}$`,
        ),
        literal: template.replace(/\{[^}]+\}/g, '').length,
      }))
      // The most literal template first: /v1/x/{id}/resend before a hypothetical /v1/x/{id}/{y}.
      .sort((a, b) => b.literal - a.literal)
  }

  check(
    method: string,
    url: string,
    raw: Pick<LightMyRequestResponse, 'statusCode' | 'headers' | 'body'>,
  ): void {
    const path = url.split('?')[0] ?? url
    const verb = method.toUpperCase() === 'HEAD' ? 'get' : method.toLowerCase()
    const template = this.templates.find((t) => t.pattern.test(path))?.template
    const operation = template === undefined ? undefined : this.document.paths[template]?.[verb]
    const status = raw.statusCode
    const where = `${method.toUpperCase()} ${template ?? path} answered ${status}`

    if (!operation) {
      if (status < 400 && !path.startsWith('/v1/')) return
      if (status < 400 || status >= 500) {
        throw new Error(`${where}, but the OpenAPI document has no such operation`)
      }
      if (status === 405 && raw.headers.allow === undefined)
        throw new Error(`${where} without an Allow header`)
      this.validateBody(where, raw, pointer('components', 'schemas', 'ErrorEnvelope'), method)
      return
    }

    const declared = operation.responses ?? {}
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => declared[k] !== undefined)
    if (key === undefined) {
      throw new Error(
        `${where}, which the OpenAPI document does not list (it lists ${Object.keys(declared).join(', ')})`,
      )
    }
    let response = declared[key] as DocumentResponse
    let at = ['paths', template as string, verb, 'responses', key]
    if (response.$ref !== undefined) {
      const name = response.$ref.replace('#/components/responses/', '')
      response = this.document.components.responses?.[name] as DocumentResponse
      at = ['components', 'responses', name]
      if (!response) throw new Error(`${where}: the document refers to a missing response ${name}`)
    }
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const required =
        header.required ??
        this.document.components.headers?.[header.$ref?.replace('#/components/headers/', '') ?? '']?.required
      if (required && raw.headers[name.toLowerCase()] === undefined) {
        throw new Error(`${where} without its documented header ${name}`)
      }
    }
    if (method.toUpperCase() === 'HEAD') return
    // A response documented with several media types (a timesheet as JSON or CSV): a non-JSON
    // answer must be one of them; its body is text the test checks itself.
    const mediaType =
      String(raw.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() ?? ''
    if (mediaType !== 'application/json' && mediaType !== '' && response.content?.[mediaType] !== undefined) {
      return
    }
    if (response.content?.['application/json'] === undefined) {
      if (raw.body.length > 0) throw new Error(`${where} with a body the document does not describe`)
      return
    }
    this.validateBody(where, raw, pointer(...at, 'content', 'application/json', 'schema'), method)
  }

  private validateBody(
    where: string,
    raw: Pick<LightMyRequestResponse, 'headers' | 'body'>,
    ref: string,
    method: string,
  ) {
    if (method.toUpperCase() === 'HEAD') return
    const type = String(raw.headers['content-type'] ?? '')
    if (!type.startsWith('application/json')) {
      throw new Error(`${where} with Content-Type "${type}"; the document says application/json`)
    }
    let body: unknown
    try {
      body = JSON.parse(raw.body)
    } catch {
      throw new Error(`${where} with a body that is not JSON: ${raw.body.slice(0, 200)}`)
    }
    let validate = this.validators.get(ref)
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref })
      this.validators.set(ref, validate)
    }
    if (!validate(body)) {
      throw new Error(
        `${where} with a body that does not match the OpenAPI document: ${describeErrors(validate.errors ?? [])}\nbody: ${raw.body.slice(0, 1000)}`,
      )
    }
  }
}

function describeErrors(errors: ErrorObject[]): string {
  return errors
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`)
    .join('; ')
}

const conformanceByApp = new WeakMap<FastifyInstance, ResponseConformance>()

/** The app's checker, built from its own document (read directly, so no request is counted). */
function conformanceOf(app: FastifyInstance): ResponseConformance {
  let conformance = conformanceByApp.get(app)
  if (!conformance) {
    conformance = new ResponseConformance(structuredClone(app.swagger()) as unknown as OpenApiDocument)
    conformanceByApp.set(app, conformance)
  }
  return conformance
}
