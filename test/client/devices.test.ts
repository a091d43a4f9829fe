import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AttendanceApiError, AttendanceClient } from '../../packages/client/src/index.js'
import { type ServedApp, serveApp, uniq } from './setup.js'

describe('AttendanceClient: pairing a device and scanning with its key, over HTTP', () => {
  let served: ServedApp
  beforeAll(async () => {
    served = await serveApp()
  })
  afterAll(() => served?.close())

  it('createPairingCode, pair, current, scans with the device key, unpair; operators take a pin', async () => {
    const { client } = await served.client()
    const device = await client.devices.create({ code: uniq('DEV'), require_pin: true })
    const code = await client.devices.createPairingCode(device.id)
    expect(code).toMatchObject({ object: 'device_pairing_code', device_id: device.code })
    const pairing = await client.devices.pair({ code: code.code })
    expect(pairing.device).toMatchObject({ id: device.id, paired: true, require_pin: true })

    const kiosk = new AttendanceClient({ apiKey: pairing.key.secret, baseUrl: served.baseUrl })
    expect(kiosk.mode).toBe('test')
    const current = await kiosk.devices.current()
    expect(current).toMatchObject({ object: 'current_device', require_pin: true, pin_key: { kty: 'RSA' } })

    const operator = await client.operators.create({ ident: uniq('W'), name: 'Ada', pin: '1234' })
    expect(operator.has_pin).toBe(true)
    const scan = await kiosk.scans.create({
      device_id: device.code,
      operator_id: operator.id,
      pin: '1234',
      client_scan_id: 'c-1',
    })
    expect(scan).toMatchObject({
      result: 'checked_in',
      operator_name: 'Ada',
      client_scan_id: 'c-1',
      clock_skew_ms: null,
    })
    const refused = await kiosk.scans
      .create({ device_id: device.code, operator_id: operator.id, pin: '9999' })
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(AttendanceApiError)
    expect(refused).toMatchObject({ status: 422, code: 'invalid_pin' })

    expect(await client.devices.unpair(device.id)).toMatchObject({ paired: false })
  })
})
