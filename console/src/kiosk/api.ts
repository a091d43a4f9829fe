import type { components } from '../../../packages/client/src/generated/schema.js'
import type { QueuedScan } from './storage.js'

type Schemas = components['schemas']
export type CurrentDevice = Schemas['CurrentDevice']
export type DevicePairing = Schemas['DevicePairing']
export type Scan = Schemas['Scan']
/** An error of the API's envelope (also a refused item's slot in a batch's answer). */
export interface ApiErrorBody {
  type: string
  code?: string
  message: string
  param?: string
}

/** A scan that cannot be sent within this is saved in the queue instead (the spec: 5 s). */
export const SEND_TIMEOUT_MS = 5_000

/** The service answered with an error of its envelope. */
export class KioskApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
    /** `Retry-After` in seconds, when the answer carried one (a 429: rate limit, PIN lockout). */
    readonly retryAfterSeconds?: number,
  ) {
    super(body.message)
  }
}

/** No answer: the network is down, the service unreachable, or it did not answer in time. */
export class Unreachable extends Error {}

/**
 * One request to the service that served the page, with the device key when there is one. The
 * kiosk uses its own small fetch rather than the typed client: a device key may call three routes,
 * and every failure must be told apart as "no answer" (queue the scan) or "refused" (say why).
 */
async function call<T>(
  method: 'GET' | 'POST',
  path: string,
  key: string | undefined,
  body?: unknown,
  timeoutMs = SEND_TIMEOUT_MS,
): Promise<T> {
  const headers: Record<string, string> = {}
  if (key) headers.authorization = `Bearer ${key}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  let response: Response
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      // Answers carry the account's data: kept out of the HTTP cache, and no cookie goes with the key.
      cache: 'no-store',
      credentials: 'omit',
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch {
    throw new Unreachable()
  }
  const text = await response.text().catch(() => {
    throw new Unreachable()
  })
  if (response.ok) return JSON.parse(text) as T
  let error: ApiErrorBody
  try {
    error = (JSON.parse(text) as { error: ApiErrorBody }).error
  } catch {
    // Not the service's envelope (a proxy's page): as good as no answer.
    throw new Unreachable()
  }
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN)
  throw new KioskApiError(response.status, error, Number.isFinite(retryAfter) ? retryAfter : undefined)
}

/**
 * Nothing waits on these as a worker waits on a scan: given longer than a scan's 5 s, since a pairing
 * given up on after the service used its code would leave the site lead needing a new code, and the
 * account's first `GET /v1/devices/current` makes its PIN key (an RSA key pair: seconds on a busy host).
 */
const SETUP_TIMEOUT_MS = 30_000

export const pair = (code: string) =>
  call<DevicePairing>('POST', '/v1/device-pairings', undefined, { code }, SETUP_TIMEOUT_MS)

export const currentDevice = (key: string) =>
  call<CurrentDevice>('GET', '/v1/devices/current', key, undefined, SETUP_TIMEOUT_MS)

/** A scan sent at once; `pin` only travels in this request, it is never kept (`pin.ts` seals it). */
export const sendScan = (key: string, scan: QueuedScan, pin: string | undefined) =>
  call<Scan>('POST', '/v1/scans', key, {
    device_id: scan.device_id,
    operator_ident: scan.operator_ident,
    direction: scan.direction,
    client_scan_id: scan.client_scan_id,
    time: scan.time,
    pin,
  })

export interface BatchAnswer {
  data: Array<Scan | ApiErrorBody>
}

/** A full batch takes the service seconds (docs/performance.md): it is given far longer than a scan. */
const BATCH_TIMEOUT_MS = 60_000

export const sendBatch = (key: string, scans: QueuedScan[], sentAt: string) =>
  call<BatchAnswer>(
    'POST',
    '/v1/scans/batch',
    key,
    { scans: scans.map(({ seq: _seq, ...scan }) => scan), sent_at: sentAt },
    BATCH_TIMEOUT_MS,
  )
