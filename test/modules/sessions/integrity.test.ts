import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiResponse, buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type Operator, type Session } from '../../helpers/assertions.js'
import { dialect } from '../../helpers/database.js'
import { type Body, onDay, type Scan, sessionHelpers } from './helpers.js'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const iso = (ms: number) => new Date(ms).toISOString()
const span = (from: string, to: string): Body => ({ check_in: { time: from }, check_out: { time: to } })
const on = (hhmm: string, day = '2026-03-02') => `${day}T${hhmm}:00.000Z`

describe('integrity of the record: sessions over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const {
    world,
    bodyFor,
    createSession,
    newEventTypes,
    sessionRows,
    expectCreateRefused,
    expectEditRefused,
  } = sessionHelpers(() => t)

  async function expectOverlap(res: Promise<ApiResponse>, otherId: string) {
    const error = expectError(await res, 409, 'conflict', 'overlapping_session', 'check_in.time')
    expect(error.message).toContain(otherId)
  }

  describe('times in the future', () => {
    it('refuses a check-in or check-out more than 5 minutes ahead with time_in_future, naming the field', async () => {
      const w = await world()
      const now = Date.now()
      await expectCreateRefused(
        w,
        bodyFor(w, span(iso(now + 7 * 24 * HOUR), iso(now + 7 * 24 * HOUR + 8 * HOUR))),
        'time_in_future',
        'check_in.time',
      )
      await expectCreateRefused(
        w,
        bodyFor(w, span(iso(now - HOUR), iso(now + 10 * MINUTE))),
        'time_in_future',
        'check_out.time',
      )
    })

    it('accepts a check-out up to 5 minutes ahead (a device clock drifts a little)', async () => {
      const w = await world()
      const now = Date.now()
      await createSession(w, span(iso(now - HOUR), iso(now + 4 * MINUTE)))
    })

    it('refuses an edit that moves a time into the future', async () => {
      const w = await world()
      const session = await createSession(w)
      await expectEditRefused(
        w,
        session,
        { check_out: { time: iso(Date.now() + 2 * HOUR) } },
        'time_in_future',
        'check_out.time',
      )
    })
  })

  describe('times out of any real range', () => {
    it('refuses a time before 1970 and a session longer than 72 hours with invalid_time_range', async () => {
      const w = await world()
      await expectCreateRefused(
        w,
        bodyFor(w, span('1969-12-31T23:00:00Z', '1970-01-01T01:00:00Z')),
        'invalid_time_range',
        'check_in.time',
      )
      await expectCreateRefused(
        w,
        bodyFor(w, span('0000-01-01T00:00:00Z', '2026-01-01T00:00:00Z')),
        'invalid_time_range',
        'check_in.time',
      )
      await expectCreateRefused(
        w,
        bodyFor(w, span(on('08:00'), '2026-03-05T08:00:01Z')),
        'invalid_time_range',
        'check_out.time',
      )
      // Exactly 72 hours is allowed.
      await createSession(w, span(on('08:00'), '2026-03-05T08:00:00Z'))
    })
  })

  describe('overlapping sessions', () => {
    it('refuses a backfill inside an existing session with 409 overlapping_session naming it; touching is fine', async () => {
      const w = await world()
      const day = await createSession(w, span(on('07:00'), on('16:00')))
      const before = await newEventTypes(w)
      await expectOverlap(w.api.post('/v1/sessions', bodyFor(w, span(on('10:00'), on('12:00')))), day.id)
      await expectOverlap(w.api.post('/v1/sessions', bodyFor(w, span(on('06:00'), on('07:01')))), day.id)
      await expectOverlap(w.api.post('/v1/sessions', bodyFor(w, span(on('15:59'), on('18:00')))), day.id)
      await expectOverlap(w.api.post('/v1/sessions', bodyFor(w, span(on('06:00'), on('18:00')))), day.id)
      expect(await sessionRows(w.key.account_id)).toHaveLength(1)
      expect(await newEventTypes(w)).toEqual(before)

      // Touching intervals do not overlap: one ends when the next begins.
      await createSession(w, span(on('16:00'), on('18:00')))
      await createSession(w, span(on('05:00'), on('07:00')))
      // Another operator is free to be there at the same time.
      const bob = (await w.api.post<Operator>('/v1/operators', { ident: 'W-2' })).body
      await createSession(w, { ...span(on('10:00'), on('12:00')), operator_ident: bob.ident })
    })

    it('refuses a backfill inside an open scan session (it extends to now)', async () => {
      const w = await world()
      const scan = await w.api.post<Scan>('/v1/scans', {
        device_id: w.device.code,
        operator_id: w.operator.id,
        time: on('07:00'),
      })
      expect(scan.body.result).toBe('checked_in')
      await expectOverlap(
        w.api.post('/v1/sessions', bodyFor(w, span(on('10:00'), on('12:00')))),
        scan.body.session_id ?? '',
      )
      await expectOverlap(
        w.api.post('/v1/sessions', bodyFor(w, span(on('10:00', '2026-03-04'), on('12:00', '2026-03-04')))),
        scan.body.session_id ?? '',
      )
      // Before the check-in is free.
      await createSession(w, span(on('05:00'), on('07:00')))
    })

    it('a session closed for an over-long shift occupies 16 hours from its check-in', async () => {
      const w = await world()
      const first = await w.api.post<Scan>('/v1/scans', {
        device_id: w.device.code,
        operator_id: w.operator.id,
        time: on('06:00'),
      })
      // The next scan, 17 hours later, closes it (max_shift_exceeded) and checks in.
      const next = await w.api.post<Scan>('/v1/scans', {
        device_id: w.device.code,
        operator_id: w.operator.id,
        time: on('23:00'),
      })
      expect(next.body.result).toBe('checked_in')
      const closedId = first.body.session_id ?? ''
      await expectOverlap(w.api.post('/v1/sessions', bodyFor(w, span(on('21:00'), on('22:30')))), closedId)
      await createSession(w, span(on('22:00'), on('23:00')))
    })

    it('ignores deleted sessions', async () => {
      const w = await world()
      const session = await createSession(w)
      expect((await w.api.delete(`/v1/sessions/${session.id}`)).status).toBe(200)
      await createSession(w)
    })

    it('refuses an edit that makes a session overlap another, and allows one that moves it within its own time', async () => {
      const w = await world()
      const monday = await createSession(w, onDay(2))
      const tuesday = await createSession(w, onDay(3))
      const res = w.api.patch(`/v1/sessions/${tuesday.id}`, { check_in: { time: on('15:00') } })
      await expectOverlap(res, monday.id)
      expect((await w.api.get<Session>(`/v1/sessions/${tuesday.id}`)).body).toEqual(tuesday)

      const moved = await w.api.patch<Session>(`/v1/sessions/${monday.id}`, {
        check_in: { time: on('09:00') },
        check_out: { time: on('17:00') },
      })
      expect(moved.status).toBe(200)
    })

    it('refuses moving a session to another operator who was busy then', async () => {
      const w = await world()
      const bob = (await w.api.post<Operator>('/v1/operators', { ident: 'W-2' })).body
      const mine = await createSession(w)
      const bobs = await createSession(w, { operator_ident: bob.ident, ...span(on('12:00'), on('20:00')) })
      await expectOverlap(w.api.patch(`/v1/sessions/${mine.id}`, { operator_id: bob.id }), bobs.id)
    })

    it('ten parallel creates of one interval for one operator: exactly one 201 and nine 409 overlapping_session', async () => {
      const w = await world()
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => w.api.post<Session>('/v1/sessions', bodyFor(w))),
      )
      expect(responses.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)])
      const winner = responses.find((r) => r.status === 201)?.body as Session
      for (const res of responses.filter((r) => r.status === 409)) {
        expect(expectError(res, 409, 'conflict', 'overlapping_session', 'check_in.time').message).toContain(
          winner.id,
        )
      }
      expect(await sessionRows(w.key.account_id)).toHaveLength(1)
    })

    it.runIf(dialect === 'postgres')(
      'ten parallel creates across two API processes on one PostgreSQL database: one 201, nine 409',
      async () => {
        const second = await buildTestApp({}, { database: t.database })
        try {
          const w = await world()
          const apis = [w.api, second.client(w.key.secret)]
          for (let round = 0; round < 3; round++) {
            const body = bodyFor(w, onDay(10 + round))
            const responses = await Promise.all(
              Array.from({ length: 10 }, (_, i) => apis[i % 2]?.post('/v1/sessions', body)),
            )
            const statuses = responses.map((r) => r?.status).sort()
            expect(statuses, `round ${round}`).toEqual([201, ...Array(9).fill(409)])
            for (const res of responses) {
              if (res?.status === 409)
                expectError(res, 409, 'conflict', 'overlapping_session', 'check_in.time')
            }
          }
          expect(await sessionRows(w.key.account_id)).toHaveLength(3)
        } finally {
          // Only the second app: the database belongs to `t`, which drops it.
          await second.app.close()
        }
      },
    )
  })
})
