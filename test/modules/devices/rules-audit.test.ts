import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { installClock } from '../../../src/lib/clock.js'
import { buildTestApp, errorOf, type TestApp } from '../../helpers/app.js'
import {
  type Device,
  expectError,
  type List,
  type Operator,
  type Scan,
  uniq,
} from '../../helpers/assertions.js'
import { TestClock } from '../../helpers/clock.js'
import { freshAccount, type PairedDevice, pairedDevice, pairFrom } from '../../helpers/fixtures.js'
import { created, world } from '../../helpers/world.js'

/**
 * Rules of decisions.md's "The time clock" that the feature's own test files left untested or
 * tested loosely: the bounds (10 minutes, once a minute, 15 minutes, 2 minutes, 1–64 characters)
 * at their edges, by the service's clock. The service reads the process clock (src/lib/clock.ts)
 * and nothing else for time, so a test installs a TestClock and moves it instead of waiting or
 * rewriting stored times.
 */

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** The alphabet decisions.md gives pairing codes: no 0/O, no 1/I. */
const PAIRING_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ'

let restoreClock: (() => void) | undefined

/** Stops the service's clock at `at` (default now); `clock.set` moves it. Undone after each test. */
function stopClock(at = Date.now()) {
  const clock = new TestClock(at)
  restoreClock = installClock(clock)
  return { start: at, set: (ms: number) => clock.set(ms) }
}

describe('time-clock rules at their bounds (decisions.md)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  afterEach(() => {
    restoreClock?.()
    restoreClock = undefined
  })

  const newDevice = (api: PairedDevice['api']) =>
    created(api.post<Device>('/v1/devices', { code: uniq('gate') }))

  async function newCode(api: PairedDevice['api'], deviceId: string) {
    const res = await api.post<{ code: string; expires_at: string }>(`/v1/devices/${deviceId}/pairing-codes`)
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body
  }

  it('makes pairing codes of 8 characters of the alphabet without 0, O, 1 and I', async () => {
    const { api } = await freshAccount(t)
    const device = await newDevice(api)
    const seen = new Set<string>()
    // 400 characters: were 0, O, 1 and I drawn as often as the others, none showing would be a
    // chance of (32/36)^400, about 1e-21.
    for (let i = 0; i < 50; i++) {
      const { code } = await newCode(api, device.id)
      expect(code).toMatch(/^[^-]{4}-[^-]{4}$/)
      for (const c of code.replace('-', '')) seen.add(c)
    }
    expect([...seen].filter((c) => !PAIRING_ALPHABET.includes(c))).toEqual([])
    // The draw covers the alphabet (each character missing from 400 draws: about 3e-6).
    expect(seen.size).toBe(PAIRING_ALPHABET.length)
  })

  it('pairs with a code until 10 minutes after it was made, by the service clock, and not at 10 minutes', async () => {
    const { api } = await freshAccount(t)
    const [first, second] = [await newDevice(api), await newDevice(api)]
    const clock = stopClock()
    const [lasting, expiring] = [await newCode(api, first.id), await newCode(api, second.id)]
    expect(lasting.expires_at).toBe(new Date(clock.start + 10 * MINUTE).toISOString())
    clock.set(clock.start + 10 * MINUTE - 1)
    expect((await pairFrom(t, lasting.code)).status).toBe(201)
    clock.set(clock.start + 10 * MINUTE)
    expectError(await pairFrom(t, expiring.code), 422, 'validation_error', 'invalid_pairing_code', 'code')
  })

  it('answers an unknown, a used and an expired code alike, all but the request id', async () => {
    const { api } = await freshAccount(t)
    const [first, second] = [await newDevice(api), await newDevice(api)]
    const clock = stopClock()
    const used = await newCode(api, first.id)
    const expired = await newCode(api, second.id)
    expect((await pairFrom(t, used.code)).status).toBe(201)
    const answers = [await pairFrom(t, 'ZZZZ-ZZZZ'), await pairFrom(t, used.code)]
    clock.set(clock.start + 11 * MINUTE)
    answers.push(await pairFrom(t, expired.code))
    const [unknown, ...others] = answers.map((res) => {
      const error = expectError(res, 422, 'validation_error', 'invalid_pairing_code', 'code')
      const { request_id: _, ...rest } = error
      return { status: res.status, headers: Object.keys(res.headers).sort(), error: rest }
    })
    for (const other of others) expect(other).toEqual(unknown)
  })

  it('pairs a live device with a dk_live_ key that reads its live device', async () => {
    const { api } = await freshAccount(t, 'live')
    const device = await newDevice(api)
    expect((await api.post(`/v1/devices/${device.id}/pairing-codes`)).body).toMatchObject({ livemode: true })
    const pairing = await pairFrom<{ device: Device; key: { secret: string; livemode: boolean } }>(
      t,
      (await newCode(api, device.id)).code,
    )
    expect(pairing.status, JSON.stringify(pairing.body)).toBe(201)
    expect(pairing.body.key.secret).toMatch(/^dk_live_[A-Za-z0-9_-]{32}$/)
    expect(pairing.body.key.livemode).toBe(true)
    expect(pairing.body.device).toMatchObject({ id: device.id, livemode: true, paired: true })
    const current = await t.client(pairing.body.key.secret).get<{ device: Device }>('/v1/devices/current')
    expect(current.body.device).toMatchObject({ id: device.id, livemode: true })
  })

  it('writes last_seen_at again once a minute has passed since it last did, not before', async () => {
    const { api } = await freshAccount(t)
    const gate = await pairedDevice(t, api)
    const lastSeen = async () => (await api.get<Device>(`/v1/devices/${gate.device.id}`)).body.last_seen_at
    const clock = stopClock()
    expect((await gate.api.get('/v1/devices/current')).status).toBe(200)
    expect(await lastSeen()).toBe(new Date(clock.start).toISOString())
    clock.set(clock.start + MINUTE - 1)
    expect((await gate.api.get('/v1/devices/current')).status).toBe(200)
    expect(await lastSeen()).toBe(new Date(clock.start).toISOString())
    clock.set(clock.start + MINUTE)
    // Any request of the device key is a sighting: a scan as well as a read.
    const op = await created(api.post<Operator>('/v1/operators', { ident: uniq('op') }))
    const scan = await gate.api.post('/v1/scans', { device_id: gate.device.code, operator_id: op.id })
    expect(scan.status, JSON.stringify(scan.body)).toBe(201)
    expect(await lastSeen()).toBe(new Date(clock.start + MINUTE).toISOString())
  })

  it('takes pin as 4 to 8 digits or null on create and PATCH; anything else is 422 naming pin, changing nothing', async () => {
    const { api } = await freshAccount(t)
    for (const pin of ['1234', '12345678']) {
      const op = await created(api.post<Operator>('/v1/operators', { ident: uniq('op'), pin }))
      expect(op.has_pin).toBe(true)
      expect(Object.keys(op)).not.toContain('pin')
    }
    const plain = await created(api.post<Operator>('/v1/operators', { ident: uniq('op') }))
    expect(plain.has_pin).toBe(false)
    expect((await api.post<Operator>('/v1/operators', { ident: uniq('op'), pin: null })).body.has_pin).toBe(
      false,
    )
    const refused = ['123', '123456789', '12a4', '', ' 1234', '1234 ', '١٢٣٤', '+1234', 1234, true]
    for (const pin of refused) {
      const ident = uniq('op')
      expectError(await api.post('/v1/operators', { ident, pin }), 422, 'validation_error', undefined, 'pin')
      expect((await api.get<List<Operator>>(`/v1/operators?ident=${ident}`)).body.data).toEqual([])
      expectError(
        await api.patch(`/v1/operators/${plain.id}`, { pin }),
        422,
        'validation_error',
        undefined,
        'pin',
      )
    }
    expect((await api.get<Operator>(`/v1/operators/${plain.id}`)).body).toEqual(plain)
  })

  it('locks PIN scans for 15 minutes by the service clock: still at 15 minutes less 1 ms, not at 15', async () => {
    const w = await world(t)
    const gate = await pairedDevice(t, w.root, { require_pin: true })
    const op = await created(w.root.post<Operator>('/v1/operators', { ident: uniq('op'), pin: '2580' }))
    const scan = (pin: string) =>
      gate.api.post('/v1/scans', { device_id: gate.device.code, operator_id: op.id, pin })
    const clock = stopClock()
    for (let i = 0; i < 5; i++) expectError(await scan('0000'), 422, 'validation_error', 'invalid_pin', 'pin')
    const locked = expectError(await scan('2580'), 429, 'rate_limited', 'pin_locked')
    expect(locked.param).toBeUndefined()
    clock.set(clock.start + 15 * MINUTE - 1)
    const last = await scan('2580')
    expectError(last, 429, 'rate_limited', 'pin_locked')
    expect(last.headers['retry-after']).toBe('1')
    clock.set(clock.start + 15 * MINUTE)
    const open = await scan('2580')
    expect(open.status, JSON.stringify(open.body)).toBe(201)
  })

  it("counts wrong PINs in a batch in order: after five, the operator's next scan is pin_locked in its slot; others go on", async () => {
    const w = await world(t)
    const gate = await pairedDevice(t, w.root, { require_pin: true })
    const op = await created(w.root.post<Operator>('/v1/operators', { ident: uniq('op'), pin: '2580' }))
    const other = await created(w.root.post<Operator>('/v1/operators', { ident: uniq('op'), pin: '1470' }))
    const at = (operator: Operator, pin: string, minutesAgo: number) => ({
      device_id: gate.device.code,
      operator_id: operator.id,
      pin,
      time: new Date(Date.now() - minutesAgo * MINUTE).toISOString(),
    })
    const res = await gate.api.post<List<Scan & { type?: string; code?: string; param?: string }>>(
      '/v1/scans/batch',
      {
        scans: [
          ...[60, 59, 58, 57, 56].map((ago) => at(op, '0000', ago)),
          at(op, '2580', 55),
          at(other, '1470', 54),
        ],
      },
    )
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const slots = res.body.data
    for (const slot of slots.slice(0, 5)) {
      expect(slot).toMatchObject({ type: 'validation_error', code: 'invalid_pin', param: 'pin' })
    }
    expect(slots[5]).toMatchObject({ type: 'rate_limited', code: 'pin_locked' })
    expect(slots[6]).toMatchObject({ object: 'scan', result: 'checked_in', operator_id: other.id })
    // The lock holds outside the batch too.
    expectError(await gate.api.post('/v1/scans', at(op, '2580', 1)), 429, 'rate_limited', 'pin_locked')
  })

  it('takes client_scan_id of 1 to 64 characters; empty or 65 is 422 naming client_scan_id, recording nothing', async () => {
    const w = await world(t)
    const gate = await pairedDevice(t, w.root)
    const op = await w.operator()
    const at = { device_id: gate.device.code, operator_id: op.id }
    for (const id of ['', 'x'.repeat(65)]) {
      expectError(
        await gate.api.post('/v1/scans', { ...at, client_scan_id: id }),
        422,
        'validation_error',
        undefined,
        'client_scan_id',
      )
    }
    for (const id of ['1', 'y'.repeat(64)]) {
      const res = await gate.api.post<Scan>('/v1/scans', { ...at, client_scan_id: id })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(res.body.client_scan_id).toBe(id)
    }
    expect((await w.root.get<List<Scan>>('/v1/scans')).body.data).toHaveLength(2)
  })

  it('answers a client_scan_id sent again 40 days later with the first scan, alone and in a batch', async () => {
    const w = await world(t)
    const gate = await pairedDevice(t, w.root)
    const op = await w.operator()
    const clock = stopClock()
    const body = {
      device_id: gate.device.code,
      operator_id: op.id,
      client_scan_id: 'late-1',
      time: new Date(clock.start - HOUR).toISOString(),
    }
    const first = await created(gate.api.post<Scan>('/v1/scans', body))
    clock.set(clock.start + 40 * DAY)
    const again = await gate.api.post<Scan>('/v1/scans', body)
    expect(again.status, JSON.stringify(again.body)).toBe(201)
    expect(again.body).toEqual(first)
    const batch = await gate.api.post<List<Scan>>('/v1/scans/batch', {
      sent_at: new Date().toISOString(),
      scans: [body],
    })
    expect(batch.status, JSON.stringify(batch.body)).toBe(200)
    expect(batch.body.data).toEqual([first])
    expect((await w.root.get<List<Scan>>('/v1/scans')).body.data).toEqual([first])
  })

  it('corrects times for a sent_at more than 2 minutes off, by exactly the difference; at exactly 2 minutes, not', async () => {
    const w = await world(t)
    const gate = await pairedDevice(t, w.root)
    const clock = stopClock()
    const time = new Date(clock.start - HOUR).toISOString()
    const cases = [
      { off: -2 * MINUTE, skew: null },
      { off: 2 * MINUTE, skew: null },
      { off: -2 * MINUTE - 1, skew: 2 * MINUTE + 1 },
      { off: 2 * MINUTE + 1, skew: -2 * MINUTE - 1 },
    ]
    for (const { off, skew } of cases) {
      const op = await w.operator()
      const res = await gate.api.post<List<Scan>>('/v1/scans/batch', {
        sent_at: new Date(clock.start + off).toISOString(),
        scans: [{ device_id: gate.device.code, operator_id: op.id, time }],
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const [scan] = res.body.data
      expect(scan?.clock_skew_ms, `sent_at ${off} ms off`).toBe(skew)
      expect(scan?.time).toBe(new Date(Date.parse(time) + (skew ?? 0)).toISOString())
      // The scan as stored says the same.
      expect((await w.root.get<Scan>(`/v1/scans/${scan?.id}`)).body).toEqual(scan)
    }
  })
})

describe('a device key counts in the rate limit like any key (decisions.md)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ rateLimitMax: 3, rateLimitWindowMs: 60_000 })
  })
  afterAll(() => t.close())

  it('is refused its fourth request of the window with 429 rate_limited, while the owner key is not', async () => {
    // Two requests of the owner key (the device and its code); the pairing counts for its address.
    const { api } = await freshAccount(t)
    const gate = await pairedDevice(t, api)
    for (let i = 0; i < 3; i++) expect((await gate.api.get('/v1/devices/current')).status).toBe(200)
    const limited = await gate.api.get('/v1/devices/current')
    expectError(limited, 429, 'rate_limited', 'rate_limited')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60)
    // A scan of that key is limited too, and the owner's third request goes through.
    expect(
      errorOf(await gate.api.post('/v1/scans', { device_id: gate.device.code, operator_id: 'op_x' })).code,
    ).toBe('rate_limited')
    expect((await api.get(`/v1/devices/${gate.device.id}`)).status).toBe(200)
  })
})
