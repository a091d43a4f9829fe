import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { errorOf, expectError, type List, type Scan } from '../../helpers/assertions.js'
import { pairFrom } from '../../helpers/fixtures.js'
import { expectAnsweredAsMissing, type SitesWorld, sitesWorld, walkList } from '../../helpers/sites.js'
import { at } from './helpers.js'

/**
 * Scans for a principal held to sites (decisions.md, "Sites"): a scan happens where its device
 * stands; at a device elsewhere, or standing nowhere, it does not exist.
 */
describe('scans at other sites', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  type Where = 'here' | 'there' | 'nowhere'
  async function scan(w: SitesWorld, where: Where, time: string, operator = w.operators.here.id) {
    const res = await w.owner.post<Scan>('/v1/scans', {
      operator_id: operator,
      device_id: w.devices[where].code,
      time,
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body
  }

  it('reads and lists the scans at its devices only, in full pages; others answer as missing ids', async () => {
    const w = await sitesWorld(t)
    const places: Where[] = ['here', 'there', 'nowhere']
    const mine: string[] = []
    const others: string[] = []
    for (let hour = 6; hour < 18; hour++) {
      const where = places[hour % 3] as Where
      const made = await scan(w, where, at(`${String(hour).padStart(2, '0')}:00`))
      ;(where === 'here' ? mine : others).push(made.id)
    }
    const list = await walkList(w.restricted, '/v1/scans', 3)
    expect(list.ids).toEqual([...mine].reverse())
    expect(list.pages).toEqual([3, 1])
    const read = await w.restricted.get<Scan>(`/v1/scans/${mine[0]}`)
    expect(read.status).toBe(200)
    for (const id of others) {
      await expectAnsweredAsMissing(
        w.restricted,
        { method: 'GET', path: (s) => `/v1/scans/${s}` },
        id,
        w.owner,
      )
    }
    const byDevice = await w.restricted.get<List<Scan>>(`/v1/scans?device_id=${w.devices.there.code}`)
    expect(byDevice.body.data).toEqual([])
    expect((await walkList(w.owner, '/v1/scans', 50)).ids).toHaveLength(12)
  })

  it('scans at its devices only: one elsewhere or standing nowhere is an unknown device, alone or in a batch', async () => {
    const w = await sitesWorld(t)
    const body = (where: Where, time: string) => ({
      operator_id: w.operators.there.id,
      device_id: w.devices[where].code,
      time,
    })
    for (const where of ['there', 'nowhere'] as const) {
      const res = await w.restricted.post('/v1/scans', body(where, at('08:00')))
      const error = expectError(res, 422, 'validation_error', 'unknown_device', 'device_id')
      const nothing = await w.restricted.post('/v1/scans', {
        ...body(where, at('08:00')),
        device_id: 'NO-SUCH',
      })
      expect(error.message.replace(w.devices[where].code, '<v>')).toBe(
        errorOf(nothing).message.replace('NO-SUCH', '<v>'),
      )
    }
    const batch = await w.restricted.post<{ data: Array<{ id?: string; code?: string }> }>(
      '/v1/scans/batch',
      {
        scans: [body('there', at('09:00')), body('here', at('10:00')), body('nowhere', at('11:00'))],
      },
    )
    expect(batch.status, JSON.stringify(batch.body)).toBe(200)
    expect(batch.body.data.map((item) => item.code ?? 'scan')).toEqual([
      'unknown_device',
      'scan',
      'unknown_device',
    ])
    // An operator homed elsewhere scans at its device; that one scan alone was recorded.
    const recorded = await w.owner.get<List<Scan>>('/v1/scans')
    expect(recorded.body.data.map((s) => s.id)).toEqual([batch.body.data[1]?.id])
  })

  it("a device's own key scans at it whatever keys are held to (device keys see every location)", async () => {
    const w = await sitesWorld(t)
    const code = await w.owner.post<{ code: string }>(`/v1/devices/${w.devices.there.id}/pairing-codes`)
    const pairing = await pairFrom<{ key: { secret: string } }>(t, code.body.code)
    expect(pairing.status).toBe(201)
    const device = t.client(pairing.body.key.secret)
    const res = await device.post<Scan>('/v1/scans', {
      operator_id: w.operators.here.id,
      device_id: w.devices.there.code,
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    await expectAnsweredAsMissing(
      w.restricted,
      { method: 'GET', path: (s) => `/v1/scans/${s}` },
      res.body.id,
      w.owner,
    )
  })
})
