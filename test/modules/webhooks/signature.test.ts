import { createHmac } from 'node:crypto'
import { Stripe } from 'stripe'
import { describe, expect, it } from 'vitest'
import {
  verifyWebhook,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from '../../../packages/client/src/webhooks.js'
import {
  generateSigningSecret,
  signingSecrets,
  signPayload,
} from '../../../src/modules/webhooks/signature.js'

const T = 1_750_000_000
const BODY = JSON.stringify({
  id: 'evt_01J0000000000000000000000',
  object: 'event',
  type: 'session.completed',
  data: { object: { object: 'session', id: 'ses_1', notes: 'café ☕ – ünïcödé' } },
})
const SECRET_A = 'whsec_test_secret_a_0123456789abcdef'
const SECRET_B = 'whsec_test_secret_b_fedcba9876543210'

function reasonOf(fn: () => void): WebhookVerificationReason | 'did_not_throw' {
  try {
    fn()
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason
    throw error
  }
  return 'did_not_throw'
}

/** Independent reference: the spec's recipe written out with nothing but node:crypto. */
function referenceHex(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')
}

describe('generateSigningSecret', () => {
  it('is whsec_ followed by at least 192 bits of base64url randomness, different every time', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => generateSigningSecret()))
    expect(secrets.size).toBe(50)
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]+$/)
      const random = Buffer.from(secret.slice('whsec_'.length), 'base64url')
      expect(random.length * 8).toBeGreaterThanOrEqual(192)
    }
  })
})

describe('signingSecrets', () => {
  it('is the current secret, then the previous one until its grace ends (exclusive)', () => {
    const rotated = { secret: SECRET_B, previous_secret: SECRET_A, previous_secret_expires_at: T + 1 }
    expect(signingSecrets(rotated, T)).toEqual([SECRET_B, SECRET_A])
    expect(signingSecrets(rotated, T + 1)).toEqual([SECRET_B])
    expect(
      signingSecrets({ secret: SECRET_A, previous_secret: null, previous_secret_expires_at: null }, T),
    ).toEqual([SECRET_A])
  })
})

describe('signPayload', () => {
  it('matches a plain HMAC-SHA256 over "<t>.<body>" keyed by the whole whsec_ string', () => {
    expect(signPayload(BODY, [SECRET_A], T)).toBe(`t=${T},v1=${referenceHex(SECRET_A, T, BODY)}`)
  })

  it('keys by the UTF-8 bytes of the secret, not by a decoding of what follows whsec_', () => {
    const secret = 'whsec_aGVsbG8='
    const decodedKey = Buffer.from('aGVsbG8=', 'base64')
    const header = signPayload('{}', [secret], T)
    expect(header).toBe(
      `t=${T},v1=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${T}.{}`).digest('hex')}`,
    )
    expect(header).not.toContain(createHmac('sha256', decodedKey).update(`${T}.{}`).digest('hex'))
  })

  it('emits one v1 per secret, in the order given', () => {
    expect(signPayload(BODY, [SECRET_A, SECRET_B], T)).toBe(
      `t=${T},v1=${referenceHex(SECRET_A, T, BODY)},v1=${referenceHex(SECRET_B, T, BODY)}`,
    )
    expect(signPayload(BODY, [SECRET_B, SECRET_A], T)).toBe(
      `t=${T},v1=${referenceHex(SECRET_B, T, BODY)},v1=${referenceHex(SECRET_A, T, BODY)}`,
    )
  })

  it('refuses an empty secret list and a timestamp that is not whole unix seconds', () => {
    expect(() => signPayload(BODY, [], T)).toThrow(RangeError)
    expect(() => signPayload(BODY, [SECRET_A], Date.now() / 1000 + 0.5)).toThrow(RangeError)
    expect(() => signPayload(BODY, [SECRET_A], -1)).toThrow(RangeError)
  })
})

describe('verifyWebhook', () => {
  const sign = (body = BODY, secrets = [SECRET_A], t = T) => signPayload(body, secrets, t)

  it('accepts what signPayload produced (string and Buffer bodies)', () => {
    expect(() => verifyWebhook(BODY, sign(), SECRET_A, { now: T })).not.toThrow()
    expect(() => verifyWebhook(Buffer.from(BODY, 'utf8'), sign(), [SECRET_A], { now: T })).not.toThrow()
  })

  it('verifies a Buffer body as raw bytes, without decoding it', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) // not valid UTF-8
    const header = `t=${T},v1=${createHmac('sha256', SECRET_A).update(`${T}.`).update(bytes).digest('hex')}`
    expect(() => verifyWebhook(bytes, header, SECRET_A, { now: T })).not.toThrow()
    // Decoding would map both invalid bytes to U+FFFD; the signature of that string must not pass.
    expect(reasonOf(() => verifyWebhook(bytes.toString('utf8'), header, SECRET_A, { now: T }))).toBe(
      'no_matching_signature',
    )
  })

  it('with two v1 values (rotation), either secret verifies; a third does not', () => {
    const header = sign(BODY, [SECRET_A, SECRET_B])
    expect(header.match(/v1=/g)).toHaveLength(2)
    expect(() => verifyWebhook(BODY, header, SECRET_A, { now: T })).not.toThrow()
    expect(() => verifyWebhook(BODY, header, SECRET_B, { now: T })).not.toThrow()
    expect(() => verifyWebhook(BODY, header, ['whsec_other', SECRET_B], { now: T })).not.toThrow()
    expect(reasonOf(() => verifyWebhook(BODY, header, 'whsec_other', { now: T }))).toBe(
      'no_matching_signature',
    )
  })

  it('rejects a tampered body and a wrong secret', () => {
    const header = sign()
    expect(reasonOf(() => verifyWebhook(BODY.replace('ses_1', 'ses_2'), header, SECRET_A, { now: T }))).toBe(
      'no_matching_signature',
    )
    expect(reasonOf(() => verifyWebhook(`${BODY} `, header, SECRET_A, { now: T }))).toBe(
      'no_matching_signature',
    )
    expect(reasonOf(() => verifyWebhook(BODY, header, SECRET_B, { now: T }))).toBe('no_matching_signature')
  })

  it('rejects a changed timestamp even when the signature is otherwise intact', () => {
    const forged = sign().replace(`t=${T}`, `t=${T + 1}`)
    expect(reasonOf(() => verifyWebhook(BODY, forged, SECRET_A, { now: T + 1 }))).toBe(
      'no_matching_signature',
    )
  })

  it('allows exactly 300 s either way and rejects 301 s in the past or the future', () => {
    const header = sign()
    expect(() => verifyWebhook(BODY, header, SECRET_A, { now: T + 300 })).not.toThrow()
    expect(() => verifyWebhook(BODY, header, SECRET_A, { now: T - 300 })).not.toThrow()
    expect(reasonOf(() => verifyWebhook(BODY, header, SECRET_A, { now: T + 301 }))).toBe(
      'timestamp_outside_tolerance',
    )
    expect(reasonOf(() => verifyWebhook(BODY, header, SECRET_A, { now: T - 301 }))).toBe(
      'timestamp_outside_tolerance',
    )
  })

  it('honours toleranceSeconds and defaults now to the clock', () => {
    const header = sign()
    expect(reasonOf(() => verifyWebhook(BODY, header, SECRET_A, { now: T + 11, toleranceSeconds: 10 }))).toBe(
      'timestamp_outside_tolerance',
    )
    expect(reasonOf(() => verifyWebhook(BODY, header, SECRET_A))).toBe('timestamp_outside_tolerance')
    const fresh = signPayload(BODY, [SECRET_A], Math.floor(Date.now() / 1000))
    expect(() => verifyWebhook(BODY, fresh, SECRET_A)).not.toThrow()
  })

  it('ignores unknown schemes and tolerates spaces and a trailing comma', () => {
    const v1 = referenceHex(SECRET_A, T, BODY)
    const v0 = 'a'.repeat(64)
    expect(() =>
      verifyWebhook(BODY, `t=${T},v0=${v0},v1=${v1},v2=whatever`, SECRET_A, { now: T }),
    ).not.toThrow()
    expect(() => verifyWebhook(BODY, `v1=${v1}, t=${T},`, SECRET_A, { now: T })).not.toThrow()
    // An unknown scheme carrying the right HMAC is not a v1 value and must not count.
    expect(reasonOf(() => verifyWebhook(BODY, `t=${T},v0=${v1},v1=${v0}`, SECRET_A, { now: T }))).toBe(
      'no_matching_signature',
    )
  })

  it('accepts upper-case hex', () => {
    const v1 = referenceHex(SECRET_A, T, BODY).toUpperCase()
    expect(() => verifyWebhook(BODY, `t=${T},v1=${v1}`, SECRET_A, { now: T })).not.toThrow()
  })

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['no timestamp', `v1=${'a'.repeat(64)}`],
    ['no v1', `t=${T}`],
    ['only another scheme', `t=${T},v0=${'a'.repeat(64)}`],
    ['two timestamps', `t=${T},t=${T},v1=${'a'.repeat(64)}`],
    ['non-numeric timestamp', `t=abc,v1=${'a'.repeat(64)}`],
    ['millisecond-looking float timestamp', `t=${T}.5,v1=${'a'.repeat(64)}`],
    ['negative timestamp', `t=-${T},v1=${'a'.repeat(64)}`],
    ['item without =', `t=${T},v1`],
    ['empty key', `t=${T},=abc,v1=${'a'.repeat(64)}`],
    ['short v1', `t=${T},v1=${'a'.repeat(63)}`],
    ['long v1', `t=${T},v1=${'a'.repeat(65)}`],
    ['non-hex v1', `t=${T},v1=${'g'.repeat(64)}`],
    ['base64 v1', `t=${T},v1=${Buffer.alloc(32).toString('base64')}`],
    ['a Stripe-style header with semicolons', `t=${T};v1=${'a'.repeat(64)}`],
  ])('rejects a malformed header: %s', (_name, header) => {
    expect(reasonOf(() => verifyWebhook(BODY, header, SECRET_A, { now: T }))).toBe('malformed_header')
  })

  it('rejects a valid-looking v1 prefix followed by garbage (no partial hex decoding)', () => {
    // Buffer.from('<64 hex>zz', 'hex') would decode the first 32 bytes; the value must still be refused.
    const v1 = referenceHex(SECRET_A, T, BODY)
    expect(reasonOf(() => verifyWebhook(BODY, `t=${T},v1=${v1}zz`, SECRET_A, { now: T }))).toBe(
      'malformed_header',
    )
  })

  it('refuses to run without any secret', () => {
    expect(() => verifyWebhook(BODY, signPayload(BODY, [SECRET_A], T), [], { now: T })).toThrow(TypeError)
  })

  it('throws WebhookVerificationError instances with a message', () => {
    try {
      verifyWebhook(BODY, 'nonsense', SECRET_A, { now: T })
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(WebhookVerificationError)
      expect(error).toBeInstanceOf(Error)
      expect((error as WebhookVerificationError).message).toMatch(/malformed/i)
    }
  })
})

describe('interoperability with the official stripe package', () => {
  const secret = generateSigningSecret()

  it('accepts a header made by stripe.webhooks.generateTestHeaderString', () => {
    const header = Stripe.webhooks.generateTestHeaderString({ payload: BODY, secret, timestamp: T })
    expect(header).toBe(`t=${T},v1=${referenceHex(secret, T, BODY)}`)
    expect(() => verifyWebhook(BODY, header, secret, { now: T })).not.toThrow()
    expect(reasonOf(() => verifyWebhook(BODY, header, generateSigningSecret(), { now: T }))).toBe(
      'no_matching_signature',
    )
  })

  it('has stripe.webhooks.constructEvent accept a header from signPayload, including a rotation header', () => {
    const now = Math.floor(Date.now() / 1000)
    const previous = generateSigningSecret()
    const header = signPayload(BODY, [secret, previous], now)
    const stripe = new Stripe('sk_test_x')
    const event = stripe.webhooks.constructEvent(BODY, header, secret)
    expect(event.id).toBe('evt_01J0000000000000000000000')
    expect(() => stripe.webhooks.constructEvent(BODY, header, previous)).not.toThrow()
    expect(() => Stripe.webhooks.constructEvent(Buffer.from(BODY), header, secret)).not.toThrow()
    // Stripe rejects what we reject: a wrong secret and a tampered body.
    expect(() => stripe.webhooks.constructEvent(BODY, header, generateSigningSecret())).toThrow(
      /No signatures found matching/,
    )
    expect(() => stripe.webhooks.constructEvent(BODY.replace('ses_1', 'ses_9'), header, secret)).toThrow(
      /No signatures found matching/,
    )
  })
})
