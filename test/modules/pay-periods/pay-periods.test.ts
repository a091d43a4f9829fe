import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Trx } from '../../../src/db/types.js'
import { addDays, calendarDate } from '../../../src/lib/dates.js'
import { newId } from '../../../src/lib/ids.js'
import { lockPayPeriods } from '../../../src/modules/pay-periods/repository.js'
import { type ApiResponse, buildTestApp, type TestApp } from '../../helpers/app.js'
import {
  expectError,
  ISO_MS,
  type List,
  type PayPeriod,
  type Session,
  waitUntil,
} from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import { dialect } from '../../helpers/database.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { created, ok, world } from '../../helpers/world.js'

const PERIOD_KEYS = [
  'closed_at',
  'closed_by',
  'created',
  'end_date',
  'id',
  'livemode',
  'object',
  'start_date',
  'status',
  'totals',
  'updated',
]

describe('pay periods over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp({ webhookAllowPrivateUrls: true })
  })
  afterAll(() => t.close())

  describe('create, retrieve, list', () => {
    it('creates an open period and emits pay_period.created', async () => {
      const w = await world(t)
      const period = await created(w.period('2026-11-01', '2026-11-30'))
      expect(Object.keys(period).sort()).toEqual(PERIOD_KEYS)
      expect(period).toMatchObject({
        object: 'pay_period',
        start_date: '2026-11-01',
        end_date: '2026-11-30',
        status: 'open',
        closed_at: null,
        closed_by: null,
        totals: null,
        livemode: false,
      })
      expect(period.id).toMatch(/^pp_[0-9A-Z]{26}$/)
      expect(period.created).toMatch(ISO_MS)
      expect(await ok(w.api.get(`/v1/pay-periods/${period.id}`))).toEqual(period)
      const events = await eventsOf(t, w.accountId)
      expect(events.map((e) => e.type).filter((type) => type.startsWith('pay_period'))).toEqual([
        'pay_period.created',
      ])
      expect(events[events.length - 1]?.data.object).toEqual(period)
    })

    it('refuses end before start and more than 62 days (invalid_date_range), and dates that do not exist', async () => {
      const w = await world(t)
      expectError(
        await w.period('2026-11-02', '2026-11-01'),
        422,
        'validation_error',
        'invalid_date_range',
        'end_date',
      )
      expectError(
        await w.period('2026-01-01', '2026-03-04'),
        422,
        'validation_error',
        'invalid_date_range',
        'end_date',
      )
      await created(w.period('2026-01-01', '2026-03-03')) // 62 days, both ends counted
      await created(w.period('2026-03-04', '2026-03-04')) // one day
      expectError(
        await w.period('2026-02-30', '2026-03-10'),
        422,
        'validation_error',
        'invalid_value',
        'start_date',
      )
      expectError(
        await w.period('2026-3-1', '2026-03-10'),
        422,
        'validation_error',
        'invalid_value',
        'start_date',
      )
      expectError(
        await w.root.post('/v1/pay-periods', { start_date: '2026-05-01' }),
        422,
        'validation_error',
        'missing_param',
        'end_date',
      )
      expectError(
        await w.root.post('/v1/pay-periods', {
          start_date: '2026-05-01',
          end_date: '2026-05-02',
          status: 'closed',
        }),
        422,
        'validation_error',
        'unknown_param',
        'status',
      )
    })

    it('refuses a period sharing a day with another (409 overlapping_period); neighbours and other modes are fine', async () => {
      const w = await world(t)
      const nov = await created(w.period('2026-11-01', '2026-11-30'))
      for (const [start, end] of [
        ['2026-11-30', '2026-12-05'],
        ['2026-10-20', '2026-11-01'],
        ['2026-11-10', '2026-11-12'],
        ['2026-10-01', '2026-12-01'],
      ] as const) {
        const error = expectError(await w.period(start, end), 409, 'conflict', 'overlapping_period')
        expect(error.message).toContain(nov.id)
      }
      await created(w.period('2026-12-01', '2026-12-31'))
      await created(w.period('2026-10-01', '2026-10-31'))
      const live = await world(t, { account: w.account, mode: 'live' })
      await created(live.period('2026-11-01', '2026-11-30'))
      const other = await world(t)
      await created(other.period('2026-11-01', '2026-11-30'))
    })

    it('two overlapping creates at once: exactly one wins', async () => {
      const w = await world(t)
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => w.period(`2026-0${1 + (i % 2)}-01`, '2026-02-20')),
      )
      expect(answers.filter((a) => a.status === 201)).toHaveLength(1)
      for (const a of answers.filter((x) => x.status !== 201))
        expectError(a, 409, 'conflict', 'overlapping_period')
    })

    it('lists newest first, filters by status, pages, and hides other accounts', async () => {
      const w = await world(t)
      const a = await created(w.period('2026-01-01', '2026-01-31'))
      const b = await created(w.period('2026-02-01', '2026-02-28'))
      const c = await created(w.period('2026-03-01', '2026-03-31'))
      await ok(w.close(a.id))
      const list = await ok(w.api.get<List<PayPeriod>>('/v1/pay-periods'))
      expect(list.data.map((p) => p.id)).toEqual([c.id, b.id, a.id])
      const closed = await ok(w.api.get<List<PayPeriod>>('/v1/pay-periods?status=closed'))
      expect(closed.data.map((p) => p.id)).toEqual([a.id])
      const page = await ok(w.api.get<List<PayPeriod>>('/v1/pay-periods?limit=2'))
      expect(page).toMatchObject({ has_more: true })
      const next = await ok(w.api.get<List<PayPeriod>>(`/v1/pay-periods?limit=2&cursor=${page.next_cursor}`))
      expect(next.data.map((p) => p.id)).toEqual([a.id])
      const other = await world(t)
      expectError(await other.api.get(`/v1/pay-periods/${a.id}`), 404, 'not_found', 'resource_missing')
      expect((await ok(other.api.get<List<PayPeriod>>('/v1/pay-periods'))).data).toEqual([])
    })
  })

  describe('close and reopen', () => {
    it('refuses to close while sessions are pending or open (pending_reviews, the counts), then closes', async () => {
      const w = await world(t)
      const op = await w.operator()
      const period = await created(w.period('2026-10-01', '2026-10-31'))
      const a = await w.session(op, '2026-10-02T08:00:00Z', '2026-10-02T16:00:00Z')
      const b = await w.session(op, '2026-10-03T08:00:00Z', '2026-10-03T16:00:00Z')
      const open = await w.scan(await w.operator(), '2026-10-04T08:00:00Z')
      // Outside the period: does not count.
      await w.session(op, '2026-09-30T08:00:00Z', '2026-09-30T16:00:00Z')

      let error = expectError(await w.close(period.id), 409, 'conflict', 'pending_reviews')
      expect(error.message).toContain('2 pending, 1 still open, 0 without a check-out')
      await ok(w.approve(a.id))
      await ok(w.reject(b.id, 'no'))
      error = expectError(await w.close(period.id), 409, 'conflict', 'pending_reviews')
      expect(error.message).toContain('0 pending, 1 still open, 0 without a check-out')
      await w.scan(await lastOperator(w), '2026-10-04T16:00:00Z')
      expect((await ok(w.api.get<Session>(`/v1/sessions/${open.session_id}`))).status).toBe('completed')

      const closed = await ok(w.close(period.id))
      expect(closed).toMatchObject({ id: period.id, status: 'closed' })
      expect(closed.closed_at).toMatch(ISO_MS)
      // Closed by the world's root key (no label): who did it.
      expect(closed.closed_by).toEqual({ type: 'api_key', id: w.admin.id, name: null })
      // The stored timesheet's totals (pay-rules.test.ts checks them under a rule).
      expect(closed.totals).toMatchObject({ operators: expect.any(Number), hours: expect.any(Number) })
      expect(await ok(w.api.get(`/v1/pay-periods/${period.id}`))).toEqual(closed)
      // Closing again changes nothing and emits nothing.
      expect(await ok(w.close(period.id))).toEqual(closed)

      const reopened = await ok(w.reopen(period.id))
      expect(reopened).toMatchObject({ status: 'open', closed_at: null, closed_by: null, totals: null })
      expect(await ok(w.reopen(period.id))).toEqual(reopened)
      const events = (await eventsOf(t, w.accountId)).filter((e) => e.type.startsWith('pay_period'))
      expect(events.map((e) => e.type)).toEqual([
        'pay_period.created',
        'pay_period.closed',
        'pay_period.reopened',
      ])
      expect(events[1]?.data.object).toEqual(closed)
      expect(events[1]?.data.previous_attributes).toMatchObject({
        status: 'open',
        closed_at: null,
        closed_by: null,
        totals: null,
      })
      expect(events[2]?.data.previous_attributes).toMatchObject({
        status: 'closed',
        closed_at: closed.closed_at,
        closed_by: closed.closed_by,
        totals: closed.totals,
      })
    })

    it('a closed period freezes its sessions: create, edit, delete, approve, reject answer period_closed; scans are flagged', async () => {
      const w = await world(t)
      const op = await w.operator()
      const period = await created(w.period('2026-10-01', '2026-10-31'))
      const inside = await w.session(op, '2026-10-02T08:00:00Z', '2026-10-02T16:00:00Z')
      const outside = await w.session(op, '2026-09-02T08:00:00Z', '2026-09-02T16:00:00Z')
      await ok(w.approve(inside.id))
      await ok(w.close(period.id))

      const refused = (res: Parameters<typeof expectError>[0]) =>
        expectError(res, 409, 'conflict', 'period_closed')
      const e = refused(
        await w.root.post('/v1/sessions', {
          operator_id: op.id,
          device_id: 'GATE',
          check_in: { time: '2026-10-05T08:00:00Z' },
          check_out: { time: '2026-10-05T10:00:00Z' },
        }),
      )
      expect(e.message).toContain(period.id)
      expect(e.message).toContain('2026-10-05')
      refused(await w.root.patch(`/v1/sessions/${inside.id}`, { notes: 'late' }))
      refused(await w.root.delete(`/v1/sessions/${inside.id}`))
      refused(await w.approve(inside.id))
      refused(await w.reject(inside.id, 'no'))
      // Moving a session into the closed period, from outside, is refused too.
      refused(
        await w.root.patch(`/v1/sessions/${outside.id}`, {
          check_in: { time: '2026-10-31T08:00:00Z' },
          check_out: { time: '2026-10-31T10:00:00Z' },
        }),
      )
      // Sessions outside the period are not affected.
      await ok(w.root.patch(`/v1/sessions/${outside.id}`, { notes: 'fine' }))
      // A scan that would open a session in it: flagged, nothing changes.
      const other = await w.operator()
      const scan = await w.scan(other, '2026-10-10T08:00:00Z')
      expect(scan).toMatchObject({ result: 'flagged', flag_reason: 'period_closed', session_id: null })
      const scanned = await ok(w.api.get<List<Session>>(`/v1/sessions?operator_id=${other.id}`))
      expect(scanned.data).toEqual([])
      expect((await eventsOf(t, w.accountId)).pop()?.type).toBe('scan.flagged')
      // The session is untouched.
      expect((await ok(w.api.get<Session>(`/v1/sessions/${inside.id}`))).review_status).toBe('approved')

      await ok(w.reopen(period.id))
      await ok(w.root.patch(`/v1/sessions/${inside.id}`, { notes: 'late' }))
      expect((await w.scan(other, '2026-10-10T08:00:00Z')).result).toBe('checked_in')
    })

    it('a session without a check-out keeps the period open: counted when pending, and when approved before that was refused', async () => {
      const w = await world(t)
      const op = await w.operator()
      const period = await created(w.period('2026-10-01', '2026-10-31'))
      // A forgotten check-out: the next scan, 25 hours later, closes it (max_shift_exceeded) and
      // checks in; the check-out after that completes the new session.
      const forgotten = await w.scan(op, '2026-10-05T08:00:00Z')
      await w.scan(op, '2026-10-06T09:00:00Z')
      await w.scan(op, '2026-10-06T17:00:00Z')
      const closed = await ok(w.api.get<Session>(`/v1/sessions/${forgotten.session_id}`))
      expect(closed).toMatchObject({ status: 'completed', check_out: null, review_status: 'pending' })

      let error = expectError(await w.close(period.id), 409, 'conflict', 'pending_reviews')
      expect(error.message).toContain('1 pending, 0 still open, 1 without a check-out')
      // Data from before approving one was refused: approved, still without a check-out.
      await t.db
        .updateTable('sessions')
        .set({ review_status: 'approved', reviewed_at: Date.now(), reviewed_by: w.admin.id })
        .where('id', '=', closed.id)
        .execute()
      error = expectError(await w.close(period.id), 409, 'conflict', 'pending_reviews')
      expect(error.message).toContain('0 pending, 0 still open, 1 without a check-out')
      expect(error.message).toContain('PATCH')

      // Rejected, it counts for nothing and holds nothing up.
      await ok(w.reject(closed.id, 'not worked'))
      await ok(w.close(period.id))
      await ok(w.reopen(period.id))
      // Given its check-out by an edit, it is pending again, and once approved the period closes.
      const completed = await ok(
        w.root.patch<Session>(`/v1/sessions/${closed.id}`, {
          check_out: { time: '2026-10-05T16:30:00Z' },
          break_minutes: 30,
        }),
      )
      expect(completed).toMatchObject({ review_status: 'pending', total_hours: 8 })
      error = expectError(await w.close(period.id), 409, 'conflict', 'pending_reviews')
      expect(error.message).toContain('1 pending, 0 still open, 0 without a check-out')
      await ok(w.approve(closed.id))
      expect(await ok(w.close(period.id))).toMatchObject({ status: 'closed' })
    })

    describe('not before the period is over (period_not_over)', () => {
      // The service's clock stands still: "today" is the same day for the test and for every
      // request it makes, whenever the day turns outside.
      const clock = useTestClock()

      it('refuses a period ending today, before counting its sessions, with the instant it can close; a period that ended closes', async () => {
        const w = await world(t)
        const today = calendarDate(clock.now(), 'UTC')
        const tomorrow = addDays(today, 1)
        const current = await created(w.period(today, today))
        // A pending session in it: period_not_over is answered first.
        await w.session(await w.operator(), `${today}T00:00:00Z`, `${today}T00:01:00Z`)
        const error = expectError(await w.close(current.id), 409, 'conflict', 'period_not_over')
        expect(error.message).toContain(`${tomorrow}T00:00:00.000Z`)
        expect(error.message).toContain('UTC')
        expect((await ok(w.api.get<PayPeriod>(`/v1/pay-periods/${current.id}`))).status).toBe('open')

        const ended = await created(w.period(addDays(today, -3), addDays(today, -1)))
        expect(await ok(w.close(ended.id))).toMatchObject({ status: 'closed' })
      })

      it("waits for the day after to begin in every zone of the mode's locations: Pago Pago (UTC−11) after Kiritimati (UTC+14)", async () => {
        const w = await world(t, { timezone: 'Pacific/Kiritimati' })
        // A location of the other mode does not count.
        await world(t, { account: w.account, mode: 'live', timezone: 'Pacific/Pago_Pago' })
        // Today in Pago Pago: over in Kiritimati, where it is already the next day (or the one after).
        const day = calendarDate(clock.now(), 'Pacific/Pago_Pago')
        const period = await created(w.period(day, day))
        const samoa = await created(
          w.root.post<{ id: string }>('/v1/locations', { name: 'Samoa', timezone: 'Pacific/Pago_Pago' }),
        )
        const error = expectError(await w.close(period.id), 409, 'conflict', 'period_not_over')
        // Midnight in Pago Pago, 11:00 UTC: the latest start of the next day of any zone in use.
        expect(error.message).toContain(`${addDays(day, 1)}T11:00:00.000Z`)
        expect(error.message).toContain('Pacific/Pago_Pago')

        await ok(w.root.delete(`/v1/locations/${samoa.id}`))
        expect(await ok(w.close(period.id))).toMatchObject({ status: 'closed' })
      })
    })

    it('404 for an unknown period; close and reopen need timesheets:write and sessions:approve', async () => {
      const w = await world(t)
      expectError(await w.close('pp_nope'), 404, 'not_found', 'resource_missing')
      const period = await created(w.period('2026-10-01', '2026-10-31'))
      const as = async (
        scopes: Parameters<typeof t.key>[0] extends infer O
          ? O extends { scopes?: infer S }
            ? S
            : never
          : never,
      ) => t.client((await t.key({ account: w.account, scopes })).secret)
      const writer = await as(['timesheets:write'])
      const approver = await as(['sessions:approve'])
      const reader = await as(['timesheets:read'])
      const both = await as(['timesheets:write', 'sessions:approve'])
      expectError(await writer.post(`/v1/pay-periods/${period.id}/close`), 403, 'insufficient_scope')
      expectError(await approver.post(`/v1/pay-periods/${period.id}/close`), 403, 'insufficient_scope')
      expectError(
        await reader.post('/v1/pay-periods', { start_date: '2027-01-01', end_date: '2027-01-02' }),
        403,
        'insufficient_scope',
      )
      expect((await reader.get(`/v1/pay-periods/${period.id}`)).status).toBe(200)
      expect((await writer.get('/v1/pay-periods')).status).toBe(200)
      expectError(await approver.get('/v1/pay-periods'), 403, 'insufficient_scope')
      expect((await both.post(`/v1/pay-periods/${period.id}/close`)).status).toBe(200)
      expect((await both.post(`/v1/pay-periods/${period.id}/reopen`)).status).toBe(200)
    })
  })

  it('its events are subscribable as pay_period.* (and exactly)', async () => {
    const w = await world(t)
    for (const enabled_events of [['pay_period.*'], ['pay_period.closed', 'pay_period.reopened']]) {
      const res = await w.root.post('/v1/webhook-endpoints', {
        url: 'http://127.0.0.1:9/hook',
        enabled_events,
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
    }
    expectError(
      await w.root.post('/v1/webhook-endpoints', {
        url: 'http://127.0.0.1:9/hook',
        enabled_events: ['pay_period.opened'],
      }),
      422,
      'validation_error',
      'invalid_event_type',
    )
  })

  // The lock itself, step by step: a transaction of this test holds it the way a session write (or
  // a close) does, and the HTTP request on the other side must wait for it.
  describe.runIf(dialect === 'postgres')('the pay-period lock (PostgreSQL)', () => {
    /** Waits until another connection's statement waits for a lock that `trx` holds. */
    const blockedBy = async (trx: Trx) => {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)
      const holder = rows[0]?.pid
      await waitUntil(
        async () =>
          (
            await sql<{
              n: number
            }>`select count(*)::int as n from pg_stat_activity where ${holder}::int = any(pg_blocking_pids(pid))`.execute(
              t.db,
            )
          ).rows[0]?.n,
        (n) => n === 1,
      )
    }

    it('a close waits for a session write in flight, then counts the session it wrote', async () => {
      const w = await world(t)
      const op = await w.operator()
      const period = await created(w.period('2026-10-01', '2026-10-31'))
      const auth = { principalId: w.admin.id, locationIds: null, accountId: w.accountId, livemode: false }
      let closing: Promise<ApiResponse<PayPeriod>> | undefined
      let answered = false
      await t.db.transaction().execute(async (trx) => {
        await lockPayPeriods(trx, auth, 'shared')
        closing = w.close(period.id).then((res) => {
          answered = true
          return res
        })
        // Not by luck: the close is seen waiting on this transaction's lock before the check.
        await blockedBy(trx)
        expect(answered).toBe(false)
        const now = Date.now()
        await trx
          .insertInto('sessions')
          .values({
            id: newId('ses'),
            account_id: w.accountId,
            livemode: 0,
            operator_id: op.id,
            operator_ident: op.ident,
            device_code: 'GATE',
            location_id: null,
            check_in_at: Date.parse('2026-10-05T08:00:00Z'),
            check_out_at: Date.parse('2026-10-05T09:00:00Z'),
            break_minutes: 0,
            notes: null,
            is_flagged: 1,
            flag_reason: 'manual_api_entry',
            source: 'api',
            status: 'completed',
            deleted_at: null,
            created_at: now,
            updated_at: now,
            work_date: '2026-10-05',
            review_status: 'pending',
            reviewed_at: null,
            reviewed_by: null,
            review_note: null,
          })
          .execute()
      })
      const res = await closing
      if (!res) throw new Error('the close was not sent')
      expectError(res, 409, 'conflict', 'pending_reviews')
    })

    it('a session write waits for a close in flight, then is refused with period_closed', async () => {
      const w = await world(t)
      const op = await w.operator()
      const period = await created(w.period('2026-11-01', '2026-11-30'))
      const auth = { principalId: w.admin.id, locationIds: null, accountId: w.accountId, livemode: false }
      let creating: Promise<ApiResponse> | undefined
      let answered = false
      await t.db.transaction().execute(async (trx) => {
        await lockPayPeriods(trx, auth, 'exclusive')
        creating = w.root
          .post('/v1/sessions', {
            operator_id: op.id,
            device_id: 'GATE',
            check_in: { time: '2026-11-05T08:00:00Z' },
            check_out: { time: '2026-11-05T09:00:00Z' },
          })
          .then((res) => {
            answered = true
            return res
          })
        await blockedBy(trx)
        expect(answered).toBe(false)
        await trx
          .updateTable('pay_periods')
          .set({ status: 'closed', closed_at: Date.now() })
          .where('id', '=', period.id)
          .execute()
      })
      const res = await creating
      if (!res) throw new Error('the create was not sent')
      expectError(res, 409, 'conflict', 'period_closed')
    })
  })

  describe('closing under concurrency', () => {
    it('a session created or approved while the period closes is counted or refused with period_closed; never a closed period with a pending session', async () => {
      const w = await world(t)
      const ops = await Promise.all(Array.from({ length: 4 }, () => w.operator()))
      const period = await created(w.period('2026-10-01', '2026-10-31'))
      let closedRounds = 0
      let refusedCreates = 0
      for (let round = 0; round < 8; round++) {
        // Sessions to approve in this round, pending until then.
        const pending = await Promise.all(
          ops.map((op, i) =>
            w.session(
              op,
              `2026-10-${String(round + 1).padStart(2, '0')}T0${i}:00:00Z`,
              `2026-10-${String(round + 1).padStart(2, '0')}T0${i}:30:00Z`,
            ),
          ),
        )
        const approvals = pending.map((s) => w.approve(s.id))
        // Every other round the approvals are answered before the creates and closes go out, so a
        // close can find the period settled and the creates race it; in the others the approvals
        // race the closes too.
        if (round % 2 === 0) await Promise.all(approvals)
        const create = (op: (typeof ops)[number], i: number) =>
          w.root.post<Session>('/v1/sessions', {
            operator_id: op.id,
            device_id: 'GATE',
            check_in: { time: `2026-10-${String(round + 11).padStart(2, '0')}T1${i}:00:00Z` },
            check_out: { time: `2026-10-${String(round + 11).padStart(2, '0')}T1${i}:30:00Z` },
          })
        // The two closes go out at another place among the creates each round (before them all,
        // between, after them all), so some creates land before a close and some after, by the
        // order of the requests rather than by timers.
        const closeAt = [round % (ops.length + 1), (round * 3) % (ops.length + 1)]
        const creates: Array<ReturnType<typeof create>> = []
        const closes: Array<ReturnType<typeof w.close>> = []
        for (let i = 0; i <= ops.length; i++) {
          for (const at of closeAt) if (at === i) closes.push(w.close(period.id))
          const op = ops[i]
          if (op) creates.push(create(op, i))
        }
        const [approved, made, closing] = await Promise.all([
          Promise.all(approvals),
          Promise.all(creates),
          Promise.all(closes),
        ])
        for (const a of approved) expect([200, 409]).toContain(a.status)
        for (const a of approved.filter((x) => x.status === 409))
          expectError(a, 409, 'conflict', 'period_closed')
        for (const m of made) expect([201, 409]).toContain(m.status)
        for (const m of made.filter((x) => x.status === 409)) expectError(m, 409, 'conflict', 'period_closed')
        for (const c of closing.filter((x) => x.status !== 200))
          expectError(c, 409, 'conflict', 'pending_reviews')

        const state = await ok(w.api.get<PayPeriod>(`/v1/pay-periods/${period.id}`))
        const pendingNow = await ok(
          w.api.get<List<Session>>(
            '/v1/sessions?review_status=pending&work_date_from=2026-10-01&work_date_to=2026-10-31&limit=200',
          ),
        )
        if (state.status === 'closed') {
          closedRounds++
          expect(pendingNow.data).toEqual([])
          refusedCreates += made.filter((m) => m.status === 409).length
          await ok(w.reopen(period.id))
        } else {
          expect(closing.every((c) => c.status === 409)).toBe(true)
        }
        // Settle the round: everything in the period reviewed.
        for (const s of pendingNow.data) await ok(w.approve(s.id))
        const settled = await ok(
          w.api.get<List<Session>>(
            '/v1/sessions?review_status=pending&work_date_from=2026-10-01&work_date_to=2026-10-31',
          ),
        )
        expect(settled.data).toEqual([])
      }
      // Not asserted (timing): how often the close won; printed to show both sides were exercised.
      console.info(
        `concurrency: the close won ${closedRounds} of 8 rounds; ${refusedCreates} creates refused`,
      )
      expect(closedRounds + refusedCreates).toBeGreaterThanOrEqual(0)
    })
  })
})

async function lastOperator(w: Awaited<ReturnType<typeof world>>) {
  const list = await ok(w.api.get<List<{ id: string; ident: string }>>('/v1/operators?limit=1'))
  const op = list.data[0]
  if (!op) throw new Error('no operator')
  return op as Parameters<typeof w.scan>[0]
}
