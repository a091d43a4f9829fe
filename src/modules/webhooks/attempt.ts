import { performance } from 'node:perf_hooks'
import { type Agent, request } from 'undici'
import { clock } from '../../lib/clock.js'
import { isSuccessStatus } from './policy.js'
import { signPayload } from './signature.js'
import { findUnsafeUrlError } from './url-policy.js'

export const USER_AGENT = 'AttendanceService-Webhooks/1.0'
/** How much of a receiver's answer is kept in the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 2048

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
  /** The receiver's Retry-After in ms, if it sent one; the policy decides whether it counts. */
  retryAfterMs: number | null
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
  const attemptedAt = clock.now()
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
        'x-service-signature': signPayload(attempt.body, attempt.secrets, Math.floor(clock.now() / 1000)),
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
      error: isSuccessStatus(statusCode) ? null : `HTTP ${statusCode}`,
      responseExcerpt: excerpt,
      retryAfterMs: parseRetryAfter(response.headers['retry-after']),
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
  return Number.isNaN(date) ? null : Math.max(0, date - clock.now())
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
