import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiResponse, buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type List } from '../../helpers/assertions.js'
import { at, type Scan, scanHelpers } from './helpers.js'

describe('scans over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t?.close())
  const { world, scan } = scanHelpers(() => t)

  describe('listing and retrieval', () => {
    it('lists newest first, filters by operator, device and result, and pages', async () => {
      const w = await world()
      const alice = await w.operator()
      const bob = await w.operator()
      const s1 = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') })
      const s2 = await scan(w.api, { device_id: w.gateB.code, operator_id: bob.id, time: at('08:00') })
      const s3 = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00:10') })
      const s4 = await scan(w.api, { device_id: w.gateB.code, operator_id: alice.id, time: at('12:00') })
      const s5 = await scan(w.api, {
        device_id: w.gateA.code,
        operator_id: bob.id,
        time: at('12:00'),
        direction: 'in',
      })
      const ids = (res: ApiResponse<List<Scan>>) => res.body.data.map((s) => s.id)

      const all = await w.api.get<List<Scan>>('/v1/scans')
      expect(all.status).toBe(200)
      expect(ids(all)).toEqual([s5, s4, s3, s2, s1].map((s) => s.id))
      expect(all.body.data[0]).toEqual(s5)

      expect(ids(await w.api.get<List<Scan>>(`/v1/scans?operator_id=${alice.id}`))).toEqual(
        [s4, s3, s1].map((s) => s.id),
      )
      expect(ids(await w.api.get<List<Scan>>(`/v1/scans?device_id=${w.gateB.code}`))).toEqual(
        [s4, s2].map((s) => s.id),
      )
      expect(ids(await w.api.get<List<Scan>>('/v1/scans?result=flagged'))).toEqual([s5, s3].map((s) => s.id))
      expect(ids(await w.api.get<List<Scan>>('/v1/scans?result=checked_in'))).toEqual(
        [s2, s1].map((s) => s.id),
      )
      expect(
        ids(await w.api.get<List<Scan>>(`/v1/scans?result=checked_out&operator_id=${alice.id}`)),
      ).toEqual([s4.id])
      expect(
        (await w.api.get<List<Scan>>(`/v1/scans?operator_id=${alice.id}&device_id=${w.gateB.code}`)).body
          .data,
      ).toEqual([s4])

      const page1 = await w.api.get<List<Scan>>('/v1/scans?limit=2')
      expect(ids(page1)).toEqual([s5.id, s4.id])
      expect(page1.body.has_more).toBe(true)
      const page2 = await w.api.get<List<Scan>>(`/v1/scans?limit=2&cursor=${page1.body.next_cursor}`)
      expect(ids(page2)).toEqual([s3.id, s2.id])
      const page3 = await w.api.get<List<Scan>>(`/v1/scans?limit=2&cursor=${page2.body.next_cursor}`)
      expect(ids(page3)).toEqual([s1.id])
      expect(page3.body).toMatchObject({ has_more: false, next_cursor: null })

      expectError(await w.api.get('/v1/scans?result=maybe'), 422, 'validation_error')
    })

    it('another account sees none of the scans, and an unknown id is 404', async () => {
      const w = await world()
      const other = await world()
      const alice = await w.operator()
      const s = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') })
      expectError(await other.api.get(`/v1/scans/${s.id}`), 404, 'not_found')
      expect((await other.api.get<List<Scan>>('/v1/scans')).body.data).toEqual([])
      expectError(await w.api.get('/v1/scans/scn_00000000000000000000000000'), 404, 'not_found')
    })
  })
})
