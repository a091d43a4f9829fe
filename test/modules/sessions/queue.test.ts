import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type List, type Session } from '../../helpers/assertions.js'
import { ok, type World, world } from '../../helpers/world.js'

/** The review queue's reads: `GET /v1/sessions` by operator ident, and by work date. */
describe('listing sessions by operator ident and by work date', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  const page = (w: World, query: string) => ok(w.api.get<List<Session>>(`/v1/sessions?${query}`))
  const ids = async (w: World, query: string) => (await page(w, query)).data.map((s) => s.id)

  /** Every page of a list, `limit` at a time, following `next_cursor`. */
  async function allPages(w: World, query: string, limit: number) {
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const next: List<Session> = await page(
        w,
        `${query}&limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      )
      expect(next.data.length).toBeLessThanOrEqual(limit)
      seen.push(...next.data.map((s) => s.id))
      cursor = next.has_more ? next.next_cursor : null
      if (next.has_more) expect(next.data).toHaveLength(limit)
    } while (cursor !== null)
    return seen
  }

  it('operator_ident: the sessions of the operator with exactly that ident; an unknown one lists nothing', async () => {
    const w = await world(t)
    const ada = await w.operator({ ident: 'ADA-1' })
    const bob = await w.operator({ ident: 'BOB-1' })
    const a1 = await w.session(ada, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
    const b1 = await w.session(bob, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
    const a2 = await w.session(ada, '2026-11-03T08:00:00Z', '2026-11-03T16:00:00Z')
    await ok(w.approve(a2.id))

    expect(await ids(w, 'operator_ident=ADA-1')).toEqual([a2.id, a1.id])
    expect(await ids(w, 'operator_ident=BOB-1')).toEqual([b1.id])
    expect(await ids(w, 'operator_ident=ADA-1&review_status=pending')).toEqual([a1.id])
    expect(await ids(w, `operator_ident=ADA-1&operator_id=${ada.id}`)).toEqual([a2.id, a1.id])
    // Exact: no other case, no prefix; and never an error.
    for (const ident of ['ada-1', 'ADA', 'NOBODY'])
      expect(await ids(w, `operator_ident=${ident}`)).toEqual([])
    // Two different operators named: nothing has both.
    expect(await ids(w, `operator_ident=ADA-1&operator_id=${bob.id}`)).toEqual([])
    // Another account's operator of the same ident is not this one's.
    const other = await world(t)
    await other.session(
      await other.operator({ ident: 'ADA-1' }),
      '2026-11-05T08:00:00Z',
      '2026-11-05T09:00:00Z',
    )
    expect(await ids(w, 'operator_ident=ADA-1')).toEqual([a2.id, a1.id])
    // And newest first pages as before: one a page.
    expect(await allPages(w, 'operator_ident=ADA-1', 1)).toEqual([a2.id, a1.id])
  })

  it('order=work_date: oldest work date first, one date by id, paged by a cursor of its own and combined with the filters', async () => {
    const w = await world(t, { timezone: 'America/Los_Angeles' })
    const ada = await w.operator({ ident: 'ADA-1' })
    const bob = await w.operator({ ident: 'BOB-1' })
    // Entered out of order, as the issue saw the queue: 21st, 13th, 12th, 24th, then two on the 13th.
    const on21 = await w.session(ada, '2026-11-21T08:00:00-08:00', '2026-11-21T12:00:00-08:00')
    const on13 = await w.session(ada, '2026-11-13T08:00:00-08:00', '2026-11-13T12:00:00-08:00')
    const on12 = await w.session(bob, '2026-11-12T08:00:00-08:00', '2026-11-12T12:00:00-08:00')
    const on24 = await w.session(bob, '2026-11-24T08:00:00-08:00', '2026-11-24T12:00:00-08:00')
    // 22:00 in Los Angeles is the 14th in UTC: its work date is the 13th.
    const night13 = await w.session(bob, '2026-11-13T22:00:00-08:00', '2026-11-14T02:00:00-08:00')
    const late13 = await w.session(ada, '2026-11-13T13:00:00-08:00', '2026-11-13T15:00:00-08:00')
    await ok(w.approve(on24.id))

    const byWorkDate = [on12.id, on13.id, night13.id, late13.id, on21.id, on24.id]
    expect(await ids(w, 'order=work_date')).toEqual(byWorkDate)
    const listed = (await page(w, 'order=work_date')).data
    expect(listed.map((s) => s.work_date)).toEqual([
      '2026-11-12',
      '2026-11-13',
      '2026-11-13',
      '2026-11-13',
      '2026-11-21',
      '2026-11-24',
    ])
    // Every page size gives the same sequence, across the ties of the 13th too.
    for (const limit of [1, 2, 4]) expect(await allPages(w, 'order=work_date', limit)).toEqual(byWorkDate)
    // The default, and order=created: newest first, as before.
    const newestFirst = [...[on21, on13, on12, on24, night13, late13].map((s) => s.id)].reverse()
    expect(await ids(w, '')).toEqual(newestFirst)
    expect(await ids(w, 'order=created')).toEqual(newestFirst)
    expect(await allPages(w, 'order=created', 4)).toEqual(newestFirst)

    // The review queue: pending, by work date, in a range, of one operator.
    expect(await allPages(w, 'review_status=pending&order=work_date', 2)).toEqual(byWorkDate.slice(0, 5))
    expect(
      await ids(w, 'review_status=pending&order=work_date&work_date_from=2026-11-13&work_date_to=2026-11-21'),
    ).toEqual([on13.id, night13.id, late13.id, on21.id])
    expect(await allPages(w, 'order=work_date&operator_ident=ADA-1', 1)).toEqual([
      on13.id,
      late13.id,
      on21.id,
    ])
    expect(await allPages(w, `order=work_date&operator_id=${bob.id}`, 2)).toEqual([
      on12.id,
      night13.id,
      on24.id,
    ])
  })

  it('a cursor belongs to its order: one from the other order is refused (400 invalid_cursor); an unknown order is 422', async () => {
    const w = await world(t)
    const op = await w.operator()
    for (const day of ['02', '03', '04'])
      await w.session(op, `2026-11-${day}T08:00:00Z`, `2026-11-${day}T09:00:00Z`)
    const byDate = await page(w, 'order=work_date&limit=1')
    const byCreation = await page(w, 'limit=1')
    const refused = [
      `order=created&limit=1&cursor=${encodeURIComponent(byDate.next_cursor ?? '')}`,
      `limit=1&cursor=${encodeURIComponent(byDate.next_cursor ?? '')}`,
      `order=work_date&limit=1&cursor=${encodeURIComponent(byCreation.next_cursor ?? '')}`,
    ]
    for (const query of refused) {
      expectError(await w.api.get(`/v1/sessions?${query}`), 400, 'bad_request', 'invalid_cursor', 'cursor')
    }
    // Another account's cursor of the same order is refused too.
    const other = await world(t)
    expectError(
      await other.api.get(
        `/v1/sessions?order=work_date&cursor=${encodeURIComponent(byDate.next_cursor ?? '')}`,
      ),
      400,
      'bad_request',
      'invalid_cursor',
    )
    for (const order of ['newest', 'WORK_DATE', '']) {
      expectError(await w.api.get(`/v1/sessions?order=${order}`), 422, 'validation_error', undefined, 'order')
    }
  })
})
