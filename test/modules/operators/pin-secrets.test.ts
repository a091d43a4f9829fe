import { constants, createPrivateKey, createPublicKey, type JsonWebKey, publicEncrypt } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiResponse, buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type Operator } from '../../helpers/assertions.js'
import { freshAccount, pairedDevice } from '../../helpers/fixtures.js'

/** The operator's PIN, and the wrong ones tried: unusual, so that none is in a log line by chance. */
const PIN = '7391'
const WRONG_PINS = ['8642', '5308', '6429', '2857', '4176']

/** A PIN standing alone: not a piece of a longer number (a time in ms, `1764147391123`) or an id. */
const standingAlone = (digits: string) => new RegExp(`(?<![A-Za-z0-9.])${digits}(?![A-Za-z0-9.])`)

/** As a kiosk encrypts a PIN captured offline, to the `pin_key` of `GET /v1/devices/current`. */
function encryptPin(jwk: JsonWebKey, pin: string): string {
  return publicEncrypt(
    {
      key: createPublicKey({ key: jwk, format: 'jwk' }),
      padding: constants.RSA_PKCS1_OAEP_PADDING,
      oaepHash: 'sha256',
    },
    Buffer.from(pin, 'utf8'),
  ).toString('base64url')
}

/**
 * "Never logged" (decisions.md, "Operator PINs"): with the service logging at its most verbose level
 * into a stream this test reads, PINs are set (create, PATCH), scanned with (`pin` and
 * `pin_ciphertext`, right and wrong, one at a time and in a batch, up to the lockout), and then no log
 * line, no response body and no event carries a PIN, a ciphertext, a PIN hash or any part of the
 * account's PIN private key (read from the database, so the test knows what to look for). Should a
 * request's body ever be logged, the logger redacts its PINs, a batch's included.
 */
describe('PINs and their secrets are never in a log line, a response or an event', () => {
  let t: TestApp
  const logLines: string[] = []
  const answers: string[] = []
  const ciphertexts: string[] = []
  const seen = <T>(res: ApiResponse<T>) => {
    answers.push(res.raw.body)
    return res
  }

  beforeAll(async () => {
    t = await buildTestApp({ logLevel: 'trace' }, { logStream: { write: (line) => logLines.push(line) } })
  })
  afterAll(() => t.close())

  it('leaves no PIN, ciphertext, PIN hash or private key in logs, responses or events', async () => {
    const { api } = await freshAccount(t)
    const gate = await pairedDevice(t, api, { require_pin: true })
    const created = seen(await api.post<Operator>('/v1/operators', { ident: 'W-001', name: 'Ada', pin: PIN }))
    expect(created.status).toBe(201)
    const patched = seen(await api.post<Operator>('/v1/operators', { ident: 'W-002', name: 'Grace' }))
    const grace = patched.body.id
    expect(seen(await api.patch<Operator>(`/v1/operators/${grace}`, { pin: PIN })).body.has_pin).toBe(true)
    // Refused PIN formats: the refusal names the field, not its value.
    for (const pin of ['73', '739100000', '73a1']) {
      expect(seen(await api.patch(`/v1/operators/${grace}`, { pin })).status).toBe(422)
    }

    const scan = async (ident: string, body: Record<string, unknown>) =>
      seen(await gate.api.post('/v1/scans', { device_id: gate.device.code, operator_ident: ident, ...body }))
    const jwk = seen(await gate.api.get<{ pin_key: JsonWebKey }>('/v1/devices/current')).body.pin_key
    const sealed = (pin: string) => {
      const ciphertext = encryptPin(jwk, pin)
      ciphertexts.push(ciphertext)
      return ciphertext
    }

    expect((await scan('W-001', { pin: PIN })).status).toBe(201)
    expectError(await scan('W-001', { pin: WRONG_PINS[0] }), 422, 'validation_error', 'invalid_pin')
    expect((await scan('W-001', { pin_ciphertext: sealed(PIN), direction: 'out' })).status).toBe(201)
    expectError(
      await scan('W-001', { pin_ciphertext: sealed(WRONG_PINS[1] ?? '') }),
      422,
      'validation_error',
      'invalid_pin',
    )
    // A batch, as a kiosk flushes its queue: right and wrong, in the clear and sealed.
    const batch = seen(
      await gate.api.post<{ data: Array<{ code?: string }> }>('/v1/scans/batch', {
        scans: [
          { device_id: gate.device.code, operator_ident: 'W-002', pin: PIN, client_scan_id: 'q-1' },
          { device_id: gate.device.code, operator_ident: 'W-002', pin: WRONG_PINS[2], client_scan_id: 'q-2' },
          {
            device_id: gate.device.code,
            operator_ident: 'W-002',
            pin_ciphertext: sealed(WRONG_PINS[3] ?? ''),
            client_scan_id: 'q-3',
          },
        ],
      }),
    )
    expect(batch.status).toBe(200)
    expect(batch.body.data.map((slot) => slot.code ?? 'recorded')).toEqual([
      'recorded',
      'invalid_pin',
      'invalid_pin',
    ])
    // Grace has 2 wrong in a row: 3 more lock her, then even the right PIN is refused.
    for (const pin of [WRONG_PINS[4], WRONG_PINS[0], WRONG_PINS[1]]) {
      expectError(await scan('W-002', { pin }), 422, 'validation_error', 'invalid_pin')
    }
    expectError(await scan('W-002', { pin: PIN, direction: 'out' }), 429, 'rate_limited', 'pin_locked')
    expectError(
      await scan('W-002', { pin_ciphertext: sealed(PIN), direction: 'out' }),
      429,
      'rate_limited',
      'pin_locked',
    )

    // Every event of the account, as the API lists them.
    let cursor: string | undefined
    do {
      const page = seen(
        await api.get<{ data: unknown[]; has_more: boolean; next_cursor: string | null }>(
          `/v1/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        ),
      )
      expect(page.status).toBe(200)
      cursor = page.body.has_more ? (page.body.next_cursor ?? undefined) : undefined
    } while (cursor)
    const events = (await t.db.selectFrom('events').select('payload').execute()).map((row) => row.payload)
    expect(events.some((payload) => payload.includes('"has_pin":true'))).toBe(true)

    // What a leak would carry: each hash's salt and digest, the private key's PEM lines and its JWK parts.
    const hashes = (await t.db.selectFrom('operators').select('pin_hash').execute()).flatMap((row) =>
      row.pin_hash === null ? [] : row.pin_hash.split('$').slice(1),
    )
    expect(hashes).toHaveLength(4)
    const pems = (await t.db.selectFrom('pin_keys').select('private_key').execute()).map(
      (row) => row.private_key,
    )
    expect(pems).toHaveLength(1)
    const keyParts = pems.flatMap((pem) => {
      const jwk = createPrivateKey(pem).export({ format: 'jwk' })
      const lines = pem.split('\n').filter((line) => line !== '' && !line.startsWith('-----'))
      // The JWK's private parts, each cut to 40 characters: any piece of one is a leak.
      return [
        ...lines,
        ...[jwk.d, jwk.p, jwk.q, jwk.dp, jwk.dq, jwk.qi].map((part) => (part ?? '').slice(0, 40)),
      ]
    })
    expect(keyParts.length).toBeGreaterThan(20)
    const secrets = [...hashes, ...keyParts, ...ciphertexts, 'PRIVATE KEY', 'pin_hash']

    // The logs saw every request (a line as it came, one as it was answered): the PATCHes, the scans
    // and the batch. Fastify and the service log nothing below info; at trace this is all there is.
    const logs = logLines.join('')
    expect(logLines.length).toBeGreaterThanOrEqual(2 * answers.length)
    for (const route of [`"url":"/v1/operators/${grace}"`, '"url":"/v1/scans"', '"url":"/v1/scans/batch"']) {
      expect(logs).toContain(route)
    }
    expect(logs).toContain('"statusCode":429')

    for (const [where, texts] of [
      ['log', [logs]],
      ['response', answers],
      ['event', events],
    ] as const) {
      for (const text of texts) {
        for (const pin of [PIN, ...WRONG_PINS])
          expect(text, `a PIN in a ${where}`).not.toMatch(standingAlone(pin))
        for (const secret of secrets) expect(text, `a secret in a ${where}`).not.toContain(secret)
      }
    }
  })

  it("redacts a PIN wherever a request's body would carry one, should a body ever be logged", () => {
    const from = logLines.length
    const sealed = 'c2VhbGVk'
    t.app.log.info(
      {
        body: { pin: PIN, scans: [{ pin: PIN, pin_ciphertext: sealed }, { pin: PIN }] },
        pin: PIN,
        pin_ciphertext: sealed,
      },
      'a body',
    )
    const line = logLines.slice(from).join('')
    expect(line).toContain('"msg":"a body"')
    expect(line.match(/\[Redacted\]/g)).toHaveLength(6)
    expect(line).not.toContain(PIN)
    expect(line).not.toContain(sealed)
  })
})
