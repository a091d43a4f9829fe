import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type Session } from '../../helpers/assertions.js'
import { CREATED, EDITED, expectSessionShape, sessionHelpers, type World } from './helpers.js'

/** A break of `bodyFor`'s day (2 March 2026, 08:00 to 16:00 UTC) as a request sends it. */
const brk = (start: string, end: string, paid?: boolean) => ({
  start: { time: `2026-03-02T${start}Z` },
  end: { time: `2026-03-02T${end}Z` },
  ...(paid === undefined ? {} : { paid }),
})
/** The same break as the session shows it. */
const shown = (start: string, end: string, paid = false, source = 'api') => ({
  start: { time: `2026-03-02T${start}.000Z` },
  end: { time: `2026-03-02T${end}.000Z` },
  paid,
  source,
})

describe('breaks as records on sessions', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const {
    world,
    bodyFor,
    createSession,
    newEvents,
    newEventTypes,
    sessionRows,
    revisionsOf,
    expectCreateRefused,
    expectEditRefused,
  } = sessionHelpers(() => t)

  async function patch(w: World, id: string, body: Record<string, unknown>): Promise<Session> {
    const res = await w.api.patch<Session>(`/v1/sessions/${id}`, body)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expectSessionShape(res.body)
    return res.body
  }

  it('a create with breaks: unpaid ones are break_minutes (half-up) and come off total_hours exactly, paid ones count as worked', async () => {
    const w = await world()
    const session = await createSession(w, {
      // 30 min 30 s unpaid (break_minutes 31, half-up), 15 min paid.
      breaks: [brk('12:00:00', '12:30:30'), brk('14:00:00', '14:15:00', true)],
    })
    expect(session.breaks).toEqual([shown('12:00:00', '12:30:30'), shown('14:00:00', '14:15:00', true)])
    expect(session.break_minutes).toBe(31)
    // 8 h − 30.5 min = 7.4917 h: the exact duration, not break_minutes (8 h − 31 min would be 7.48).
    expect(session.total_hours).toBe(7.49)
    expect((await w.api.get(`/v1/sessions/${session.id}`)).body).toEqual(session)

    // The column the timesheet reads: epoch milliseconds, exactly these keys.
    const [row] = await sessionRows(w.key.account_id)
    expect(JSON.parse(row?.breaks ?? '')).toEqual([
      {
        start: Date.parse('2026-03-02T12:00:00Z'),
        end: Date.parse('2026-03-02T12:30:30Z'),
        paid: false,
        source: 'api',
      },
      {
        start: Date.parse('2026-03-02T14:00:00Z'),
        end: Date.parse('2026-03-02T14:15:00Z'),
        paid: true,
        source: 'api',
      },
    ])

    const events = await newEvents(w)
    expect(events.map((e) => e.type)).toEqual(CREATED)
    expect(events[0]?.data.object).toEqual(session)
    const revisions = await revisionsOf(w.api, session.id)
    expect(revisions.data.map((r) => [r.action, r.after?.breaks])).toEqual([['created', session.breaks]])
  })

  it('a session without breaks shows [] and keeps break_minutes as entered; breaks that touch do not overlap', async () => {
    const w = await world()
    const plain = await createSession(w, { break_minutes: 30 })
    expect(plain).toMatchObject({ breaks: [], break_minutes: 30, total_hours: 7.5 })

    const other = await world()
    const touching = await createSession(other, {
      breaks: [brk('08:00:00', '09:00:00'), brk('09:00:00', '10:00:00', true), brk('15:00:00', '16:00:00')],
    })
    expect(touching).toMatchObject({ break_minutes: 120, total_hours: 6 })
  })

  it('a PATCH replaces the list, recomputes, writes a revision, emits previous_attributes.breaks and re-flags a reviewed session', async () => {
    const w = await world()
    const session = await createSession(w, { breaks: [brk('12:00:00', '12:30:00')] })
    const approved = await w.api.post<Session>(`/v1/sessions/${session.id}/approve`, {})
    expect(approved.status).toBe(200)
    expect(approved.body.review_status).toBe('approved')

    const edited = await patch(w, session.id, {
      breaks: [brk('11:00:00', '11:45:00'), brk('13:00:00', '13:10:00', true)],
    })
    expect(edited).toEqual({
      ...approved.body,
      breaks: [shown('11:00:00', '11:45:00'), shown('13:00:00', '13:10:00', true)],
      break_minutes: 45,
      total_hours: 7.25,
      flag_reason: 'manual_api_edit',
      review_status: 'pending',
      reviewed_at: null,
      reviewed_by: null,
      updated: edited.updated,
    })

    const events = await newEvents(w)
    expect(events.map((e) => e.type)).toEqual([...CREATED, 'session.updated', ...EDITED])
    const updated = events[3]
    expect(updated?.data.object).toEqual(edited)
    expect(updated?.data.previous_attributes).toEqual({
      breaks: [shown('12:00:00', '12:30:00')],
      break_minutes: 30,
      total_hours: 7.5,
      flag_reason: 'manual_api_entry',
      review_status: 'approved',
      reviewed_at: approved.body.reviewed_at,
      reviewed_by: approved.body.reviewed_by,
    })
    const [revision] = (await revisionsOf(w.api, session.id)).data
    expect(revision).toMatchObject({ action: 'updated', before: approved.body, after: edited })

    // The same list again changes nothing: no write, no event.
    const again = await patch(w, session.id, {
      breaks: [brk('11:00:00', '11:45:00'), brk('13:00:00', '13:10:00', true)],
    })
    expect(again).toEqual(edited)
    expect(await newEventTypes(w)).toHaveLength(events.length)

    // An empty list: no records, nothing unpaid.
    const cleared = await patch(w, session.id, { breaks: [] })
    expect(cleared).toMatchObject({ breaks: [], break_minutes: 0, total_hours: 8 })
    // Now without records, break_minutes may be set again.
    expect(await patch(w, session.id, { break_minutes: 20 })).toMatchObject({
      break_minutes: 20,
      total_hours: 7.67,
    })
  })

  it('a PATCH of breaks on a session that had break_minutes replaces them by the records', async () => {
    const w = await world()
    const session = await createSession(w, { break_minutes: 60 })
    const edited = await patch(w, session.id, { breaks: [brk('12:00:00', '12:20:00')] })
    expect(edited).toMatchObject({ break_minutes: 20, total_hours: 7.67 })
  })

  it('revisions stored before sessions had breaks are shown with breaks: [] (none could exist then)', async () => {
    const w = await world()
    const session = await createSession(w, { break_minutes: 15 })
    await patch(w, session.id, { notes: 'edited' })
    // The revisions as migration 011 found them: the session objects of the time, without `breaks`.
    for (const row of await t.db
      .selectFrom('session_revisions')
      .selectAll()
      .where('session_id', '=', session.id)
      .execute()) {
      const old = (text: string | null) => {
        if (text === null) return null
        const { breaks: _, ...rest } = JSON.parse(text) as Session
        return JSON.stringify(rest)
      }
      await t.db
        .updateTable('session_revisions')
        .set({ before: old(row.before), after: old(row.after) })
        .where('id', '=', row.id)
        .execute()
    }
    const revisions = await revisionsOf(w.api, session.id)
    expect(revisions.data.map((r) => [r.action, r.before?.breaks ?? null, r.after?.breaks])).toEqual([
      ['updated', [], []],
      ['created', null, []],
    ])
  })

  describe('invalid_break names the break', () => {
    const cases: Array<[string, unknown[], string]> = [
      [
        'a break that ends when it starts',
        [brk('10:00:00', '10:30:00'), brk('11:00:00', '11:00:00')],
        'breaks[1]',
      ],
      ['a break that ends before it starts', [brk('10:30:00', '10:00:00')], 'breaks[0]'],
      ['a break starting before check_in', [brk('07:59:59', '08:30:00')], 'breaks[0]'],
      [
        'a break ending after check_out',
        [brk('10:00:00', '10:30:00'), brk('15:45:00', '16:00:01')],
        'breaks[1]',
      ],
      [
        'a break overlapping an earlier one in the list',
        [brk('10:00:00', '10:30:00'), brk('12:00:00', '12:30:00'), brk('10:29:59', '10:45:00')],
        'breaks[2]',
      ],
      ['a break inside another', [brk('10:00:00', '11:00:00'), brk('10:15:00', '10:20:00')], 'breaks[1]'],
    ]
    for (const [name, breaks, param] of cases) {
      it(`on create and on PATCH: ${name}`, async () => {
        const w = await world()
        await expectCreateRefused(w, bodyFor(w, { breaks }), 'invalid_break', param)
        const session = await createSession(w)
        await expectEditRefused(w, session, { breaks }, 'invalid_break', param)
      })
    }

    it('an edit of the times that leaves a stored break outside the session', async () => {
      const w = await world()
      const session = await createSession(w, {
        breaks: [brk('09:00:00', '09:30:00'), brk('15:00:00', '15:30:00')],
      })
      await expectEditRefused(
        w,
        session,
        { check_in: { time: '2026-03-02T09:15:00Z' } },
        'invalid_break',
        'breaks[0]',
      )
      await expectEditRefused(
        w,
        session,
        { check_out: { time: '2026-03-02T15:15:00Z' } },
        'invalid_break',
        'breaks[1]',
      )
    })

    it('a time that is not ISO-8601 with a zone names its field; more than 10 breaks is refused', async () => {
      const w = await world()
      await expectCreateRefused(
        w,
        bodyFor(w, {
          breaks: [
            brk('10:00:00', '10:30:00'),
            { start: { time: '2026-03-02T11:00:00' }, end: brk('11:00:00', '11:30:00').end },
          ],
        }),
        'invalid_timestamp',
        'breaks[1].start.time',
      )
      const minute = (n: number) => ({
        time: new Date(Date.parse('2026-03-02T08:00:00Z') + n * 60_000).toISOString(),
      })
      const eleven = Array.from({ length: 11 }, (_, i) => ({
        start: minute(20 * i),
        end: minute(20 * i + 10),
      }))
      const res = await w.api.post('/v1/sessions', bodyFor(w, { breaks: eleven }))
      expectError(res, 422, 'validation_error', undefined, 'breaks')
    })
  })

  describe('conflicting_param on break_minutes', () => {
    it('break_minutes and breaks in one body, on create and on PATCH', async () => {
      const w = await world()
      const both = { break_minutes: 30, breaks: [brk('12:00:00', '12:30:00')] }
      await expectCreateRefused(w, bodyFor(w, both), 'conflicting_param', 'break_minutes')
      const session = await createSession(w)
      await expectEditRefused(w, session, both, 'conflicting_param', 'break_minutes')
      // Even an empty list: the body says two things about the same minutes.
      await expectEditRefused(
        w,
        session,
        { break_minutes: 30, breaks: [] },
        'conflicting_param',
        'break_minutes',
      )
    })

    it('break_minutes alone on a session that has break records', async () => {
      const w = await world()
      const session = await createSession(w, { breaks: [brk('12:00:00', '12:30:00')] })
      await expectEditRefused(w, session, { break_minutes: 30 }, 'conflicting_param', 'break_minutes')
      await expectEditRefused(
        w,
        session,
        { break_minutes: 0, notes: 'x' },
        'conflicting_param',
        'break_minutes',
      )
    })
  })
})
