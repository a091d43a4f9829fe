import { performance } from 'node:perf_hooks'
import { type Agent, request } from 'undici'
import { signPayload } from './signature.js'
import { findUnsafeUrlError } from './url-policy.js'

export const USER_AGENT = 'AttendanceService-Webhooks/1.0'
/** How much of a receiver's answer is kept in the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 2048
export const MAX_SCHEDULED_ATTEMPTS = 6

export interface AttemptRequest {
  url: string
  deliveryId: string
  eventType: string
  /** The event envelope exactly as stored: these bytes are signed and sent. */
  body: string
  secrets: string[]
}

export interface AttemptOutcome {
  attemptedAt: number
  statusCode: number | null
  durationMs: number
  error: string | null
  responseExcerpt: string | null
  /** The receiver's Retry-After in ms, on 429 and 503 only. */
  retryAfterMs: number | null
}

export function isSuccess(outcome: AttemptOutcome): boolean {
  return outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300
}

/**
 * One POST of an event to a receiver. Never throws: every outcome (status, timeout, refused address,
 * connection error) comes back as data to be recorded as an attempt. Redirects are not followed
 * (undici's `request` has no redirect handling unless asked), so a 3xx is a failure.
 */
export async function sendAttempt(
  dispatcher: Agent,
  attempt: AttemptRequest,
  timeoutMs: number,
): Promise<AttemptOutcome> {
  const attemptedAt = Date.now()
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  try {
    const response = await request(attempt.url, {
      method: 'POST',
      dispatcher,
      body: attempt.body,
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-service-signature': signPayload(attempt.body, attempt.secrets, Math.floor(Date.now() / 1000)),
        'x-service-id': attempt.deliveryId,
        'x-service-event': attempt.eventType,
      },
      signal: AbortSignal.timeout(timeoutMs),
    })
    const excerpt = await readExcerpt(response.body)
    const statusCode = response.statusCode
    return {
      attemptedAt,
      statusCode,
      durationMs: elapsed(),
      error: statusCode >= 200 && statusCode < 300 ? null : `HTTP ${statusCode}`,
      responseExcerpt: excerpt,
      retryAfterMs:
        statusCode === 429 || statusCode === 503 ? parseRetryAfter(response.headers['retry-after']) : null,
    }
  } catch (error) {
    return {
      attemptedAt,
      statusCode: null,
      durationMs: elapsed(),
      error: describeFailure(error, timeoutMs),
      responseExcerpt: null,
      retryAfterMs: null,
    }
  }
}

/** Reads at most RESPONSE_EXCERPT_BYTES, then drops the rest so the connection is released. */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | null> {
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body) {
      chunks.push(chunk)
      size += chunk.length
      if (size >= RESPONSE_EXCERPT_BYTES) break
    }
  } finally {
    body.destroy()
  }
  if (size === 0) return null
  return Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8')
}

function parseRetryAfter(value: string | string[] | undefined): number | null {
  const text = Array.isArray(value) ? value[0] : value
  if (!text) return null
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000
  const date = Date.parse(text)
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now())
}

function describeFailure(error: unknown, timeoutMs: number): string {
  const unsafe = findUnsafeUrlError(error)
  if (unsafe) return `refused: ${unsafe.message}`
  const name = (error as { name?: string })?.name
  if (name === 'TimeoutError' || name === 'AbortError') return `timeout after ${timeoutMs} ms`
  const code = (error as { code?: string })?.code
  const message = error instanceof Error ? error.message : String(error)
  return code ? `${code}: ${message}` : message
}

/**
 * Delay before scheduled attempt n+1 after n failed attempts (n = 1…5): 60 s × 60^((n−1)/4), so
 * 60 s, ~2.8 min, ~7.7 min, ~21.5 min, 60 min — exponential from a minute to an hour — with ±10 %
 * jitter so many failing deliveries do not retry in lockstep, all multiplied by `scale`
 * (WEBHOOK_BACKOFF_SCALE). A receiver's longer Retry-After wins, capped at 1 h × scale.
 */
export function nextDelayMs(
  failedAttempts: number,
  scale: number,
  retryAfterMs: number | null,
  random = Math.random,
): number {
  const base = 60_000 * 60 ** ((Math.min(failedAttempts, 5) - 1) / 4)
  const jittered = base * (0.9 + 0.2 * random()) * scale
  if (retryAfterMs === null) return Math.round(jittered)
  return Math.round(Math.min(Math.max(jittered, retryAfterMs), 3_600_000 * scale))
}
