import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Event } from './types.js'

/**
 * Webhook signatures, for receivers. This is the one implementation: the service signs with
 * `computeSignature` (its `signPayload` builds the header from it) and its tests verify with `verifyWebhook`.
 *
 * The header is `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`, the HMAC-SHA256 of `<t>.<raw body>`
 * keyed by the UTF-8 bytes of the endpoint's `whsec_…` secret, prefix included (the Stripe scheme).
 */

/** The spec's window: a delivery older or newer than five minutes is refused, so a captured one cannot be replayed. */
export const DEFAULT_TOLERANCE_SECONDS = 300

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/
const UNIX_SECONDS = /^\d{1,15}$/

export type WebhookVerificationReason =
  | 'malformed_header'
  | 'no_matching_signature'
  | 'timestamp_outside_tolerance'

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError'
  readonly reason: WebhookVerificationReason

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message)
    this.reason = reason
  }
}

export interface VerifyWebhookOptions {
  /** Largest allowed |now − t| in seconds (default 300). */
  toleranceSeconds?: number
  /** Current time in unix seconds; tests pin it. */
  now?: number
}

/** An event as delivered to a webhook endpoint: the same envelope `GET /v1/events/{id}` answers. */
export type WebhookEvent = Event

/**
 * Checks a received delivery the way the spec tells receivers to: any `v1` matching any secret, compared in
 * constant time, and a timestamp within the tolerance. Returns normally when valid, throws
 * `WebhookVerificationError` otherwise.
 *
 * Pass the raw body exactly as received (do not re-serialise parsed JSON). A `Buffer` body is signed as raw
 * bytes, never decoded: decoding invalid UTF-8 would replace bytes and turn a tampered body into one that
 * verifies, or a genuine one into one that does not. During a secret rotation pass both secrets.
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  signatureHeader: string,
  secrets: string | string[],
  options: VerifyWebhookOptions = {},
): void {
  const secretList = typeof secrets === 'string' ? [secrets] : secrets
  // A receiver with no secret configured is a set-up bug, not a bad delivery; say so loudly.
  if (secretList.length === 0) throw new TypeError('verifyWebhook needs at least one secret')
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const now = options.now ?? Math.floor(Date.now() / 1000)

  const { timestamp, signatures } = parseSignatureHeader(signatureHeader)

  let matched = false
  for (const secret of secretList) {
    const expected = computeSignature(secret, timestamp, rawBody)
    for (const candidate of signatures) {
      // No early exit: every pair is compared, so timing says nothing about which one matched.
      // Both buffers are 32 bytes (the header parser only admits 64 hex digits), as timingSafeEqual requires.
      if (timingSafeEqual(expected, candidate)) matched = true
    }
  }
  // Signature before timestamp, as Stripe's verifier does: a forged header is reported as forged, however old.
  if (!matched) {
    throw new WebhookVerificationError(
      'no_matching_signature',
      'No v1 signature in the header matches the expected signature for this payload',
    )
  }
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_outside_tolerance',
      `Signature timestamp ${timestamp} is more than ${tolerance} seconds from now (${now})`,
    )
  }
}

/**
 * `verifyWebhook`, then the body parsed as the event envelope. De-duplicate on the returned event's `id`:
 * a delivery may arrive more than once.
 */
export function constructWebhookEvent(
  rawBody: string | Buffer,
  signatureHeader: string,
  secrets: string | string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  verifyWebhook(rawBody, signatureHeader, secrets, options)
  return JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8')) as WebhookEvent
}

/** The raw HMAC-SHA256 of `<timestamp>.<rawBody>` keyed by the UTF-8 bytes of `secret` (32 bytes). */
export function computeSignature(secret: string, timestamp: number, rawBody: string | Buffer): Buffer {
  // Two updates equal one HMAC over `${t}.${body}`, without copying or decoding a Buffer body.
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${timestamp}.`, 'utf8')
    .update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
    .digest()
}

function parseSignatureHeader(header: string): { timestamp: number; signatures: Buffer[] } {
  const malformed = (why: string) =>
    new WebhookVerificationError('malformed_header', `Malformed signature header: ${why}`)
  if (typeof header !== 'string' || header.trim() === '') throw malformed('empty')

  let timestamp: number | undefined
  const signatures: Buffer[] = []
  for (const item of header.split(',')) {
    const part = item.trim()
    // Tolerates `t=1, v1=…` and a stray trailing comma; neither changes what was signed.
    if (part === '') continue
    const eq = part.indexOf('=')
    if (eq <= 0) throw malformed(`"${truncate(part)}" is not key=value`)
    const key = part.slice(0, eq)
    const value = part.slice(eq + 1)
    if (key === 't') {
      if (timestamp !== undefined) throw malformed('more than one t=')
      if (!UNIX_SECONDS.test(value)) throw malformed('t= is not a unix timestamp in seconds')
      timestamp = Number(value)
    } else if (key === 'v1') {
      // Buffer.from(hex) silently stops at the first non-hex digit, so the shape is checked first: a
      // truncated value must never compare as a shorter, different signature.
      if (!HEX_SHA256.test(value)) throw malformed('v1= is not 64 hex digits')
      signatures.push(Buffer.from(value, 'hex'))
    }
    // Other schemes (v0=, future v2=) are ignored so senders can add them without breaking receivers.
  }
  if (timestamp === undefined) throw malformed('no t=')
  if (signatures.length === 0) throw malformed('no v1=')
  return { timestamp, signatures }
}

function truncate(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text
}
