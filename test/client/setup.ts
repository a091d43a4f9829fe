import type { AddressInfo } from 'node:net'
import {
  AttendanceClient,
  type AttendanceClientOptions,
  type Fetch,
} from '../../packages/client/src/index.js'
import type { Config } from '../../src/config.js'
import type { Scope } from '../../src/modules/keys/scopes.js'
import type { CreatedKey, Mode } from '../../src/modules/keys/service.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { uniq } from '../helpers/assertions.js'

export { uniq }

/** The real app on a fresh database, listening on 127.0.0.1 over real HTTP. */
export interface ServedApp {
  t: TestApp
  baseUrl: string
  /** A key of a fresh account (so each test sees only its own objects). */
  key(options?: { mode?: Mode; scopes?: Scope[]; account?: string }): Promise<CreatedKey>
  /** A client for `key` (a fresh test-mode account's key by default) against this app. */
  client(
    key?: CreatedKey,
    options?: Partial<AttendanceClientOptions>,
  ): Promise<{ client: AttendanceClient; key: CreatedKey }>
  close(): Promise<void>
}

export async function serveApp(overrides: Partial<Config> = {}): Promise<ServedApp> {
  const t = await buildTestApp(overrides)
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = t.app.server.address() as AddressInfo
  const baseUrl = `http://127.0.0.1:${port}`
  const key: ServedApp['key'] = (options = {}) =>
    t.key({ account: options.account ?? uniq('acct'), mode: options.mode ?? 'test', scopes: options.scopes })
  return {
    t,
    baseUrl,
    key,
    client: async (given, options = {}) => {
      const used = given ?? (await key())
      return { key: used, client: new AttendanceClient({ apiKey: used.secret, baseUrl, ...options }) }
    },
    close: () => t.close(),
  }
}

/** One request as a `fetch` wrapper saw it, with the answer when one came. */
export interface Exchange {
  method: string
  url: string
  headers: Headers
  body: string | undefined
  sentAt: number
  status?: number
  responseHeaders?: Headers
  answeredAt?: number
}

/**
 * A `fetch` in front of the real one that records every exchange. `intercept` may replace an attempt: it gets
 * the index of the call to this fetch (0 for the first) and a function that performs the real request, and returns the
 * response the client sees, or throws what the client sees instead (e.g. a network error).
 */
export function recordingFetch(
  intercept?: (index: number, real: () => Promise<Response>, exchange: Exchange) => Promise<Response>,
): { fetch: Fetch; exchanges: Exchange[] } {
  const exchanges: Exchange[] = []
  // Counted apart from `exchanges`, which tests may clear between steps.
  let attempts = 0
  const fetchImpl: Fetch = async (input, init) => {
    const exchange: Exchange = {
      method: init?.method ?? 'GET',
      url: String(input),
      headers: new Headers(init?.headers),
      body: typeof init?.body === 'string' ? init.body : undefined,
      sentAt: Date.now(),
    }
    const index = attempts++
    exchanges.push(exchange)
    const real = async () => {
      const response = await globalThis.fetch(input, init)
      exchange.status = response.status
      exchange.responseHeaders = response.headers
      exchange.answeredAt = Date.now()
      return response
    }
    return intercept ? intercept(index, real, exchange) : real()
  }
  return { fetch: fetchImpl, exchanges }
}

/** A network failure as undici reports one (`fetch failed`, the socket error as cause). */
export function networkError(): TypeError {
  return new TypeError('fetch failed', {
    cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
  })
}

/** Runs `fn` and returns what it threw; fails when it did not throw. */
export async function caught(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn()
  } catch (error) {
    return error
  }
  throw new Error('expected the call to throw, it resolved')
}
