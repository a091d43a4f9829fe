import { randomBytes } from 'node:crypto'
// One implementation of the HMAC for both sides: receivers verify with `verifyWebhook` from the same
// module of the client package (@attendance/client).
import { computeSignature } from '../../../packages/client/src/webhooks.js'
import type { EndpointRow } from './repository.js'

const SECRET_PREFIX = 'whsec_'
// 32 bytes is 256 bits, above the 192 the secret needs; base64url keeps it free of characters that
// need quoting in shells, env files and URLs.
const SECRET_BYTES = 32

export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`
}

/**
 * The `X-Service-Signature` value: `t=<timestamp>,v1=<hex>` with one `v1` per secret, in the order given
 * (during a rotation: new secret first, then the previous one).
 *
 * The HMAC key is the UTF-8 bytes of the secret string exactly as handed out, `whsec_` prefix included,
 * because that is what Stripe-compatible verifiers do with a `whsec_…` secret (docs/webhooks.md).
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

/** The secrets a delivery is signed with now: the current one, and the previous during its grace. */
export function signingSecrets(
  endpoint: Pick<EndpointRow, 'secret' | 'previous_secret' | 'previous_secret_expires_at'>,
  now: number,
): string[] {
  const previousValid =
    endpoint.previous_secret !== null &&
    endpoint.previous_secret_expires_at !== null &&
    endpoint.previous_secret_expires_at > now
  return previousValid && endpoint.previous_secret
    ? [endpoint.secret, endpoint.previous_secret]
    : [endpoint.secret]
}
