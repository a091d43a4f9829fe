import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** The spec's window: a delivery older or newer than five minutes is refused, so a captured one cannot be replayed. */
export const DEFAULT_TOLERANCE_SECONDS = 300

const SECRET_PREFIX = 'whsec_'
// 32 bytes is 256 bits, above the 192 the secret needs; base64url keeps it free of characters that
// need quoting in shells, env files and URLs.
const SECRET_BYTES = 32
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

export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`
}

/**
 * The `X-Service-Signature` value: `t=<timestamp>,v1=<hex>` with one `v1` per secret, in the order given
 * (during a rotation: new secret first, then the previous one).
 *
 * The HMAC key is the UTF-8 bytes of the secret string exactly as handed out, `whsec_` prefix included,
 * because that is what Stripe-compatible verifiers do with a `whsec_…` secret (decisions.md).
 */
export function signPayload(rawBody: string, secrets: string[], timestamp: number): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`timestamp must be a non-negative whole number of unix seconds (got ${timestamp})`)
  }
  if (secrets.length === 0) throw new RangeError('signPayload needs at least one secret')
  const parts = [`t=${timestamp}`]
  for (const secret of secrets)
    parts.push(`v1=${computeSignature(secret, timestamp, rawBody).toString('hex')}`)
  return parts.join(',')
}

/**
 * Checks a received delivery the way the spec tells receivers to: any `v1` matching any secret, compared in
 * constant time, and a timestamp within the tolerance. Returns normally when valid, throws
 * `WebhookVerificationError` otherwise.
 *
 * A `Buffer` body is signed as raw bytes, never decoded: decoding invalid UTF-8 would replace bytes and turn
 * a tampered body into one that verifies, or a genuine one into one that does not.
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

function computeSignature(secret: string, timestamp: number, rawBody: string | Buffer): Buffer {
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
