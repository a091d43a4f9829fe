import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Redis } from 'ioredis'
import { buildApp } from '../../src/app.js'
import { type Config, loadConfig } from '../../src/config.js'
import { type Db, openDatabase } from '../../src/db/connection.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { Scope } from '../../src/modules/keys/scopes.js'
import { type CreatedKey, createKey, type Mode } from '../../src/modules/keys/service.js'
import { createTestDatabase, type TestDatabase } from './database.js'

export interface TestApp {
  app: FastifyInstance
  /** The app's own database handle, for assertions on stored rows (e.g. the events table). */
  db: Db
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
  dependencies: { redis?: Redis; database?: TestDatabase } = {},
): Promise<TestApp> {
  // Two apps may share one database (as two API processes would): pass the first one's `database`.
  const database = dependencies.database ?? (await createTestDatabase())
  const config: Config = {
    ...loadConfig({}),
    databaseUrl: database.url,
    logLevel: 'silent',
    rateLimitMax: 1_000_000,
    // Webhook suites turn the inline worker on; others need no background polling.
    worker: 'off',
    ...overrides,
  }
  const { db } = openDatabase(config.databaseUrl)
  await migrateToLatest(db)
  const app = await buildApp({ config, db, redis: dependencies.redis })
  await app.ready()
  return {
    app,
    db,
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

/** Asserts nothing itself; returns the error envelope of a response for `expect` calls. */
export function errorOf(response: ApiResponse): {
  type: string
  message: string
  request_id: string
  code?: string
  param?: string
} {
  return (response.body as { error: ReturnType<typeof errorOf> }).error
}
