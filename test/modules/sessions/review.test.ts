import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import {
  expectError,
  ISO_MS,
  type List,
  type Session,
  type SessionRevision,
} from '../../helpers/assertions.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { created, ok, world } from '../../helpers/world.js'

describe('session review over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  describe('review_status', () => {
    it('is pending for a session created through the API, with no review yet', async () => {
      const w = await world(t)
      const op = await w.operator()
      const s = await w.session(op, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      expect(s).toMatchObject({
        is_flagged: true,
        flag_reason: 'manual_api_entry',
        work_date: '2026-11-02',
        review_status: 'pending',
        reviewed_at: null,
        reviewed_by: null,
        review_note: null,
      })
    })

    it('is not_required for a scanned session without a flag, and pending after a max_shift_exceeded closure', async () => {
      const w = await world(t)
      const op = await w.operator()
      const inScan = await w.scan(op, '2026-11-02T08:00:00Z')
      const open = await ok(w.api.get<Session>(`/v1/sessions/${inScan.session_id}`))
      expect(open).toMatchObject({ status: 'open', review_status: 'not_required', work_date: '2026-11-02' })
      await w.scan(op, '2026-11-02T16:00:00Z')
      const done = await ok(w.api.get<Session>(`/v1/sessions/${inScan.session_id}`))
      expect(done).toMatchObject({ status: 'completed', review_status: 'not_required', is_flagged: false })

      const again = await w.scan(op, '2026-11-03T08:00:00Z')
      const late = await w.scan(op, '2026-11-04T09:00:00Z')
      expect(late.result).toBe('checked_in')
      const closed = await ok(w.api.get<Session>(`/v1/sessions/${again.session_id}`))
      expect(closed).toMatchObject({ flag_reason: 'max_shift_exceeded', review_status: 'pending' })
    })

    it('a PATCH of is_flagged is still refused: review goes through approve and reject', async () => {
      const w = await world(t)
      const s = await w.session(await w.operator(), '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      expectError(
        await w.api.patch(`/v1/sessions/${s.id}`, { is_flagged: false }),
        422,
        'validation_error',
        'unknown_param',
        'is_flagged',
      )
      expectError(
        await w.api.patch(`/v1/sessions/${s.id}`, { review_status: 'approved' }),
        422,
        'validation_error',
        'unknown_param',
        'review_status',
      )
    })
  })

  describe('approve and reject', () => {
    it('approve sets the review fields, keeps the flag, writes a revision and emits session.updated', async () => {
      const w = await world(t)
      const s = await w.session(await w.operator(), '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      const res = await w.approve(s.id, { note: 'checked with the site lead' })
      expect(res.status).toBe(200)
      const approved = res.body
      expect(approved).toMatchObject({
        id: s.id,
        is_flagged: true,
        flag_reason: 'manual_api_entry',
        review_status: 'approved',
        reviewed_by: w.admin.id,
        review_note: 'checked with the site lead',
        total_hours: 8,
      })
      expect(approved.reviewed_at).toMatch(ISO_MS)
      expect(await ok(w.api.get(`/v1/sessions/${s.id}`))).toEqual(approved)

      const revisions = await ok(w.api.get<List<SessionRevision>>(`/v1/sessions/${s.id}/revisions`))
      expect(revisions.data.map((r) => r.action)).toEqual(['approved', 'created'])
      expect(revisions.data[0]?.before).toEqual(s)
      expect(revisions.data[0]?.after).toEqual(approved)
      expect(revisions.data[0]?.key_id).toBe(w.admin.id)

      const events = await eventsOf(t, w.accountId)
      const last = events[events.length - 1]
      expect(last?.type).toBe('session.updated')
      expect(last?.data.object).toEqual(approved)
      expect(last?.data.previous_attributes).toEqual({
        review_status: 'pending',
        reviewed_at: null,
        reviewed_by: null,
        review_note: null,
      })
    })

    it('approve takes no body at all, or an empty one', async () => {
      const w = await world(t)
      const op = await w.operator()
      const a = await w.session(op, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      const b = await w.session(op, '2026-11-03T08:00:00Z', '2026-11-03T16:00:00Z')
      expect((await ok(w.approve(a.id))).review_note).toBeNull()
      expect((await ok(w.approve(b.id, {}))).review_status).toBe('approved')
    })

    it('reject needs a note (422 missing_param), then counts for nothing but stays readable', async () => {
      const w = await world(t)
      const s = await w.session(await w.operator(), '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      expectError(
        await w.root.post(`/v1/sessions/${s.id}/reject`),
        422,
        'validation_error',
        'missing_param',
        'note',
      )
      expectError(
        await w.root.post(`/v1/sessions/${s.id}/reject`, {}),
        422,
        'validation_error',
        'missing_param',
        'note',
      )
      expectError(await w.reject(s.id, '  '), 422, 'validation_error', 'missing_param', 'note')
      expectError(
        await w.root.post(`/v1/sessions/${s.id}/reject`, { note: 'x', extra: 1 }),
        422,
        'validation_error',
        'unknown_param',
        'extra',
      )
      const rejected = await ok(w.reject(s.id, 'not on site that day'))
      expect(rejected).toMatchObject({ review_status: 'rejected', review_note: 'not on site that day' })
      expect((await ok(w.api.get<Session>(`/v1/sessions/${s.id}`))).review_status).toBe('rejected')
      const revisions = await ok(w.api.get<List<SessionRevision>>(`/v1/sessions/${s.id}/revisions`))
      expect(revisions.data[0]?.action).toBe('rejected')
    })

    it('a rejection can be overturned by an approval', async () => {
      const w = await world(t)
      const s = await w.session(await w.operator(), '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      await ok(w.reject(s.id, 'duplicate?'))
      const approved = await ok(w.approve(s.id, { note: 'not a duplicate' }))
      expect(approved).toMatchObject({ review_status: 'approved', review_note: 'not a duplicate' })
    })

    it('a rejected session leaves the record: its interval can be entered again, and then it cannot be approved back', async () => {
      const w = await world(t)
      const op = await w.operator()
      const s = await w.session(op, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      await ok(w.reject(s.id, 'wrong times'))
      const corrected = await w.session(op, '2026-11-02T09:00:00Z', '2026-11-02T17:00:00Z')
      expect(corrected.review_status).toBe('pending')
      const refused = expectError(
        await w.approve(s.id),
        409,
        'conflict',
        'overlapping_session',
        'check_in.time',
      )
      expect(refused.message).toContain(corrected.id)
      expect((await ok(w.api.get<Session>(`/v1/sessions/${s.id}`))).review_status).toBe('rejected')
    })

    it('an edit of a reviewed session makes it pending again and clears the review', async () => {
      const w = await world(t)
      const s = await w.session(await w.operator(), '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      await ok(w.approve(s.id, { note: 'ok' }))
      const edited = await ok(w.root.patch<Session>(`/v1/sessions/${s.id}`, { break_minutes: 30 }))
      expect(edited).toMatchObject({
        flag_reason: 'manual_api_edit',
        review_status: 'pending',
        reviewed_at: null,
        reviewed_by: null,
        review_note: null,
        total_hours: 7.5,
      })
      const events = await eventsOf(t, w.accountId)
      const updated = events.filter((e) => e.type === 'session.updated').pop()
      expect(updated?.data.previous_attributes).toMatchObject({
        review_status: 'approved',
        review_note: 'ok',
      })
    })

    it('a session closed without a check-out cannot be approved (409 check_out_missing) until a PATCH sets it; it can be rejected', async () => {
      const w = await world(t)
      const op = await w.operator()
      // Two forgotten check-outs, each closed (max_shift_exceeded) by the next day's scan.
      const first = await w.scan(op, '2026-11-02T08:00:00Z')
      const second = await w.scan(op, '2026-11-03T09:00:00Z')
      await w.scan(op, '2026-11-04T10:00:00Z')
      for (const scan of [first, second]) {
        expect(await ok(w.api.get<Session>(`/v1/sessions/${scan.session_id}`))).toMatchObject({
          status: 'completed',
          check_out: null,
          flag_reason: 'max_shift_exceeded',
          review_status: 'pending',
        })
      }

      const refused = expectError(
        await w.approve(first.session_id ?? ''),
        409,
        'conflict',
        'check_out_missing',
      )
      expect(refused.message).toContain(`PATCH /v1/sessions/${first.session_id}`)
      const untouched = await ok(w.api.get<Session>(`/v1/sessions/${first.session_id}`))
      expect(untouched).toMatchObject({ review_status: 'pending', reviewed_at: null })
      const revisions = await ok(
        w.api.get<List<SessionRevision>>(`/v1/sessions/${first.session_id}/revisions`),
      )
      expect(revisions.data.map((r) => r.action)).toEqual(['closed', 'checked_in'])
      expect(await ok(w.reject(first.session_id ?? '', 'never came back'))).toMatchObject({
        review_status: 'rejected',
        check_out: null,
      })

      // The manager sets the check-out and the break: the edit re-flags it, and it can be approved.
      const completed = await ok(
        w.root.patch<Session>(`/v1/sessions/${second.session_id}`, {
          check_out: { time: '2026-11-03T17:15:00Z' },
          break_minutes: 45,
        }),
      )
      expect(completed).toMatchObject({
        status: 'completed',
        check_out: { time: '2026-11-03T17:15:00.000Z' },
        break_minutes: 45,
        total_hours: 7.5,
        flag_reason: 'manual_api_edit',
        review_status: 'pending',
      })
      expect(await ok(w.approve(second.session_id ?? ''))).toMatchObject({
        review_status: 'approved',
        total_hours: 7.5,
      })
    })

    it('an open session cannot be reviewed: 409 session_open', async () => {
      const w = await world(t)
      const scan = await w.scan(await w.operator(), '2026-11-02T08:00:00Z')
      expectError(await w.approve(scan.session_id ?? ''), 409, 'conflict', 'session_open')
      expectError(await w.reject(scan.session_id ?? '', 'no'), 409, 'conflict', 'session_open')
    })

    it('404 for an unknown session, a deleted one, or one of another account or mode', async () => {
      const w = await world(t)
      const other = await world(t)
      const live = await world(t, { account: w.account, mode: 'live' })
      const s = await w.session(await w.operator(), '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      expectError(await w.approve('ses_nope'), 404, 'not_found', 'resource_missing')
      expectError(await other.approve(s.id), 404, 'not_found', 'resource_missing')
      expectError(await live.approve(s.id), 404, 'not_found', 'resource_missing')
      await ok(w.root.delete(`/v1/sessions/${s.id}`))
      expectError(await w.approve(s.id), 404, 'not_found', 'resource_missing')
    })

    it('needs sessions:approve, which sessions:write does not imply; a key made without scopes has it', async () => {
      const w = await world(t, { scopes: ['sessions:write'] })
      const s = await w.session(await w.operator(), '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      for (const verb of ['approve', 'reject']) {
        const res = await w.api.post(`/v1/sessions/${s.id}/${verb}`, { note: 'x' })
        expectError(res, 403, 'insufficient_scope', 'missing_scope')
        expect(res.body).toMatchObject({ error: { message: expect.stringContaining('sessions:approve') } })
      }
      const approver = t.client((await t.key({ account: w.account, scopes: ['sessions:approve'] })).secret)
      expect((await approver.post<Session>(`/v1/sessions/${s.id}/approve`)).status).toBe(200)
      // sessions:approve alone does not read or write sessions.
      expectError(await approver.get(`/v1/sessions/${s.id}`), 403, 'insufficient_scope')
      expectError(await t.client(undefined).post(`/v1/sessions/${s.id}/approve`), 401, 'authentication_error')
    })
  })

  describe('list filters', () => {
    it('filters by review_status and by work date (inclusive)', async () => {
      const w = await world(t)
      const op = await w.operator()
      const a = await w.session(op, '2026-11-01T08:00:00Z', '2026-11-01T16:00:00Z')
      const b = await w.session(op, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      const c = await w.session(op, '2026-11-03T08:00:00Z', '2026-11-03T16:00:00Z')
      await ok(w.approve(b.id))
      await ok(w.reject(c.id, 'no'))
      const ids = async (query: string) =>
        (await ok(w.api.get<List<Session>>(`/v1/sessions?${query}`))).data.map((s) => s.id)
      expect(await ids('review_status=pending')).toEqual([a.id])
      expect(await ids('review_status=approved')).toEqual([b.id])
      expect(await ids('review_status=rejected')).toEqual([c.id])
      expect(await ids('review_status=not_required')).toEqual([])
      expect(await ids('work_date_from=2026-11-02')).toEqual([c.id, b.id])
      expect(await ids('work_date_to=2026-11-02')).toEqual([b.id, a.id])
      expect(await ids('work_date_from=2026-11-02&work_date_to=2026-11-02')).toEqual([b.id])
      expectError(
        await w.api.get('/v1/sessions?work_date_from=2026-02-30'),
        422,
        'validation_error',
        'invalid_value',
        'work_date_from',
      )
      expectError(
        await w.api.get('/v1/sessions?review_status=maybe'),
        422,
        'validation_error',
        undefined,
        'review_status',
      )
    })
  })

  describe('work_date', () => {
    it("is the check-in's date in the location's zone: a Los Angeles night shift from 22:00 counts on its start day", async () => {
      const w = await world(t, { timezone: 'America/Los_Angeles' })
      const op = await w.operator()
      // 22:00 PST on 2 November is 06:00 UTC on 3 November.
      const night = await w.session(op, '2026-11-02T22:00:00-08:00', '2026-11-03T06:00:00-08:00')
      expect(night.work_date).toBe('2026-11-02')
      expect(night.total_hours).toBe(8)
      // Across the spring-forward night (8 March 2026, 02:00 → 03:00): 7 real hours, on the 7th.
      const spring = await w.session(op, '2026-03-07T22:00:00-08:00', '2026-03-08T06:00:00-07:00')
      expect(spring).toMatchObject({ work_date: '2026-03-07', total_hours: 7 })
      // And the fall-back night (1 November 2026): 9 real hours, on 31 October.
      const fall = await w.session(op, '2026-10-31T22:00:00-07:00', '2026-11-01T06:00:00-08:00')
      expect(fall).toMatchObject({ work_date: '2026-10-31', total_hours: 9 })
      // A scan at 23:30 local is on that local day too.
      const op2 = await w.operator()
      const scan = await w.scan(op2, '2026-11-02T23:30:00-08:00')
      const scanned = await ok(w.api.get<Session>(`/v1/sessions/${scan.session_id}`))
      expect(scanned.work_date).toBe('2026-11-02')
    })

    it('east of UTC: 00:30 in Tokyo is the previous day in UTC but counts on the local day', async () => {
      const w = await world(t, { timezone: 'Asia/Tokyo' })
      const s = await w.session(await w.operator(), '2026-11-02T00:30:00+09:00', '2026-11-02T09:00:00+09:00')
      expect(s.work_date).toBe('2026-11-02')
    })

    it('is kept when the location changes its zone later; recomputed when the check-in or location changes', async () => {
      const w = await world(t, { timezone: 'America/Los_Angeles' })
      const op = await w.operator()
      const s = await w.session(op, '2026-11-02T22:00:00-08:00', '2026-11-03T02:00:00-08:00')
      expect(s.work_date).toBe('2026-11-02')
      await ok(w.root.patch(`/v1/locations/${w.location.id}`, { timezone: 'UTC' }))
      expect((await ok(w.api.get<Session>(`/v1/sessions/${s.id}`))).work_date).toBe('2026-11-02')
      // An edit of the notes keeps it; a session written now uses the new zone.
      const noted = await ok(w.root.patch<Session>(`/v1/sessions/${s.id}`, { notes: 'x' }))
      expect(noted.work_date).toBe('2026-11-02')
      const later = await w.session(op, '2026-11-05T22:00:00-08:00', '2026-11-06T02:00:00-08:00')
      expect(later.work_date).toBe('2026-11-06')
      // Moving the check-in recomputes it (the location is UTC now).
      const moved = await ok(
        w.root.patch<Session>(`/v1/sessions/${s.id}`, {
          check_in: { time: '2026-11-02T23:30:00-08:00' },
        }),
      )
      expect(moved.work_date).toBe('2026-11-03')
      // Removing the location: UTC.
      const tokyo = await created(
        w.root.post<{ id: string }>('/v1/locations', { name: 'T', timezone: 'Asia/Tokyo' }),
      )
      const there = await ok(w.root.patch<Session>(`/v1/sessions/${later.id}`, { location_id: tokyo.id }))
      expect(there.work_date).toBe('2026-11-06')
      const early = await ok(
        w.root.patch<Session>(`/v1/sessions/${later.id}`, {
          check_in: { time: '2026-11-06T00:30:00+09:00' },
        }),
      )
      expect(early.work_date).toBe('2026-11-06')
      const nowhere = await ok(w.root.patch<Session>(`/v1/sessions/${later.id}`, { location_id: null }))
      expect(nowhere.work_date).toBe('2026-11-05')
    })
  })
})
