import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import type { Session } from '../../helpers/assertions.js'
import { CREATED, sessionHelpers } from './helpers.js'

describe('sessions over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { world, bodyFor, createSession, newEvents, newEventTypes, expectCreateRefused } = sessionHelpers(
    () => t,
  )

  describe('times', () => {
    it.each([
      ['equal to check_in', '2026-03-02T08:00:00Z'],
      ['equal to check_in in another offset', '2026-03-02T09:00:00+01:00'],
      ['earlier than check_in', '2026-03-02T07:59:59Z'],
    ])('refuses a check_out %s with invalid_time_range on check_out.time', async (_label, checkOut) => {
      const w = await world()
      await expectCreateRefused(
        w,
        bodyFor(w, { check_out: { time: checkOut } }),
        'invalid_time_range',
        'check_out.time',
      )
    })

    it.each([
      ['check_in', 'no zone designator', '2026-03-02T08:00:00'],
      ['check_in', 'garbage', 'yesterday morning'],
      ['check_in', 'a date that does not exist', '2026-02-30T08:00:00Z'],
      ['check_in', 'a date without a time', '2026-03-02'],
      ['check_out', 'no zone designator', '2026-03-02T16:00:00.000'],
      ['check_out', 'garbage', 'not-a-time'],
      ['check_out', 'a date that does not exist', '2026-02-30T16:00:00Z'],
      ['check_out', 'an hour that does not exist', '2026-03-02T25:00:00Z'],
    ])('refuses %s.time with %s as invalid_timestamp', async (field, _label, value) => {
      const w = await world()
      await expectCreateRefused(
        w,
        bodyFor(w, { [field]: { time: value } }),
        'invalid_timestamp',
        `${field}.time`,
      )
    })

    it('refuses break_minutes longer than the session with break_exceeds_duration; equal gives 0 hours', async () => {
      const w = await world()
      const oneHour = {
        check_in: { time: '2026-03-02T08:00:00Z' },
        check_out: { time: '2026-03-02T09:00:00Z' },
      }
      await expectCreateRefused(
        w,
        bodyFor(w, { ...oneHour, break_minutes: 61 }),
        'break_exceeds_duration',
        'break_minutes',
      )
      const full = await createSession(w, { ...oneHour, break_minutes: 60 })
      expect(full.total_hours).toBe(0)
      expect(await newEventTypes(w)).toEqual(CREATED)
    })

    it('returns times in UTC with milliseconds, whatever offset they were sent in', async () => {
      const w = await world()
      const session = await createSession(w, {
        check_in: { time: '2026-03-02T09:15:30.250+05:30' },
        check_out: { time: '2026-03-01T23:00:00-08:00' },
      })
      expect(session.check_in.time).toBe('2026-03-02T03:45:30.250Z')
      expect(session.check_out?.time).toBe('2026-03-02T07:00:00.000Z')
      // 3 h 14 min 29.75 s = 3.2415 h
      expect(session.total_hours).toBe(3.24)
    })

    it.each([
      ['a full day with no break', '2026-03-02T08:00:00Z', '2026-03-02T16:00:00Z', 0, 8],
      ['a break equal to the whole session', '2026-03-02T08:00:00Z', '2026-03-02T09:00:00Z', 60, 0],
      [
        'the spring DST day in Paris (7 real hours)',
        '2026-03-29T00:30:00+01:00',
        '2026-03-29T08:30:00+02:00',
        0,
        7,
      ],
      [
        'the autumn DST day in Paris (9 real hours)',
        '2026-10-25T00:30:00+02:00',
        '2026-10-25T08:30:00+01:00',
        0,
        9,
      ],
      ['a night shift across midnight', '2026-03-01T22:00:00Z', '2026-03-02T06:00:00Z', 30, 7.5],
      ['across midnight and a month end', '2026-02-28T23:30:00Z', '2026-03-01T00:15:00Z', 0, 0.75],
      ['1 h 0 min 30 s (seconds count)', '2026-03-02T08:00:00Z', '2026-03-02T09:00:30Z', 0, 1.01],
      ['1 h 0 min 18 s = 1.005 h, half-up', '2026-03-02T08:00:00Z', '2026-03-02T09:00:18Z', 0, 1.01],
      ['2 h 0 min 18 s = 2.005 h, half-up', '2026-03-02T08:00:00Z', '2026-03-02T10:00:18Z', 0, 2.01],
      [
        '20 min 42 s = 0.345 h, half-up (not to even)',
        '2026-03-02T08:00:00Z',
        '2026-03-02T08:20:42Z',
        0,
        0.35,
      ],
      ['20 min 41 s = 0.3447 h, down', '2026-03-02T08:00:00Z', '2026-03-02T08:20:41Z', 0, 0.34],
      ['1 min 48 s = 0.03 h', '2026-03-02T08:00:00Z', '2026-03-02T08:01:48Z', 0, 0.03],
      ['18 s = 0.005 h, half-up', '2026-03-02T08:00:00Z', '2026-03-02T08:00:18Z', 0, 0.01],
      ['17.999 s, just under half, down', '2026-03-02T08:00:00Z', '2026-03-02T08:00:17.999Z', 0, 0],
      [
        '2 h 30 min 18 s minus a 30 min break = 2.005 h',
        '2026-03-02T08:00:00Z',
        '2026-03-02T10:30:18Z',
        30,
        2.01,
      ],
      ['a break leaving 0.345 h', '2026-03-02T08:00:00Z', '2026-03-02T09:20:42Z', 60, 0.35],
    ])('total_hours for %s', async (_label, checkIn, checkOut, breakMinutes, expected) => {
      const w = await world()
      const session = await createSession(w, {
        check_in: { time: checkIn },
        check_out: { time: checkOut },
        break_minutes: breakMinutes,
      })
      expect(session.total_hours).toBe(expected)
      expect((await w.api.get<Session>(`/v1/sessions/${session.id}`)).body.total_hours).toBe(expected)
      const events = await newEvents(w)
      expect(events.map((e) => e.type)).toEqual(CREATED)
      expect(events.map((e) => e.data.object.total_hours)).toEqual([expected, expected])
    })

    it('reports the DST day in UTC', async () => {
      const w = await world()
      const session = await createSession(w, {
        check_in: { time: '2026-03-29T00:30:00+01:00' },
        check_out: { time: '2026-03-29T08:30:00+02:00' },
      })
      expect(session.check_in.time).toBe('2026-03-28T23:30:00.000Z')
      expect(session.check_out?.time).toBe('2026-03-29T06:30:00.000Z')
    })
  })
})
