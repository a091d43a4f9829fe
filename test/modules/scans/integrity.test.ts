import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError } from '../../helpers/assertions.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { at, HOUR, MINUTE, scanHelpers } from './helpers.js'

describe('integrity of the record: scans over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { world, scan, session, lastEventId, sessionRows, scanCount } = scanHelpers(() => t)

  it('a scan dated a week ahead is refused with time_in_future (param time) and opens nothing', async () => {
    const w = await world()
    const alice = await w.operator()
    const mark = await lastEventId(w.accountId)
    const res = await w.api.post('/v1/scans', {
      device_id: w.gateA.code,
      operator_id: alice.id,
      time: new Date(Date.now() + 7 * 24 * HOUR).toISOString(),
    })
    expectError(res, 422, 'validation_error', 'time_in_future', 'time')
    expect(await sessionRows(w.accountId)).toEqual([])
    expect(await scanCount(w.accountId)).toBe(0)
    expect(await eventsOf(t, w.accountId, undefined, mark)).toEqual([])

    // The operator's real scans are not blocked by it.
    const real = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id })
    expect(real.result).toBe('checked_in')
  })

  it('a scan before 1970 is refused with invalid_time_range (param time)', async () => {
    const w = await world()
    const alice = await w.operator()
    const res = await w.api.post('/v1/scans', {
      device_id: w.gateA.code,
      operator_id: alice.id,
      time: '1960-01-01T08:00:00Z',
    })
    expectError(res, 422, 'validation_error', 'invalid_time_range', 'time')
  })

  it('a late scan inside a completed session is flagged out_of_order and opens no second session', async () => {
    const w = await world()
    const alice = await w.operator()
    const checkIn = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('10:00') })
    await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('18:00') })
    const completed = await session(w.api, checkIn.session_id ?? '')
    const mark = await lastEventId(w.accountId)

    for (const direction of ['auto', 'in', 'out'] as const) {
      const late = await scan(w.api, {
        device_id: w.gateB.code,
        operator_id: alice.id,
        time: at('12:00'),
        direction,
      })
      expect(late).toMatchObject({ result: 'flagged', flag_reason: 'out_of_order', session_id: null })
    }
    expect(await sessionRows(w.accountId, alice.id)).toHaveLength(1)
    expect(await session(w.api, completed.id)).toEqual(completed)
    expect((await eventsOf(t, w.accountId, undefined, mark)).map((e) => e.type)).toEqual([
      'scan.flagged',
      'scan.flagged',
      'scan.flagged',
    ])
  })

  it('a late check-in before a recorded session is out_of_order (its session would overlap it)', async () => {
    const w = await world()
    const alice = await w.operator()
    await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('10:00') })
    await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('18:00') })
    const early = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('06:00') })
    expect(early).toMatchObject({ result: 'flagged', flag_reason: 'out_of_order' })
    // After the session ended, a check-in is in order again.
    const evening = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('19:00') })
    expect(evening.result).toBe('checked_in')
  })

  it('a late scan before the open session began is out_of_order; the next real scan checks out', async () => {
    const w = await world()
    const alice = await w.operator()
    const checkIn = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') })
    const late = await scan(w.api, {
      device_id: w.gateA.code,
      operator_id: alice.id,
      time: at('07:00'),
    })
    expect(late).toMatchObject({ result: 'flagged', flag_reason: 'out_of_order' })
    const out = await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('16:00') })
    expect(out).toMatchObject({ result: 'checked_out', session_id: checkIn.session_id })
  })

  it('a check-out scan just after a completed session is no_open_session, not out_of_order (touching)', async () => {
    const w = await world()
    const alice = await w.operator()
    await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') })
    await scan(w.api, { device_id: w.gateA.code, operator_id: alice.id, time: at('16:00') })
    const out = await scan(w.api, {
      device_id: w.gateA.code,
      operator_id: alice.id,
      time: new Date(Date.parse(at('16:00')) + 2 * MINUTE).toISOString(),
      direction: 'out',
    })
    expect(out).toMatchObject({ result: 'flagged', flag_reason: 'no_open_session' })
  })
})
