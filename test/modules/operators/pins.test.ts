import { constants, createPublicKey, type JsonWebKey, publicEncrypt } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiClient, type ApiResponse, buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type Operator, uniq } from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import { eventsOf, freshAccount, type PairedDevice, pairedDevice } from '../../helpers/fixtures.js'

/** What `GET /v1/devices/current` shows a kiosk, as a kiosk encrypts an offline PIN with it. */
function encryptPin(jwk: JsonWebKey, pin: string): string {
  const key = createPublicKey({ key: jwk, format: 'jwk' })
  return publicEncrypt(
    { key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
    Buffer.from(pin, 'utf8'),
  ).toString('base64url')
}

const LOCK_MS = 15 * 60_000

describe('operator PINs', () => {
  const clock = useTestClock()
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  /** Every answer the tests of this file received, for the check that no secret ever left. */
  const answers: string[] = []
  const seen = <T>(res: ApiResponse<T>) => {
    answers.push(res.raw.body)
    return res
  }

  async function operator(api: ApiClient, body: Record<string, unknown> = {}): Promise<Operator> {
    const res = seen(await api.post<Operator>('/v1/operators', { ident: uniq('op'), ...body }))
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body
  }

  /** An account with a paired device that requires PINs. */
  async function pinGate() {
    const account = await freshAccount(t)
    const gate = await pairedDevice(t, account.api, { require_pin: true })
    return { ...account, gate }
  }

  const scan = async (gate: PairedDevice, body: Record<string, unknown>) =>
    seen(await gate.api.post('/v1/scans', { device_id: gate.device.code, ...body }))

  const scanCount = async (accountId: string) =>
    (await t.db.selectFrom('scans').select('id').where('account_id', '=', accountId).execute()).length

  it('takes pin on create and PATCH, never returns it (has_pin), stores only a salted scrypt hash', async () => {
    const { api, key } = await freshAccount(t)
    const a = await operator(api, { pin: '4821' })
    const b = await operator(api, { pin: '4821' })
    expect(a.has_pin).toBe(true)
    expect(JSON.stringify(a)).not.toContain('4821')
    const rows = await t.db
      .selectFrom('operators')
      .select('pin_hash')
      .where('id', 'in', [a.id, b.id])
      .execute()
    for (const row of rows) {
      expect(row.pin_hash).toMatch(/^scrypt\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
      expect(row.pin_hash).not.toContain('4821')
    }
    // Salted: the same PIN hashes differently.
    expect(rows[0]?.pin_hash).not.toBe(rows[1]?.pin_hash)

    const cleared = seen(await api.patch<Operator>(`/v1/operators/${a.id}`, { pin: null }))
    expect(cleared.body.has_pin).toBe(false)
    const updated = (await eventsOf(t, key.account_id)).filter((e) => e.type === 'operator.updated')
    expect(updated.map((e) => e.data.previous_attributes)).toEqual([
      expect.objectContaining({ has_pin: true }),
    ])

    for (const pin of ['123', '123456789', '12a4', 1234]) {
      const res = seen(await api.patch(`/v1/operators/${b.id}`, { pin }))
      expect(res.status, JSON.stringify(pin)).toBe(422)
    }
  })

  it('at a device with require_pin: missing, wrong and no-PIN scans are refused, nothing recorded', async () => {
    const { key, api, gate } = await pinGate()
    const withPin = await operator(api, { pin: '2468' })
    const without = await operator(api)
    expectError(
      await scan(gate, { operator_id: withPin.id }),
      422,
      'validation_error',
      'missing_param',
      'pin',
    )
    expectError(
      await scan(gate, { operator_id: withPin.id, pin: '1357' }),
      422,
      'validation_error',
      'invalid_pin',
      'pin',
    )
    expectError(
      await scan(gate, { operator_id: without.id, pin: '1357' }),
      422,
      'validation_error',
      'invalid_pin',
    )
    expect(await scanCount(key.account_id)).toBe(0)
    const right = await scan(gate, { operator_id: withPin.id, pin: '2468' })
    expect(right.status).toBe(201)
    expect(right.body).toMatchObject({ result: 'checked_in', operator_name: null })
    // A device without require_pin asks for none.
    const open = await pairedDevice(t, api)
    expect((await scan(open, { operator_id: without.id })).status).toBe(201)
  })

  it('locks an operator for 15 minutes after 5 wrong PINs in a row, at any device; a right PIN resets', async () => {
    const { api, gate } = await pinGate()
    const other = await pairedDevice(t, api)
    seen(await api.patch(`/v1/devices/${other.device.id}`, { require_pin: true }))
    const op = await operator(api, { pin: '9753' })
    for (let i = 0; i < 4; i++) {
      expectError(
        await scan(i % 2 ? gate : other, { operator_id: op.id, pin: '0000' }),
        422,
        'validation_error',
        'invalid_pin',
      )
    }
    // The right PIN starts the count again: four more wrong ones do not lock.
    expect((await scan(gate, { operator_id: op.id, pin: '9753' })).status).toBe(201)
    for (let i = 0; i < 4; i++) {
      expectError(
        await scan(other, { operator_id: op.id, pin: '0000' }),
        422,
        'validation_error',
        'invalid_pin',
      )
    }
    // The fifth in a row locks: then even the right PIN is refused, at every device.
    expectError(await scan(gate, { operator_id: op.id, pin: '0000' }), 422, 'validation_error', 'invalid_pin')
    const lockedAt = clock.now()
    for (const device of [gate, other]) {
      const locked = await scan(device, { operator_id: op.id, pin: '9753' })
      expectError(locked, 429, 'rate_limited', 'pin_locked')
      // All of the 15 minutes are left while the clock stands still.
      expect(locked.headers['retry-after']).toBe(String(LOCK_MS / 1000))
    }
    clock.set(lockedAt + LOCK_MS - 1)
    expectError(await scan(gate, { operator_id: op.id, pin: '9753' }), 429, 'rate_limited', 'pin_locked')
    // Fifteen minutes later, the right PIN works again.
    clock.set(lockedAt + LOCK_MS)
    expect((await scan(gate, { operator_id: op.id, pin: '9753', direction: 'out' })).status).toBe(201)
  })

  it('answers every new scan of a locked operator 429 pin_locked, where no PIN is asked too; a replay still answers', async () => {
    const { api, key, gate } = await pinGate()
    const open = await pairedDevice(t, api)
    const op = await operator(api, { pin: '9753' })
    const first = await scan(open, { operator_id: op.id, client_scan_id: 'before-lock' })
    expect(first.status).toBe(201)
    for (let i = 0; i < 5; i++) {
      expectError(
        await scan(gate, { operator_id: op.id, pin: '0000' }),
        422,
        'validation_error',
        'invalid_pin',
      )
    }
    const before = await scanCount(key.account_id)
    // A device without PINs, its key or the account's API key, one scan or a batch's item.
    expectError(await scan(open, { operator_id: op.id, direction: 'out' }), 429, 'rate_limited', 'pin_locked')
    expectError(
      seen(
        await api.post('/v1/scans', { device_id: open.device.code, operator_id: op.id, direction: 'out' }),
      ),
      429,
      'rate_limited',
      'pin_locked',
    )
    const other = await operator(api)
    const batch = seen(
      await open.api.post<{ data: Array<Record<string, unknown>> }>('/v1/scans/batch', {
        scans: [
          { device_id: open.device.code, operator_id: op.id, client_scan_id: 'after-lock' },
          { device_id: open.device.code, operator_id: other.id },
          { device_id: open.device.code, operator_id: op.id, client_scan_id: 'before-lock' },
        ],
      }),
    )
    expect(batch.status).toBe(200)
    expect(batch.body.data[0]).toMatchObject({ type: 'rate_limited', code: 'pin_locked' })
    expect(batch.body.data[1]).toMatchObject({ object: 'scan', operator_id: other.id })
    // The replay of a scan recorded before the lock answers that scan, as replays always do.
    expect(batch.body.data[2]).toEqual(first.body)
    const replay = await scan(open, { operator_id: op.id, client_scan_id: 'before-lock' })
    expect(replay.status).toBe(201)
    expect(replay.body).toEqual(first.body)
    // Nothing of the locked operator was recorded; the other operator's scan was.
    expect(await scanCount(key.account_id)).toBe(before + 1)
  })

  it('accepts pin_ciphertext made with node:crypto from the pin_key JWK; refuses what does not decrypt', async () => {
    const { key, api, gate } = await pinGate()
    const op = await operator(api, { pin: '31415926', name: 'Ada' })
    const current = seen(await gate.api.get<{ pin_key: JsonWebKey }>('/v1/devices/current'))
    const jwk = current.body.pin_key
    expectError(
      await scan(gate, { operator_id: op.id, pin_ciphertext: encryptPin(jwk, '27182818') }),
      422,
      'validation_error',
      'invalid_pin',
      'pin_ciphertext',
    )
    for (const garbage of ['not-a-ciphertext', Buffer.alloc(256, 7).toString('base64url'), 'a+b/c=']) {
      expectError(
        await scan(gate, { operator_id: op.id, pin_ciphertext: garbage }),
        422,
        'validation_error',
        'invalid_pin',
        'pin_ciphertext',
      )
    }
    expect(await scanCount(key.account_id)).toBe(0)
    const right = await scan(gate, { operator_id: op.id, pin_ciphertext: encryptPin(jwk, '31415926') })
    expect(right.status, JSON.stringify(right.body)).toBe(201)
    expect(right.body).toMatchObject({ result: 'checked_in', operator_name: 'Ada' })
    // One key per account and mode: another device of the account shows the same.
    const second = await pairedDevice(t, api)
    expect((await second.api.get<{ pin_key: JsonWebKey }>('/v1/devices/current')).body.pin_key).toEqual(jwk)
  })

  it('never shows a PIN hash or the PIN private key in a response or an event', async () => {
    const hashes = (await t.db.selectFrom('operators').select('pin_hash').execute())
      .map((r) => r.pin_hash)
      .filter((h): h is string => h !== null)
    const privateKeys = (await t.db.selectFrom('pin_keys').select('private_key').execute()).map(
      (r) => r.private_key,
    )
    expect(hashes.length).toBeGreaterThan(3)
    expect(privateKeys.length).toBeGreaterThan(0)
    // The base64 body of each PEM, and each hash's digest part: what a leak would carry.
    const secrets = [
      ...hashes.flatMap((h) => h.split('$').slice(1)),
      ...privateKeys.map((pem) => pem.split('\n')[5] ?? pem),
      'PRIVATE KEY',
      'pin_hash',
    ]
    const events = (await t.db.selectFrom('events').select('payload').execute()).map((r) => r.payload)
    expect(answers.length).toBeGreaterThan(30)
    for (const text of [...answers, ...events]) {
      for (const secret of secrets) expect(text).not.toContain(secret)
    }
  })
})
