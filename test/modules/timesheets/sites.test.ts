import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import type { List, TimesheetEntry } from '../../helpers/assertions.js'
import { type SitesWorld, sitesWorld } from '../../helpers/sites.js'

/**
 * Timesheets for a principal held to sites (decisions.md, "Sites"): the rows of the operators homed
 * at its locations, each whole (every site's hours: overtime counts them all), as JSON and as CSV.
 */
describe('timesheets of a principal held to sites', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  const MARCH = 'from=2026-03-01&to=2026-03-31'

  async function worked(
    w: SitesWorld,
    operatorId: string,
    where: 'here' | 'there',
    date: string,
    hours: [number, number],
  ) {
    const time = (h: number) => `${date}T${String(h).padStart(2, '0')}:00:00Z`
    const res = await w.owner.post('/v1/sessions', {
      operator_id: operatorId,
      device_id: w.devices[where].code,
      check_in: { time: time(hours[0]) },
      check_out: { time: time(hours[1]) },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
  }

  /** The operator homed here works here and there; the others work here. */
  async function month() {
    const w = await sitesWorld(t)
    await worked(w, w.operators.here.id, 'here', '2026-03-02', [8, 12])
    await worked(w, w.operators.here.id, 'there', '2026-03-02', [13, 17])
    await worked(w, w.operators.here.id, 'there', '2026-03-03', [8, 10])
    await worked(w, w.operators.there.id, 'here', '2026-03-02', [8, 16])
    await worked(w, w.operators.homeless.id, 'here', '2026-03-04', [8, 16])
    return w
  }

  it('answers the rows of the operators homed at its locations, with their hours at every site', async () => {
    const w = await month()
    const res = await w.restricted.get<List<TimesheetEntry>>(`/v1/timesheets?${MARCH}`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.map((e) => [e.operator_id, e.date, e.sessions, e.pending_hours])).toEqual([
      [w.operators.here.id, '2026-03-02', 2, 8],
      [w.operators.here.id, '2026-03-03', 1, 2],
    ])
    const weeks = await w.restricted.get<List<TimesheetEntry>>(`/v1/timesheets?${MARCH}&group_by=week`)
    expect(weeks.body.data.map((e) => [e.operator_id, e.sessions, e.pending_hours])).toEqual([
      [w.operators.here.id, 3, 10],
    ])
    const other = await w.restricted.get<List<TimesheetEntry>>(
      `/v1/timesheets?${MARCH}&operator_id=${w.operators.there.id}`,
    )
    expect(other.body.data).toEqual([])
    // Pages stay full: one entry a page, both of them.
    const first = await w.restricted.get<List<TimesheetEntry>>(`/v1/timesheets?${MARCH}&limit=1`)
    expect(first.body.data.map((e) => e.date)).toEqual(['2026-03-02'])
    const second = await w.restricted.get<List<TimesheetEntry>>(
      `/v1/timesheets?${MARCH}&limit=1&cursor=${encodeURIComponent(first.body.next_cursor ?? '')}`,
    )
    expect(second.body.data.map((e) => e.date)).toEqual(['2026-03-03'])
    expect(second.body.has_more).toBe(false)
    // The owner's key: every operator.
    const all = await w.owner.get<List<TimesheetEntry>>(`/v1/timesheets?${MARCH}`)
    expect(new Set(all.body.data.map((e) => e.operator_id))).toEqual(
      new Set(Object.values(w.operators).map((o) => o.id)),
    )
  })

  it('the CSV too, and its row count', async () => {
    const w = await month()
    const csv = await w.restricted.get(`/v1/timesheets?${MARCH}`, { accept: 'text/csv' })
    expect(csv.status).toBe(200)
    expect(csv.headers['x-total-count']).toBe('2')
    const lines = String(csv.raw.body).trim().split('\r\n')
    expect(lines).toHaveLength(3)
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual([
      w.operators.here.ident,
      w.operators.here.ident,
    ])
    const owners = await w.owner.get(`/v1/timesheets?${MARCH}`, { accept: 'text/csv' })
    expect(owners.headers['x-total-count']).toBe('4')
  })
})
