import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Operation, ResponseOf } from '../../../packages/client/src/types.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError } from '../../helpers/assertions.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { at, MINUTE, plus, type Scan, scanHelpers } from './helpers.js'

type BatchAnswer = ResponseOf<Operation<'/v1/scans/batch', 'post'>>
/** An item refused: the `error` of the envelope `POST /v1/scans` would have answered with. */
type ItemError = Exclude<BatchAnswer['data'][number], Scan>

describe('POST /v1/scans/batch', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { world, sessionRows, lastEventId, scanCount, accountName } = scanHelpers(() => t)

  it('applies the scans in time order (ties in array order) and answers in input order', async () => {
    const w = await world()
    const alice = await w.operator()
    const bob = await w.operator()
    const device_id = w.gateA.code
    const scans = [
      { device_id, operator_id: alice.id, time: at('17:00') },
      { device_id, operator_id: bob.id, time: at('09:00') },
      { device_id, operator_id: alice.id, time: at('08:00') },
      { device_id, operator_id: bob.id, time: at('09:00'), direction: 'in' },
      { device_id, operator_id: bob.id, time: at('15:00') },
    ]
    const res = await w.api.post<BatchAnswer>('/v1/scans/batch', { scans })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null })
    const data = res.body.data as Scan[]
    expect(data.map((s) => [s.operator_id, s.time, s.result, s.flag_reason])).toEqual([
      [alice.id, at('17:00'), 'checked_out', null],
      [bob.id, at('09:00'), 'checked_in', null],
      [alice.id, at('08:00'), 'checked_in', null],
      // The tie at 09:00 keeps array order: the first checked in, the second repeats it.
      [bob.id, at('09:00'), 'flagged', 'duplicate_scan'],
      [bob.id, at('15:00'), 'checked_out', null],
    ])
    const sessions = await sessionRows(w.accountId)
    expect(sessions.map((s) => [s.operator_id, s.check_in_at, s.check_out_at])).toEqual([
      [alice.id, Date.parse(at('08:00')), Date.parse(at('17:00'))],
      [bob.id, Date.parse(at('09:00')), Date.parse(at('15:00'))],
    ])
  })

  it('one bad item never stops the others: its entry is the error POST /v1/scans would answer', async () => {
    const w = await world()
    const alice = await w.operator()
    const mark = await lastEventId(w.accountId)
    const device_id = w.gateA.code
    const res = await w.api.post<BatchAnswer>('/v1/scans/batch', {
      scans: [
        { device_id, operator_id: alice.id, time: at('08:00') },
        { device_id: 'no-such-gate', operator_id: alice.id, time: at('09:00') },
        { device_id, operator_id: alice.id, time: 'yesterday' },
        { device_id, operator_id: alice.id, time: new Date(Date.now() + 86_400_000).toISOString() },
        { device_id, operator_ident: 'nobody', time: at('10:00') },
        { device_id, operator_id: alice.id, time: at('16:00') },
      ],
    })
    expect(res.status).toBe(200)
    const [first, unknownDevice, badTime, future, unknownOperator, last] = res.body.data as [
      Scan,
      ItemError,
      ItemError,
      ItemError,
      ItemError,
      Scan,
    ]
    expect(first.result).toBe('checked_in')
    expect(unknownDevice).toMatchObject({
      type: 'validation_error',
      code: 'unknown_device',
      param: 'device_id',
    })
    expect(badTime).toMatchObject({ code: 'invalid_timestamp', param: 'time' })
    expect(future).toMatchObject({ code: 'time_in_future', param: 'time' })
    expect(unknownOperator).toMatchObject({ code: 'unknown_operator', param: 'operator_ident' })
    expect(unknownDevice.request_id).toBe(res.headers['x-request-id'])
    expect(last).toMatchObject({ result: 'checked_out', session_id: first.session_id })
    expect(await scanCount(w.accountId)).toBe(2)
    expect((await eventsOf(t, w.accountId, undefined, mark)).map((e) => e.type)).toEqual([
      'scan.checked_in',
      'scan.checked_out',
      'session.completed',
    ])
  })

  it('is idempotent as a whole with an Idempotency-Key', async () => {
    const w = await world()
    const alice = await w.operator()
    const body = {
      scans: [
        { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') },
        { device_id: w.gateA.code, operator_id: alice.id, time: at('12:00') },
      ],
    }
    const headers = { 'idempotency-key': `batch-${alice.id}` }
    const first = await w.api.post<BatchAnswer>('/v1/scans/batch', body, headers)
    expect(first.status).toBe(200)
    const again = await w.api.post<BatchAnswer>('/v1/scans/batch', body, headers)
    expect(again.status).toBe(200)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body).toEqual(first.body)
    expect(await scanCount(w.accountId)).toBe(2)

    const other = await w.api.post('/v1/scans/batch', { scans: body.scans.slice(0, 1) }, headers)
    expectError(other, 409, 'conflict', 'idempotency_key_reuse')
  })

  it('takes up to 500 scans; 501 is 422 naming scans, and an empty batch too', async () => {
    const w = await world()
    const alice = await w.operator()
    const scanAt = (i: number) => ({
      device_id: w.gateA.code,
      operator_id: alice.id,
      time: plus(at('00:00', '2026-01-01'), i * 2 * MINUTE),
    })
    const tooMany = await w.api.post('/v1/scans/batch', {
      scans: Array.from({ length: 501 }, (_, i) => scanAt(i)),
    })
    expectError(tooMany, 422, 'validation_error', 'invalid_value', 'scans')
    expectError(
      await w.api.post('/v1/scans/batch', { scans: [] }),
      422,
      'validation_error',
      undefined,
      'scans',
    )
    expect(await scanCount(w.accountId)).toBe(0)

    const started = performance.now()
    const full = await w.api.post<BatchAnswer>('/v1/scans/batch', {
      scans: Array.from({ length: 500 }, (_, i) => scanAt(i)),
    })
    const elapsed = performance.now() - started
    expect(full.status).toBe(200)
    const results = (full.body.data as Scan[]).map((s) => s.result)
    expect(results).toEqual(
      Array.from({ length: 500 }, (_, i) => (i % 2 === 0 ? 'checked_in' : 'checked_out')),
    )
    expect(await sessionRows(w.accountId, alice.id)).toHaveLength(250)
    // Not an assertion on speed (the machine is shared): the figure docs/attendance.md quotes.
    console.info(`a batch of 500 scans took ${Math.round(elapsed)} ms`)
  })

  it('needs scans:write', async () => {
    const w = await world()
    const key = await t.key({ account: await accountName(w.accountId), scopes: ['scans:read'] })
    const res = await t.client(key.secret).post('/v1/scans/batch', { scans: [] })
    expectError(res, 403, 'insufficient_scope', 'missing_scope')
  })
})
