import { constants, createPublicKey, type JsonWebKey, publicEncrypt } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type List, uniq } from '../../helpers/assertions.js'
import { eventsOf, type PairedDevice, pairedDevice } from '../../helpers/fixtures.js'
import { HOUR, MINUTE, type Scan, scanHelpers } from './helpers.js'

type Slot = Scan & { type?: string; code?: string; param?: string }

describe('scans from a device that was offline', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { world, scanCount } = scanHelpers(() => t)

  /** An account of its own with a paired device (a kiosk) and three operators. */
  async function kiosk(deviceBody: Record<string, unknown> = {}) {
    const w = await world()
    const gate = await pairedDevice(t, w.api, deviceBody)
    const ops = [await w.operator(), await w.operator(), await w.operator()]
    return { ...w, gate, ops }
  }

  const ago = (ms: number) => new Date(Date.now() - ms).toISOString()

  async function batch(gate: PairedDevice, body: Record<string, unknown>) {
    const res = await gate.api.post<List<Slot>>('/v1/scans/batch', body)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body.data
  }

  it('a second scan with the same client_scan_id answers the first one and changes nothing', async () => {
    const { gate, ops, accountId } = await kiosk()
    const body = {
      device_id: gate.device.code,
      operator_id: ops[0]?.id,
      client_scan_id: 'k1-0001',
      time: ago(HOUR),
    }
    const first = await gate.api.post<Scan>('/v1/scans', body)
    expect(first.status).toBe(201)
    expect(first.body).toMatchObject({ client_scan_id: 'k1-0001', clock_skew_ms: null, result: 'checked_in' })
    const events = await eventsOf(t, accountId)
    // However late, and whatever else it says: the first one's scan.
    for (const again of [body, { ...body, time: ago(10 * MINUTE), direction: 'out' }]) {
      const res = await gate.api.post<Scan>('/v1/scans', again)
      expect(res.status).toBe(201)
      expect(res.body).toEqual(first.body)
    }
    const inBatch = await batch(gate, { scans: [body] })
    expect(inBatch).toEqual([first.body])
    expect(await scanCount(accountId)).toBe(1)
    expect(await eventsOf(t, accountId)).toEqual(events)

    // The id is the device's own: another device may use it for a scan of its own.
    const other = await pairedDevice(
      t,
      t.client((await t.key({ account: await accountOf(accountId) })).secret),
    )
    const elsewhere = await other.api.post<Scan>('/v1/scans', {
      ...body,
      device_id: other.device.code,
      time: ago(30 * MINUTE),
    })
    expect(elsewhere.status).toBe(201)
    expect(elsewhere.body.id).not.toBe(first.body.id)
    expectError(
      await gate.api.post('/v1/scans', { ...body, client_scan_id: 'x'.repeat(65) }),
      422,
      'validation_error',
    )
  })

  async function accountOf(accountId: string): Promise<string> {
    const row = await t.db
      .selectFrom('accounts')
      .select('name')
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow()
    return row.name
  }

  it('a batch sent again (an answer lost) replays each scan once, and records only the new ones', async () => {
    const { gate, ops, accountId } = await kiosk()
    const scans = ops.map((op, i) => ({
      device_id: gate.device.code,
      operator_id: op.id,
      client_scan_id: `b-${i}`,
      time: ago(2 * HOUR - i * MINUTE),
    }))
    const first = await batch(gate, { scans })
    expect(first.map((s) => s.result)).toEqual(['checked_in', 'checked_in', 'checked_in'])
    const outs = ops.map((op, i) => ({
      device_id: gate.device.code,
      operator_id: op.id,
      client_scan_id: `b-out-${i}`,
      time: ago(HOUR),
    }))
    const again = await batch(gate, { scans: [...scans, ...outs] })
    expect(again.slice(0, 3)).toEqual(first)
    expect(again.slice(3).map((s) => s.result)).toEqual(['checked_out', 'checked_out', 'checked_out'])
    expect(await scanCount(accountId)).toBe(6)
  })

  it('moves every time by the device clock error when sent_at is more than 2 minutes off', async () => {
    for (const error of [-2 * HOUR, 2 * HOUR]) {
      const { gate, ops } = await kiosk()
      // The device's clock reads `error` off the service's: it stamped its scans by that clock.
      const deviceNow = Date.now() + error
      const stamped = (ms: number) => new Date(deviceNow - ms).toISOString()
      const before = Date.now()
      const data = await batch(gate, {
        sent_at: new Date(deviceNow).toISOString(),
        scans: [
          { device_id: gate.device.code, operator_id: ops[0]?.id, time: stamped(40 * MINUTE) },
          { device_id: gate.device.code, operator_id: ops[0]?.id, time: stamped(10 * MINUTE) },
          { device_id: gate.device.code, operator_id: ops[1]?.id },
        ],
      })
      const after = Date.now()
      expect(data.map((s) => s.result)).toEqual(['checked_in', 'checked_out', 'checked_in'])
      const skew = data[0]?.clock_skew_ms ?? 0
      expect(-skew).toBeGreaterThanOrEqual(error - 1000)
      expect(-skew).toBeLessThanOrEqual(error + (after - before) + 1000)
      expect(data[1]?.clock_skew_ms).toBe(skew)
      // A scan without a time happened at the service's now: nothing to correct.
      expect(data[2]?.clock_skew_ms).toBeNull()
      const corrected = Date.parse(data[0]?.time ?? '')
      expect(Math.abs(corrected - (Date.now() - 40 * MINUTE))).toBeLessThan(5000)
      expect(Date.parse(data[1]?.time ?? '') - corrected).toBe(30 * MINUTE)
    }
  })

  it('leaves times alone when sent_at is within 2 minutes, and refuses an unreadable sent_at', async () => {
    const { gate, ops } = await kiosk()
    const time = ago(20 * MINUTE)
    const data = await batch(gate, {
      sent_at: ago(90_000),
      scans: [{ device_id: gate.device.code, operator_id: ops[0]?.id, time }],
    })
    expect(data[0]).toMatchObject({ time, clock_skew_ms: null })
    const res = await gate.api.post('/v1/scans/batch', {
      sent_at: 'yesterday',
      scans: [{ device_id: gate.device.code, operator_id: ops[1]?.id }],
    })
    expectError(res, 422, 'validation_error', 'invalid_timestamp', 'sent_at')
  })

  it("a device key's batch refuses another device's scan in its slot (device_mismatch), keeps the rest", async () => {
    const { gate, ops, gateB } = await kiosk()
    const data = await batch(gate, {
      scans: [
        { device_id: gate.device.code, operator_id: ops[0]?.id, time: ago(HOUR) },
        { device_id: gateB.code, operator_id: ops[1]?.id, time: ago(HOUR) },
        { device_id: gate.device.code, operator_id: ops[2]?.id, time: ago(HOUR) },
      ],
    })
    expect(data[0]?.result).toBe('checked_in')
    expect(data[1]).toMatchObject({ type: 'insufficient_scope', code: 'device_mismatch', param: 'device_id' })
    expect(data[2]?.result).toBe('checked_in')
  })

  it('checks PINs in a batch (pin and pin_ciphertext), each in its slot; wrong ones record nothing', async () => {
    const { gate, api, accountId } = await kiosk({ require_pin: true })
    const op = (await api.post<{ id: string }>('/v1/operators', { ident: uniq('op'), pin: '5555' })).body
    const jwk = (await gate.api.get<{ pin_key: JsonWebKey }>('/v1/devices/current')).body.pin_key
    const encrypted = (pin: string) =>
      publicEncrypt(
        {
          key: createPublicKey({ key: jwk, format: 'jwk' }),
          padding: constants.RSA_PKCS1_OAEP_PADDING,
          oaepHash: 'sha256',
        },
        Buffer.from(pin),
      ).toString('base64url')
    const at = { device_id: gate.device.code, operator_id: op.id }
    const data = await batch(gate, {
      scans: [
        { ...at, time: ago(3 * HOUR), pin_ciphertext: encrypted('5555'), client_scan_id: 'p-1' },
        { ...at, time: ago(2 * HOUR), pin_ciphertext: encrypted('5556'), client_scan_id: 'p-2' },
        { ...at, time: ago(HOUR), client_scan_id: 'p-3' },
        { ...at, time: ago(HOUR - MINUTE), pin: '5555', client_scan_id: 'p-4' },
      ],
    })
    expect(data[0]?.result).toBe('checked_in')
    expect(data[1]).toMatchObject({ code: 'invalid_pin', param: 'pin_ciphertext' })
    expect(data[2]).toMatchObject({ code: 'missing_param', param: 'pin' })
    expect(data[3]?.result).toBe('checked_out')
    expect(await scanCount(accountId)).toBe(2)
    // The batch again: the recorded ones replay without their PIN being asked again.
    const again = await batch(gate, { scans: [{ ...at, time: ago(3 * HOUR), client_scan_id: 'p-1' }] })
    expect(again[0]).toEqual(data[0])
  })
})
