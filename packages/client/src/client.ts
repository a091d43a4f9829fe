import { AttendanceApiError, AttendanceConnectionError } from './errors.js'
import type {
  AcceptInviteParams,
  ApiKey,
  ApiKeyCreateParams,
  ApiKeyList,
  ApiKeyListParams,
  AuditEntry,
  AuditLogList,
  AuditLogListParams,
  AuthMethods,
  AuthSession,
  ChangePasswordParams,
  CreatedApiKey,
  CurrentDevice,
  DeletedObject,
  Device,
  DeviceCreateParams,
  DeviceList,
  DeviceListParams,
  DevicePairing,
  DevicePairingCode,
  DevicePairParams,
  DeviceUpdateParams,
  Event,
  EventList,
  EventListParams,
  ForgotPasswordParams,
  ListEnvelope,
  Location,
  LocationCreateParams,
  LocationList,
  LocationListParams,
  LocationUpdateParams,
  Operator,
  OperatorCreateParams,
  OperatorList,
  OperatorListParams,
  OperatorUpdateParams,
  PayPeriod,
  PayPeriodCreateParams,
  PayPeriodList,
  PayPeriodListParams,
  PayRule,
  PayRuleCreateParams,
  PayRuleList,
  PayRuleListParams,
  PayRuleUpdateParams,
  ResetPasswordParams,
  Scan,
  ScanCreateParams,
  ScanList,
  ScanListParams,
  Session,
  SessionApproveParams,
  SessionCreateParams,
  SessionList,
  SessionListParams,
  SessionRejectParams,
  SessionRevisionList,
  SessionRevisionListParams,
  SessionUpdateParams,
  SignInParams,
  TimesheetCsvParams,
  TimesheetEntry,
  TimesheetList,
  TimesheetListParams,
  User,
  UserCreateParams,
  UserList,
  UserListParams,
  UserUpdateParams,
  UserWithInviteUrl,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookDeliveryListParams,
  WebhookEndpoint,
  WebhookEndpointCreateParams,
  WebhookEndpointList,
  WebhookEndpointListParams,
  WebhookEndpointRecoverParams,
  WebhookEndpointRotated,
  WebhookEndpointRotateSecretParams,
  WebhookEndpointUpdateParams,
  WebhookEndpointWithSecret,
  WebhookRecovery,
} from './types.js'

// The sync tool and other callers may import everything from this module.
export * from './errors.js'
export type * from './types.js'

export const DEFAULT_BASE_URL = 'http://localhost:8080'
export const DEFAULT_MAX_RETRIES = 3
export const DEFAULT_TIMEOUT_MS = 30_000
/** The first retry waits 250–500 ms, each later one twice as long, up to 4–8 s. */
const INITIAL_RETRY_DELAY_MS = 500
const MAX_RETRY_DELAY_MS = 8_000
/** A longer `Retry-After` than this is not slept through in-process; the usual backoff applies instead. */
const MAX_RETRY_AFTER_MS = 60_000
/**
 * Sent from Node.js only: this module runs in browsers too (the manager console bundles it), which
 * name themselves and keep `process` undefined.
 */
const NODE_VERSION = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node
const USER_AGENT = NODE_VERSION === undefined ? undefined : `attendance-client/0.1.0 node/${NODE_VERSION}`

export type Mode = 'test' | 'live'
export type Fetch = typeof globalThis.fetch

export interface AttendanceClientOptions {
  /** `sk_test_…` or `sk_live_…`; or `session` instead. */
  apiKey?: string
  /**
   * Instead of a key, a signed-in person's session: the requests go without `Authorization`, for the
   * session cookie that the fetch sends (a browser's, on the service's own origin: the manager console).
   */
  session?: SessionCredentials
  /** Default `http://localhost:8080`. */
  baseUrl?: string
  /** Retries after the first attempt, on 429, 5xx, 409 `idempotency_key_in_use` and network errors. Default 3. */
  maxRetries?: number
  /** Per attempt, including reading the answer. Default 30000. */
  timeoutMs?: number
  /** Default `globalThis.fetch`. */
  fetch?: Fetch
}

/**
 * What a signed-in person's requests name (decisions.md, "Cookie requests"): the mode (`Attendance-Mode`),
 * the account when the person has several (`Attendance-Account`), and the session's CSRF token
 * (`X-CSRF-Token`, sent on POST, PATCH and DELETE), which `auth.signIn` and `auth.session` answer. Before
 * signing in, `{ mode }` alone: the sign-in and link requests need no more.
 */
export interface SessionCredentials {
  mode: Mode
  accountId?: string
  csrfToken?: string
}

/** Per-call options; every method takes them last. */
export interface RequestOptions {
  /**
   * `Idempotency-Key` for a POST that creates (default: a fresh UUID per call). The same key is sent on every
   * retry of that call, so a create whose answer was lost is replayed, never done twice.
   */
  idempotencyKey?: string
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number
  /** Aborts the call (and any wait between retries). */
  signal?: AbortSignal
}

export type HttpVerb = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/**
 * A streamed download (`timesheets.csv`): the body as a web `ReadableStream` (Node.js's
 * `stream/promises` `pipeline` takes it as it is; a browser reads it with `new Response(body)`),
 * with the answer's headers.
 */
export interface Download {
  body: ReadableStream<Uint8Array>
  headers: Headers
  /** `X-Total-Count`: the rows the server expects to send (for a progress bar), when it said. */
  totalRows: number | undefined
}

export interface RawRequestOptions extends RequestOptions {
  /** Query parameters; `undefined` and `null` values are left out. */
  query?: object | undefined
  /** Sent as JSON. */
  body?: unknown
  /** Sends an `Idempotency-Key` (POSTs the API runs idempotently). */
  idempotent?: boolean
}

/**
 * The Workforce Attendance API client.
 *
 * ```ts
 * const client = new AttendanceClient({ apiKey: process.env.ATTENDANCE_API_KEY! })
 * const operator = await client.operators.create({ ident: 'W-1001', name: 'Ada' })
 * for await (const session of client.sessions.iterate({ operator_id: operator.id })) console.log(session.id)
 * ```
 */
export class AttendanceClient {
  /** The key's mode (`test` for `sk_test_…`, `live` for `sk_live_…`), or the session's. */
  readonly mode: Mode
  readonly baseUrl: string
  readonly maxRetries: number
  readonly timeoutMs: number

  readonly operators: Operators
  readonly locations: Locations
  readonly devices: Devices
  readonly sessions: Sessions
  readonly scans: Scans
  readonly webhookEndpoints: WebhookEndpoints
  readonly webhookDeliveries: WebhookDeliveries
  readonly events: Events
  readonly payPeriods: PayPeriods
  readonly payRules: PayRules
  readonly timesheets: Timesheets
  readonly auth: Auth
  readonly users: Users
  readonly apiKeys: ApiKeys
  readonly auditLog: AuditLog

  // Private fields: the key never shows in console.log(client) or JSON.stringify(client).
  readonly #credentials: { apiKey: string } | { session: SessionCredentials }
  readonly #fetch: Fetch

  constructor(options: AttendanceClientOptions) {
    const {
      apiKey,
      session,
      baseUrl = DEFAULT_BASE_URL,
      maxRetries = DEFAULT_MAX_RETRIES,
      timeoutMs = DEFAULT_TIMEOUT_MS,
      fetch = globalThis.fetch,
    } = options ?? ({} as AttendanceClientOptions)
    if (session === undefined) {
      this.mode = modeOf(apiKey)
      this.#credentials = { apiKey: apiKey as string }
    } else {
      if (apiKey !== undefined) throw new TypeError('Pass apiKey or session, not both')
      if (session.mode !== 'test' && session.mode !== 'live') {
        throw new TypeError(`session.mode must be test or live (got ${String(session.mode)})`)
      }
      this.mode = session.mode
      this.#credentials = { session: { ...session } }
    }
    if (!Number.isInteger(maxRetries) || maxRetries < 0) {
      throw new TypeError(`maxRetries must be a whole number from 0 (got ${maxRetries})`)
    }
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError(`timeoutMs must be a positive number (got ${timeoutMs})`)
    }
    if (typeof fetch !== 'function') throw new TypeError('No fetch implementation: pass options.fetch')
    this.#fetch = fetch
    this.baseUrl = baseUrl.replace(/\/+$/, '')
    this.maxRetries = maxRetries
    this.timeoutMs = timeoutMs

    this.operators = new Operators(this)
    this.locations = new Locations(this)
    this.devices = new Devices(this)
    this.sessions = new Sessions(this)
    this.scans = new Scans(this)
    this.webhookEndpoints = new WebhookEndpoints(this)
    this.webhookDeliveries = new WebhookDeliveries(this)
    this.events = new Events(this)
    this.payPeriods = new PayPeriods(this)
    this.payRules = new PayRules(this)
    this.timesheets = new Timesheets(this)
    this.auth = new Auth(this)
    this.users = new Users(this)
    this.apiKeys = new ApiKeys(this)
    this.auditLog = new AuditLog(this)
  }

  /**
   * One API call with the client's retries and errors; the resource methods are built on it. Resolves with the
   * parsed JSON of a 2xx answer; rejects with an `AttendanceApiError` subclass for an error answer, or an
   * `AttendanceConnectionError` when no answer came after every retry.
   */
  async request<T>(method: HttpVerb, path: string, options: RawRequestOptions = {}): Promise<T> {
    const { response, text } = await this.#send(
      method,
      path,
      options,
      'application/json',
      async (answer) => ({
        response: answer,
        text: await answer.text(),
      }),
    )
    const parsed = parseJson(text)
    if (parsed.ok) return parsed.value as T
    throw new AttendanceApiError({
      status: response.status,
      type: 'api_error',
      message: `${method} ${path}: the API answered ${response.status} with a body that is not JSON`,
      requestId: response.headers.get('x-request-id') ?? undefined,
      headers: response.headers,
      body: text,
    })
  }

  /**
   * A GET whose answer is not JSON (a CSV), its body as a stream. Retried as `request` is, until the
   * answer's headers arrive: `timeoutMs` bounds the wait for them, not the download, which the
   * caller's `signal` can abort. Rejects like `request` for an error answer.
   */
  async stream(path: string, options: RawRequestOptions & { accept: string }): Promise<Download> {
    const response = await this.#send('GET', path, options, options.accept, async (answer) => answer)
    const total = Number(response.headers.get('x-total-count'))
    return {
      // Only a 204 or a 205 comes without a body: an empty download.
      body: response.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() }),
      headers: response.headers,
      totalRows: Number.isInteger(total) && total >= 0 ? total : undefined,
    }
  }

  #credentialHeaders(method: HttpVerb): Record<string, string> {
    const credentials = this.#credentials
    if ('apiKey' in credentials) return { authorization: `Bearer ${credentials.apiKey}` }
    const { mode, accountId, csrfToken } = credentials.session
    const headers: Record<string, string> = { 'attendance-mode': mode }
    if (accountId !== undefined) headers['attendance-account'] = accountId
    if (csrfToken !== undefined && method !== 'GET') headers['x-csrf-token'] = csrfToken
    return headers
  }

  /**
   * The one retry loop of every call: an attempt, then on 429, 5xx, 409 `idempotency_key_in_use` or no
   * answer another one after the backoff (or the answer's `Retry-After`), with the same `Idempotency-Key`,
   * up to `maxRetries`; the caller's abort stops it, neither retried nor wrapped. `take` reads a 2xx
   * answer within the attempt's `timeoutMs` (the whole body for `request`, nothing more for `stream`); an
   * error answer's body is read within it too.
   */
  async #send<T>(
    method: HttpVerb,
    path: string,
    options: RawRequestOptions,
    accept: string,
    take: (response: Response) => Promise<T>,
  ): Promise<T> {
    const url = `${this.baseUrl}${path}${queryString(options.query)}`
    const headers: Record<string, string> = { accept, ...this.#credentialHeaders(method) }
    if (USER_AGENT !== undefined) headers['user-agent'] = USER_AGENT
    let body: string | undefined
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers['content-type'] = 'application/json'
    }
    // Chosen once per call, so every retry of this call carries the same key.
    if (options.idempotent) headers['idempotency-key'] = options.idempotencyKey ?? newIdempotencyKey()
    const maxRetries = options.maxRetries ?? this.maxRetries
    const timeoutMs = options.timeoutMs ?? this.timeoutMs
    const callerSignal = options.signal
    // Called as a plain function: some fetch implementations refuse a foreign `this`.
    const fetchImpl = this.#fetch

    for (let attempt = 0; ; attempt++) {
      const retriesLeft = attempt < maxRetries
      const deadline = new AbortController()
      const timer = setTimeout(() => deadline.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
      const signal = callerSignal ? AbortSignal.any([callerSignal, deadline.signal]) : deadline.signal
      let response: Response
      let text: string
      try {
        response = await fetchImpl(url, { method, headers, body, signal })
        if (response.ok) return await take(response)
        text = await response.text()
      } catch (error) {
        // The caller's own abort is theirs to handle, never retried or wrapped.
        if (callerSignal?.aborted) throw callerSignal.reason
        if (retriesLeft) {
          await sleep(backoffMs(attempt), callerSignal)
          continue
        }
        const timedOut = deadline.signal.aborted
        const why = timedOut ? `timed out after ${timeoutMs} ms` : describe(error)
        throw new AttendanceConnectionError(
          `${method} ${path}: no answer from ${this.baseUrl} after ${attempt + 1} attempt(s): ${why}`,
          { cause: error, attempts: attempt + 1, timedOut },
        )
      } finally {
        clearTimeout(timer)
      }

      const parsed = parseJson(text)
      const error = AttendanceApiError.fromResponse(
        response.status,
        response.headers,
        parsed.ok ? parsed.value : text,
      )
      if (retriesLeft && isRetryable(error)) {
        await sleep(retryDelayMs(error, attempt), callerSignal)
        continue
      }
      throw error
    }
  }
}

/**
 * A random (version 4) UUID. `crypto.randomUUID` would do, but browsers offer it on HTTPS and
 * localhost only, and the console may be served over plain HTTP inside a network;
 * `crypto.getRandomValues` is there in every context, and in Node.js.
 */
function newIdempotencyKey(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40 // version 4
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80 // the RFC 9562 variant
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** 429, 5xx, and a keyed request whose first try is still running; never another 4xx. */
function isRetryable(error: AttendanceApiError): boolean {
  if (error.status === 429 || error.status >= 500) return true
  return error.status === 409 && error.code === 'idempotency_key_in_use'
}

/** Exponential backoff with jitter: 250–500 ms, 0.5–1 s, 1–2 s, … up to 4–8 s. */
function backoffMs(attempt: number): number {
  const ceiling = Math.min(MAX_RETRY_DELAY_MS, INITIAL_RETRY_DELAY_MS * 2 ** attempt)
  return ceiling * (0.5 + Math.random() * 0.5)
}

/** The backoff, or longer when the answer's `Retry-After` asks for it (up to a minute). */
function retryDelayMs(error: AttendanceApiError, attempt: number): number {
  const backoff = backoffMs(attempt)
  const retryAfter = retryAfterMs(error.headers.get('retry-after'))
  if (retryAfter === undefined || retryAfter > MAX_RETRY_AFTER_MS) return backoff
  return Math.max(backoff, retryAfter)
}

/** `Retry-After` as seconds or as an HTTP date, in milliseconds from now. */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === '') return { ok: true, value: undefined }
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return { ok: false }
  }
}

function queryString(query: object | undefined): string {
  if (query === undefined) return ''
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item))
  }
  const text = search.toString()
  return text === '' ? '' : `?${text}`
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  // undici puts the socket-level reason (ECONNREFUSED, ECONNRESET, …) in `cause`.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
  return `${error.message}${cause}`
}

function modeOf(apiKey: unknown): Mode {
  if (typeof apiKey !== 'string' || apiKey === '') throw new TypeError('apiKey is required')
  // A device key (`dk_…`) too: a kiosk calls its scans and its device through the same client.
  if (/^(sk|dk)_test_/.test(apiKey)) return 'test'
  if (/^(sk|dk)_live_/.test(apiKey)) return 'live'
  throw new TypeError('apiKey must start with sk_test_, sk_live_, dk_test_ or dk_live_')
}

/** `/v1/operators/op_123`, the id escaped; an empty id would silently address the collection instead. */
function pathOf(collection: string, id: string, suffix = ''): string {
  if (typeof id !== 'string' || id === '') throw new TypeError('id must be a non-empty string')
  return `${collection}/${encodeURIComponent(id)}${suffix}`
}

/** Every object of a list, page after page, following `next_cursor` while `has_more` is true. */
async function* paginate<Q extends { cursor?: string | undefined }, T>(
  list: (params: Q) => Promise<ListEnvelope<T>>,
  params: Q,
): AsyncGenerator<T, void, undefined> {
  let cursor = params.cursor
  for (;;) {
    const page = await list({ ...params, cursor })
    yield* page.data
    if (!page.has_more || page.next_cursor === null) return
    cursor = page.next_cursor
  }
}

abstract class Resource {
  // Private, so logging or serialising a resource neither loops back through the client nor shows the key.
  readonly #client: AttendanceClient

  constructor(client: AttendanceClient) {
    this.#client = client
  }

  protected request<T>(method: HttpVerb, path: string, options?: RawRequestOptions): Promise<T> {
    return this.#client.request<T>(method, path, options)
  }
}

export class Operators extends Resource {
  /** `POST /v1/operators` (idempotent). */
  create(params: OperatorCreateParams, options?: RequestOptions): Promise<Operator> {
    return this.request('POST', '/v1/operators', { ...options, body: params, idempotent: true })
  }
  /** `GET /v1/operators/{id}`. */
  retrieve(id: string, options?: RequestOptions): Promise<Operator> {
    return this.request('GET', pathOf('/v1/operators', id), options)
  }
  /** `PATCH /v1/operators/{id}`; `{ is_active: true }` reactivates. */
  update(id: string, params: OperatorUpdateParams, options?: RequestOptions): Promise<Operator> {
    return this.request('PATCH', pathOf('/v1/operators', id), { ...options, body: params })
  }
  /** `DELETE /v1/operators/{id}`: deactivates (`is_active: false`); past sessions are kept. */
  del(id: string, options?: RequestOptions): Promise<Operator> {
    return this.request('DELETE', pathOf('/v1/operators', id), options)
  }
  /** `GET /v1/operators`: one page, newest first. */
  list(params: OperatorListParams = {}, options?: RequestOptions): Promise<OperatorList> {
    return this.request('GET', '/v1/operators', { ...options, query: params })
  }
  /** Every operator matching `params`, across all pages. */
  iterate(params: OperatorListParams = {}, options?: RequestOptions): AsyncIterableIterator<Operator> {
    return paginate((page: OperatorListParams) => this.list(page, options), params)
  }
}

export class Locations extends Resource {
  create(params: LocationCreateParams, options?: RequestOptions): Promise<Location> {
    return this.request('POST', '/v1/locations', { ...options, body: params, idempotent: true })
  }
  retrieve(id: string, options?: RequestOptions): Promise<Location> {
    return this.request('GET', pathOf('/v1/locations', id), options)
  }
  update(id: string, params: LocationUpdateParams, options?: RequestOptions): Promise<Location> {
    return this.request('PATCH', pathOf('/v1/locations', id), { ...options, body: params })
  }
  del(id: string, options?: RequestOptions): Promise<DeletedObject> {
    return this.request('DELETE', pathOf('/v1/locations', id), options)
  }
  list(params: LocationListParams = {}, options?: RequestOptions): Promise<LocationList> {
    return this.request('GET', '/v1/locations', { ...options, query: params })
  }
  iterate(params: LocationListParams = {}, options?: RequestOptions): AsyncIterableIterator<Location> {
    return paginate((page: LocationListParams) => this.list(page, options), params)
  }
}

export class Devices extends Resource {
  create(params: DeviceCreateParams, options?: RequestOptions): Promise<Device> {
    return this.request('POST', '/v1/devices', { ...options, body: params, idempotent: true })
  }
  retrieve(id: string, options?: RequestOptions): Promise<Device> {
    return this.request('GET', pathOf('/v1/devices', id), options)
  }
  update(id: string, params: DeviceUpdateParams, options?: RequestOptions): Promise<Device> {
    return this.request('PATCH', pathOf('/v1/devices', id), { ...options, body: params })
  }
  del(id: string, options?: RequestOptions): Promise<DeletedObject> {
    return this.request('DELETE', pathOf('/v1/devices', id), options)
  }
  list(params: DeviceListParams = {}, options?: RequestOptions): Promise<DeviceList> {
    return this.request('GET', '/v1/devices', { ...options, query: params })
  }
  iterate(params: DeviceListParams = {}, options?: RequestOptions): AsyncIterableIterator<Device> {
    return paginate((page: DeviceListParams) => this.list(page, options), params)
  }
  /** `POST /v1/devices/{id}/pairing-codes`: a single-use code, valid 10 minutes; earlier unused ones are void. */
  createPairingCode(id: string, options?: RequestOptions): Promise<DevicePairingCode> {
    return this.request('POST', pathOf('/v1/devices', id, '/pairing-codes'), options)
  }
  /**
   * `POST /v1/device-pairings` (needs no key; 10 a minute per address): the device and its key, shown
   * once; the device's previous key is revoked. A wrong code: `invalid_pairing_code`.
   */
  pair(params: DevicePairParams, options?: RequestOptions): Promise<DevicePairing> {
    return this.request('POST', '/v1/device-pairings', { ...options, body: params })
  }
  /** `POST /v1/devices/{id}/unpair`: the device's key is revoked (refused within 5 s). */
  unpair(id: string, options?: RequestOptions): Promise<Device> {
    return this.request('POST', pathOf('/v1/devices', id, '/unpair'), options)
  }
  /** `GET /v1/devices/current`, with a device key only: its device, location, the clock and the PIN key. */
  current(options?: RequestOptions): Promise<CurrentDevice> {
    return this.request('GET', '/v1/devices/current', options)
  }
}

export class Sessions extends Resource {
  /** `POST /v1/sessions` (idempotent): a manual entry, flagged `manual_api_entry`, `total_hours` computed. */
  create(params: SessionCreateParams, options?: RequestOptions): Promise<Session> {
    return this.request('POST', '/v1/sessions', { ...options, body: params, idempotent: true })
  }
  retrieve(id: string, options?: RequestOptions): Promise<Session> {
    return this.request('GET', pathOf('/v1/sessions', id), options)
  }
  /** `PATCH /v1/sessions/{id}`: re-flagged `manual_api_edit`, `total_hours` recomputed. */
  update(id: string, params: SessionUpdateParams, options?: RequestOptions): Promise<Session> {
    return this.request('PATCH', pathOf('/v1/sessions', id), { ...options, body: params })
  }
  del(id: string, options?: RequestOptions): Promise<DeletedObject> {
    return this.request('DELETE', pathOf('/v1/sessions', id), options)
  }
  list(params: SessionListParams = {}, options?: RequestOptions): Promise<SessionList> {
    return this.request('GET', '/v1/sessions', { ...options, query: params })
  }
  iterate(params: SessionListParams = {}, options?: RequestOptions): AsyncIterableIterator<Session> {
    return paginate((page: SessionListParams) => this.list(page, options), params)
  }
  /**
   * `POST /v1/sessions/{id}/approve` (scope `sessions:approve`): `review_status` becomes `approved`; `note`
   * is optional. A session without a check-out: 409 `check_out_missing` (set it with `update` first).
   */
  approve(id: string, params: SessionApproveParams = {}, options?: RequestOptions): Promise<Session> {
    return this.request('POST', pathOf('/v1/sessions', id, '/approve'), { ...options, body: params })
  }
  /** `POST /v1/sessions/{id}/reject` (scope `sessions:approve`): `note` is required; it then counts for nothing. */
  reject(id: string, params: SessionRejectParams, options?: RequestOptions): Promise<Session> {
    return this.request('POST', pathOf('/v1/sessions', id, '/reject'), { ...options, body: params })
  }
  /** `GET /v1/sessions/{id}/revisions`: one page of the session's change history. */
  revisions(
    id: string,
    params: SessionRevisionListParams = {},
    options?: RequestOptions,
  ): Promise<SessionRevisionList> {
    return this.request('GET', pathOf('/v1/sessions', id, '/revisions'), { ...options, query: params })
  }
}

export class Scans extends Resource {
  /** `POST /v1/scans` (idempotent): a check-in or check-out at a device. */
  create(params: ScanCreateParams, options?: RequestOptions): Promise<Scan> {
    return this.request('POST', '/v1/scans', { ...options, body: params, idempotent: true })
  }
  retrieve(id: string, options?: RequestOptions): Promise<Scan> {
    return this.request('GET', pathOf('/v1/scans', id), options)
  }
  list(params: ScanListParams = {}, options?: RequestOptions): Promise<ScanList> {
    return this.request('GET', '/v1/scans', { ...options, query: params })
  }
  iterate(params: ScanListParams = {}, options?: RequestOptions): AsyncIterableIterator<Scan> {
    return paginate((page: ScanListParams) => this.list(page, options), params)
  }
}

export class WebhookEndpoints extends Resource {
  /** `POST /v1/webhook-endpoints` (idempotent). The answer's `secret` is shown only here: keep it. */
  create(params: WebhookEndpointCreateParams, options?: RequestOptions): Promise<WebhookEndpointWithSecret> {
    return this.request('POST', '/v1/webhook-endpoints', {
      ...options,
      body: params,
      idempotent: true,
    })
  }
  retrieve(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.request('GET', pathOf('/v1/webhook-endpoints', id), options)
  }
  /** `PATCH /v1/webhook-endpoints/{id}`; `{ status: 'enabled' }` re-enables an auto-disabled endpoint. */
  update(
    id: string,
    params: WebhookEndpointUpdateParams,
    options?: RequestOptions,
  ): Promise<WebhookEndpoint> {
    return this.request('PATCH', pathOf('/v1/webhook-endpoints', id), { ...options, body: params })
  }
  del(id: string, options?: RequestOptions): Promise<DeletedObject> {
    return this.request('DELETE', pathOf('/v1/webhook-endpoints', id), options)
  }
  list(params: WebhookEndpointListParams = {}, options?: RequestOptions): Promise<WebhookEndpointList> {
    return this.request('GET', '/v1/webhook-endpoints', { ...options, query: params })
  }
  iterate(
    params: WebhookEndpointListParams = {},
    options?: RequestOptions,
  ): AsyncIterableIterator<WebhookEndpoint> {
    return paginate((page: WebhookEndpointListParams) => this.list(page, options), params)
  }
  /**
   * `POST /v1/webhook-endpoints/{id}/rotate-secret` (idempotent): the new `secret`, returned once; the previous
   * one stays valid for `grace_hours` (default 24).
   */
  rotateSecret(
    id: string,
    params: WebhookEndpointRotateSecretParams = {},
    options?: RequestOptions,
  ): Promise<WebhookEndpointRotated> {
    return this.request('POST', pathOf('/v1/webhook-endpoints', id, '/rotate-secret'), {
      ...options,
      body: params,
      idempotent: true,
    })
  }
  /** `POST /v1/webhook-endpoints/{id}/send-test` (idempotent): a `webhook_endpoint.test` delivery to it alone. */
  sendTest(id: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.request('POST', pathOf('/v1/webhook-endpoints', id, '/send-test'), {
      ...options,
      idempotent: true,
    })
  }
  /**
   * `POST /v1/webhook-endpoints/{id}/recover`: after an outage, its failed deliveries of the window
   * `[since, until)` go back to pending (same ids) and the deliveries it missed while disabled are
   * created. Safe to call again: nothing that succeeded is sent twice.
   */
  recover(
    id: string,
    params: WebhookEndpointRecoverParams,
    options?: RequestOptions,
  ): Promise<WebhookRecovery> {
    return this.request('POST', pathOf('/v1/webhook-endpoints', id, '/recover'), { ...options, body: params })
  }
}

export class WebhookDeliveries extends Resource {
  retrieve(id: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.request('GET', pathOf('/v1/webhook-deliveries', id), options)
  }
  list(params: WebhookDeliveryListParams = {}, options?: RequestOptions): Promise<WebhookDeliveryList> {
    return this.request('GET', '/v1/webhook-deliveries', { ...options, query: params })
  }
  iterate(
    params: WebhookDeliveryListParams = {},
    options?: RequestOptions,
  ): AsyncIterableIterator<WebhookDelivery> {
    return paginate((page: WebhookDeliveryListParams) => this.list(page, options), params)
  }
  /** `POST /v1/webhook-deliveries/{id}/resend`: one more attempt of the same delivery, now. */
  resend(id: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.request('POST', pathOf('/v1/webhook-deliveries', id, '/resend'), options)
  }
}

export class Events extends Resource {
  retrieve(id: string, options?: RequestOptions): Promise<Event> {
    return this.request('GET', pathOf('/v1/events', id), options)
  }
  list(params: EventListParams = {}, options?: RequestOptions): Promise<EventList> {
    return this.request('GET', '/v1/events', { ...options, query: params })
  }
  iterate(params: EventListParams = {}, options?: RequestOptions): AsyncIterableIterator<Event> {
    return paginate((page: EventListParams) => this.list(page, options), params)
  }
}

export class PayPeriods extends Resource {
  /** `POST /v1/pay-periods` (idempotent): inclusive dates, at most 62 days, not overlapping another period. */
  create(params: PayPeriodCreateParams, options?: RequestOptions): Promise<PayPeriod> {
    return this.request('POST', '/v1/pay-periods', { ...options, body: params, idempotent: true })
  }
  retrieve(id: string, options?: RequestOptions): Promise<PayPeriod> {
    return this.request('GET', pathOf('/v1/pay-periods', id), options)
  }
  list(params: PayPeriodListParams = {}, options?: RequestOptions): Promise<PayPeriodList> {
    return this.request('GET', '/v1/pay-periods', { ...options, query: params })
  }
  iterate(params: PayPeriodListParams = {}, options?: RequestOptions): AsyncIterableIterator<PayPeriod> {
    return paginate((page: PayPeriodListParams) => this.list(page, options), params)
  }
  /**
   * `POST /v1/pay-periods/{id}/close`: 409 `period_not_over` until the day after `end_date` has begun in
   * every zone of the account's locations; 409 `pending_reviews` while a session in it awaits review, is
   * open or lacks a check-out; afterwards its sessions are frozen (409 `period_closed`). Scopes
   * `timesheets:write` and `sessions:approve`.
   */
  close(id: string, options?: RequestOptions): Promise<PayPeriod> {
    return this.request('POST', pathOf('/v1/pay-periods', id, '/close'), options)
  }
  /** `POST /v1/pay-periods/{id}/reopen`: its sessions can be changed again. */
  reopen(id: string, options?: RequestOptions): Promise<PayPeriod> {
    return this.request('POST', pathOf('/v1/pay-periods', id, '/reopen'), options)
  }
}

export class PayRules extends Resource {
  /**
   * `POST /v1/pay-rules` (idempotent): how timesheets round, deduct breaks and split overtime; terms left out
   * take their defaults. `is_default: true` unsets the previous default. Scope `timesheets:write`.
   */
  create(params: PayRuleCreateParams, options?: RequestOptions): Promise<PayRule> {
    return this.request('POST', '/v1/pay-rules', { ...options, body: params, idempotent: true })
  }
  retrieve(id: string, options?: RequestOptions): Promise<PayRule> {
    return this.request('GET', pathOf('/v1/pay-rules', id), options)
  }
  /** `PATCH /v1/pay-rules/{id}`: `rounding` and `overtime` change the fields they name, `breaks` is replaced. */
  update(id: string, params: PayRuleUpdateParams, options?: RequestOptions): Promise<PayRule> {
    return this.request('PATCH', pathOf('/v1/pay-rules', id), { ...options, body: params })
  }
  /** `DELETE /v1/pay-rules/{id}`: 409 `pay_rule_in_use` while an operator has the rule. */
  del(id: string, options?: RequestOptions): Promise<DeletedObject> {
    return this.request('DELETE', pathOf('/v1/pay-rules', id), options)
  }
  list(params: PayRuleListParams = {}, options?: RequestOptions): Promise<PayRuleList> {
    return this.request('GET', '/v1/pay-rules', { ...options, query: params })
  }
  iterate(params: PayRuleListParams = {}, options?: RequestOptions): AsyncIterableIterator<PayRule> {
    return paginate((page: PayRuleListParams) => this.list(page, options), params)
  }
}

export class Timesheets extends Resource {
  readonly #client: AttendanceClient

  constructor(client: AttendanceClient) {
    super(client)
    this.#client = client
  }

  /** `GET /v1/timesheets`: one page of hours per operator and work date (or week), by operator_ident then date. */
  list(params: TimesheetListParams, options?: RequestOptions): Promise<TimesheetList> {
    return this.request('GET', '/v1/timesheets', { ...options, query: params })
  }
  /** Every entry of the timesheet, across all pages. */
  iterate(params: TimesheetListParams, options?: RequestOptions): AsyncIterableIterator<TimesheetEntry> {
    return paginate((page: TimesheetListParams) => this.list(page, options), params)
  }
  /**
   * `GET /v1/timesheets` with `Accept: text/csv`: the whole timesheet as CSV, streamed (pipe its `body` to a
   * file; nothing is held in memory). `totalRows` is the number of data rows announced.
   */
  csv(params: TimesheetCsvParams, options?: RequestOptions): Promise<Download> {
    return this.#client.stream('/v1/timesheets', { ...options, query: params, accept: 'text/csv' })
  }
}

/**
 * A person's sign-in (decisions.md, "People and access"): for a client made with `session`, in a
 * browser that keeps the service's HttpOnly cookie, which these answers set and clear.
 */
export class Auth extends Resource {
  /** `GET /v1/auth/methods` (no key, no cookie): whether the service offers single sign-on too. */
  methods(options?: RequestOptions): Promise<AuthMethods> {
    return this.request('GET', '/v1/auth/methods', options)
  }
  /** `POST /v1/auth/sign-in`: the person, their accounts and the session's CSRF token; sets the cookie. */
  signIn(params: SignInParams, options?: RequestOptions): Promise<AuthSession> {
    return this.request('POST', '/v1/auth/sign-in', { ...options, body: params })
  }
  /** `GET /v1/auth/session`: the signed-in person, as `signIn` answered (the same CSRF token). */
  session(options?: RequestOptions): Promise<AuthSession> {
    return this.request('GET', '/v1/auth/session', options)
  }
  /** `POST /v1/auth/sign-out`: ends this session and clears its cookie. */
  signOut(options?: RequestOptions): Promise<void> {
    return this.request('POST', '/v1/auth/sign-out', options)
  }
  /** `POST /v1/auth/password`: a new password; the person's other sessions end. */
  changePassword(params: ChangePasswordParams, options?: RequestOptions): Promise<void> {
    return this.request('POST', '/v1/auth/password', { ...options, body: params })
  }
  /** `POST /v1/auth/forgot-password`: 202 whatever the e-mail; a link goes to it when the service sends e-mail. */
  forgotPassword(params: ForgotPasswordParams, options?: RequestOptions): Promise<void> {
    return this.request('POST', '/v1/auth/forgot-password', { ...options, body: params })
  }
  /** `POST /v1/auth/reset-password`: the link's token sets the password; every session of the person ends. */
  resetPassword(params: ResetPasswordParams, options?: RequestOptions): Promise<void> {
    return this.request('POST', '/v1/auth/reset-password', { ...options, body: params })
  }
  /** `POST /v1/auth/accept-invite`: the invitation's token activates the membership and signs in. */
  acceptInvite(params: AcceptInviteParams, options?: RequestOptions): Promise<AuthSession> {
    return this.request('POST', '/v1/auth/accept-invite', { ...options, body: params })
  }
}

/**
 * The people of the request's account (scope `users:read`/`users:write`, which only a person's role
 * holds: an owner's), so for a client made with `session`.
 */
export class Users extends Resource {
  /** `POST /v1/users` (idempotent): an invited person; the answer alone carries `invite_url`. */
  create(params: UserCreateParams, options?: RequestOptions): Promise<UserWithInviteUrl> {
    return this.request('POST', '/v1/users', { ...options, body: params, idempotent: true })
  }
  retrieve(id: string, options?: RequestOptions): Promise<User> {
    return this.request('GET', pathOf('/v1/users', id), options)
  }
  /** `PATCH /v1/users/{id}`: name, role, sites, worker record (never one's own role, sites or record). */
  update(id: string, params: UserUpdateParams, options?: RequestOptions): Promise<User> {
    return this.request('PATCH', pathOf('/v1/users', id), { ...options, body: params })
  }
  list(params: UserListParams = {}, options?: RequestOptions): Promise<UserList> {
    return this.request('GET', '/v1/users', { ...options, query: params })
  }
  iterate(params: UserListParams = {}, options?: RequestOptions): AsyncIterableIterator<User> {
    return paginate((page: UserListParams) => this.list(page, options), params)
  }
  deactivate(id: string, options?: RequestOptions): Promise<User> {
    return this.request('POST', pathOf('/v1/users', id, '/deactivate'), options)
  }
  reactivate(id: string, options?: RequestOptions): Promise<User> {
    return this.request('POST', pathOf('/v1/users', id, '/reactivate'), options)
  }
  /** `POST /v1/users/{id}/invite`: a new invitation link for an invited person; the earlier one stops working. */
  invite(id: string, options?: RequestOptions): Promise<UserWithInviteUrl> {
    return this.request('POST', pathOf('/v1/users', id, '/invite'), options)
  }
  /** `POST /v1/users/{id}/sign-out-everywhere`: every session of the person ends. */
  signOutEverywhere(id: string, options?: RequestOptions): Promise<User> {
    return this.request('POST', pathOf('/v1/users', id, '/sign-out-everywhere'), options)
  }
}

/** The account's API keys, made and revoked by a person (scope `keys:write`, an owner's). */
export class ApiKeys extends Resource {
  /** `POST /v1/api-keys` (idempotent): the key with its `secret`, shown in this answer only. */
  create(params: ApiKeyCreateParams, options?: RequestOptions): Promise<CreatedApiKey> {
    return this.request('POST', '/v1/api-keys', { ...options, body: params, idempotent: true })
  }
  retrieve(id: string, options?: RequestOptions): Promise<ApiKey> {
    return this.request('GET', pathOf('/v1/api-keys', id), options)
  }
  list(params: ApiKeyListParams = {}, options?: RequestOptions): Promise<ApiKeyList> {
    return this.request('GET', '/v1/api-keys', { ...options, query: params })
  }
  iterate(params: ApiKeyListParams = {}, options?: RequestOptions): AsyncIterableIterator<ApiKey> {
    return paginate((page: ApiKeyListParams) => this.list(page, options), params)
  }
  /** `POST /v1/api-keys/{id}/revoke`: refused by every process within 5 s. */
  revoke(id: string, options?: RequestOptions): Promise<ApiKey> {
    return this.request('POST', pathOf('/v1/api-keys', id, '/revoke'), options)
  }
}

/** `GET /v1/audit-log` (owners): who did what to people and keys, newest first. */
export class AuditLog extends Resource {
  list(params: AuditLogListParams = {}, options?: RequestOptions): Promise<AuditLogList> {
    return this.request('GET', '/v1/audit-log', { ...options, query: params })
  }
  iterate(params: AuditLogListParams = {}, options?: RequestOptions): AsyncIterableIterator<AuditEntry> {
    return paginate((page: AuditLogListParams) => this.list(page, options), params)
  }
}
