import { parse } from 'csv-parse/sync'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../../src/lib/ids.js'
import { CSV_BATCH } from '../../../src/modules/timesheets/service.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type List, type TimesheetEntry } from '../../helpers/assertions.js'
import { ok, world } from '../../helpers/world.js'

const ENTRY_KEYS = [
  'auto_break_hours',
  'date',
  'double_time_hours',
  'employee_id',
  'flags',
  'hours',
  'name',
  'object',
  'open_sessions',
  'operator_id',
  'operator_ident',
  'overtime_hours',
  'pay_rule_id',
  'pending_hours',
  'regular_hours',
  'rejected_hours',
  'sessions',
]
const HEADER =
  'operator_ident,employee_id,name,date,hours,pending_hours,rejected_hours,sessions,open_sessions,regular_hours,overtime_hours,double_time_hours,auto_break_hours,pay_rule_id,flags'
/** Without a pay rule: nothing rounded or deducted, every paid hour regular. */
const NO_RULE = { overtime_hours: 0, double_time_hours: 0, auto_break_hours: 0, pay_rule_id: null }

describe('timesheets over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  async function all(api: ReturnType<TestApp['client']>, query: string, limit = 200) {
    const entries: TimesheetEntry[] = []
    let cursor: string | null = null
    for (;;) {
      const page: List<TimesheetEntry> = await ok(
        api.get<List<TimesheetEntry>>(
          `/v1/timesheets?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        ),
      )
      entries.push(...page.data)
      if (!page.has_more) {
        expect(page.next_cursor).toBeNull()
        return entries
      }
      cursor = page.next_cursor
    }
  }

  async function csv(api: ReturnType<TestApp['client']>, query: string) {
    const res = await api.get<string>(`/v1/timesheets?${query}`, { accept: 'text/csv' })
    expect(res.status, String(res.raw.body).slice(0, 300)).toBe(200)
    return res
  }

  it('sums hours per operator and work date by review status, ordered by ident then date', async () => {
    const w = await world(t)
    const bob = await w.operator({ ident: 'B-2', name: 'Bob', employee_id: 'E-2' })
    const ann = await w.operator({ ident: 'A-1', name: 'Ann' })
    const approved = await w.session(ann, '2026-11-02T08:00:00Z', '2026-11-02T12:00:00Z')
    await ok(w.approve(approved.id))
    const rejected = await w.session(ann, '2026-11-02T13:00:00Z', '2026-11-02T14:30:00Z')
    await ok(w.reject(rejected.id, 'double entry'))
    await w.session(ann, '2026-11-02T15:00:00Z', '2026-11-02T17:00:00Z', { break_minutes: 15 }) // pending 1.75
    // A scanned session: not_required, counts as hours.
    await w.scan(bob, '2026-11-03T08:00:00Z')
    await w.scan(bob, '2026-11-03T16:30:00Z')
    // Still open: counted, no hours.
    await w.scan(bob, '2026-11-04T08:00:00Z')
    // Deleted and out-of-range sessions count for nothing.
    const gone = await w.session(ann, '2026-11-03T08:00:00Z', '2026-11-03T09:00:00Z')
    await ok(w.root.delete(`/v1/sessions/${gone.id}`))
    await w.session(ann, '2026-10-31T08:00:00Z', '2026-10-31T09:00:00Z')

    const list = await ok(w.api.get<List<TimesheetEntry>>('/v1/timesheets?from=2026-11-01&to=2026-11-30'))
    expect(list).toMatchObject({ object: 'list', has_more: false, next_cursor: null })
    for (const entry of list.data) expect(Object.keys(entry).sort()).toEqual(ENTRY_KEYS)
    expect(list.data).toEqual([
      {
        object: 'timesheet_entry',
        operator_id: ann.id,
        operator_ident: 'A-1',
        employee_id: null,
        name: 'Ann',
        date: '2026-11-02',
        hours: 4,
        pending_hours: 1.75,
        rejected_hours: 1.5,
        sessions: 3,
        open_sessions: 0,
        regular_hours: 4,
        ...NO_RULE,
        flags: ['pending_review'],
      },
      {
        object: 'timesheet_entry',
        operator_id: bob.id,
        operator_ident: 'B-2',
        employee_id: 'E-2',
        name: 'Bob',
        date: '2026-11-03',
        hours: 8.5,
        pending_hours: 0,
        rejected_hours: 0,
        sessions: 1,
        open_sessions: 0,
        regular_hours: 8.5,
        ...NO_RULE,
        flags: [],
      },
      expect.objectContaining({
        operator_ident: 'B-2',
        date: '2026-11-04',
        hours: 0,
        sessions: 1,
        open_sessions: 1,
        flags: ['open_session'],
      }),
    ])
    // Filters.
    const bobs = await ok(
      w.api.get<List<TimesheetEntry>>(`/v1/timesheets?from=2026-11-01&to=2026-11-30&operator_id=${bob.id}`),
    )
    expect(bobs.data.map((e) => e.date)).toEqual(['2026-11-03', '2026-11-04'])
    const elsewhere = await ok(
      w.api.get<List<TimesheetEntry>>(`/v1/timesheets?from=2026-11-01&to=2026-11-30&location_id=loc_nowhere`),
    )
    expect(elsewhere.data).toEqual([])
    const here = await ok(
      w.api.get<List<TimesheetEntry>>(
        `/v1/timesheets?from=2026-11-01&to=2026-11-30&location_id=${w.location.id}`,
      ),
    )
    expect(here.data).toHaveLength(3)
    // Another account sees nothing of it.
    const other = await world(t)
    expect(
      (await ok(other.api.get<List<TimesheetEntry>>('/v1/timesheets?from=2026-11-01&to=2026-11-30'))).data,
    ).toEqual([])
  })

  it('rounds once, at the end: three sessions of 20 min 42 s make 1.04 h, not 1.05', async () => {
    const w = await world(t)
    const op = await w.operator()
    for (const hour of ['08', '10', '12']) {
      const s = await w.session(op, `2026-11-02T${hour}:00:00Z`, `2026-11-02T${hour}:20:42Z`)
      expect(s.total_hours).toBe(0.35)
      await ok(w.approve(s.id))
    }
    const list = await ok(w.api.get<List<TimesheetEntry>>('/v1/timesheets?from=2026-11-02&to=2026-11-02'))
    expect(list.data[0]).toMatchObject({ hours: 1.04, sessions: 3 })
    const week = await ok(
      w.api.get<List<TimesheetEntry>>('/v1/timesheets?from=2026-11-02&to=2026-11-02&group_by=week'),
    )
    expect(week.data[0]).toMatchObject({ hours: 1.04, date: '2026-11-02' })
  })

  it('hours are the exact sum rounded half-up once, for any durations and breaks (property)', async () => {
    const w = await world(t)
    let day = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            seconds: fc.integer({ min: 60, max: 3 * 3600 }),
            breakMinutes: fc.integer({ min: 0, max: 1 }),
          }),
          {
            minLength: 1,
            maxLength: 5,
          },
        ),
        async (sessions) => {
          day++
          const op = await w.operator()
          const date = new Date(Date.UTC(2025, 0, 1) + day * 86_400_000).toISOString().slice(0, 10)
          let start = Date.parse(`${date}T00:00:00Z`)
          let totalMs = 0n
          for (const { seconds, breakMinutes } of sessions) {
            const end = start + seconds * 1000
            await w.session(op, new Date(start).toISOString(), new Date(end).toISOString(), {
              break_minutes: breakMinutes,
            })
            totalMs += BigInt(seconds * 1000 - breakMinutes * 60_000)
            start = end + 60_000
          }
          // Half-up to hundredths of an hour (36,000 ms), in integers.
          const hundredths = (totalMs * 2n + 36_000n) / 72_000n
          const expected = Number(hundredths) / 100
          const list = await ok(
            w.api.get<List<TimesheetEntry>>(`/v1/timesheets?from=${date}&to=${date}&operator_id=${op.id}`),
          )
          expect(list.data[0]?.pending_hours).toBe(expected)
        },
      ),
      { numRuns: 25 },
    )
  })

  it('groups by ISO week (date = Monday), within from–to, and pages both ways the same', async () => {
    const w = await world(t)
    const op = await w.operator({ ident: 'W' })
    // Sunday 1 Nov, Monday 2 Nov, Sunday 8 Nov, Monday 9 Nov 2026.
    for (const day of ['01', '02', '08', '09']) {
      await w.session(op, `2026-11-${day}T08:00:00Z`, `2026-11-${day}T10:00:00Z`)
    }
    const weeks = await ok(
      w.api.get<List<TimesheetEntry>>('/v1/timesheets?from=2026-11-01&to=2026-11-30&group_by=week'),
    )
    expect(weeks.data.map((e) => [e.date, e.pending_hours, e.sessions])).toEqual([
      ['2026-10-26', 2, 1],
      ['2026-11-02', 4, 2],
      ['2026-11-09', 2, 1],
    ])
    expect(await all(w.api, 'from=2026-11-01&to=2026-11-30&group_by=week', 1)).toEqual(weeks.data)
    const days = await ok(w.api.get<List<TimesheetEntry>>('/v1/timesheets?from=2026-11-01&to=2026-11-30'))
    expect(await all(w.api, 'from=2026-11-01&to=2026-11-30', 1)).toEqual(days.data)
    // A cursor of the day list does not page the week list.
    const page = await ok(
      w.api.get<List<TimesheetEntry>>('/v1/timesheets?from=2026-11-01&to=2026-11-30&limit=1'),
    )
    expectError(
      await w.api.get(
        `/v1/timesheets?from=2026-11-01&to=2026-11-30&group_by=week&cursor=${page.next_cursor}`,
      ),
      400,
      'bad_request',
      'invalid_cursor',
    )
  })

  it('counts a night shift on the day it started in the location zone', async () => {
    const w = await world(t, { timezone: 'America/Los_Angeles' })
    const op = await w.operator()
    await w.session(op, '2026-11-02T22:00:00-08:00', '2026-11-03T06:00:00-08:00')
    const list = await ok(w.api.get<List<TimesheetEntry>>('/v1/timesheets?from=2026-11-02&to=2026-11-02'))
    expect(list.data).toEqual([expect.objectContaining({ date: '2026-11-02', pending_hours: 8 })])
    expect(
      (await ok(w.api.get<List<TimesheetEntry>>('/v1/timesheets?from=2026-11-03&to=2026-11-03'))).data,
    ).toEqual([])
  })

  it('validates the range and needs timesheets:read', async () => {
    const w = await world(t)
    expectError(
      await w.api.get('/v1/timesheets?from=2026-11-02&to=2026-11-01'),
      422,
      'validation_error',
      'invalid_date_range',
      'to',
    )
    await ok(w.api.get('/v1/timesheets?from=2026-01-01&to=2027-01-01')) // 366 days
    expectError(
      await w.api.get('/v1/timesheets?from=2026-01-01&to=2027-01-02'),
      422,
      'validation_error',
      'invalid_date_range',
      'to',
    )
    expectError(
      await w.api.get('/v1/timesheets?to=2026-11-01'),
      422,
      'validation_error',
      'missing_param',
      'from',
    )
    expectError(
      await w.api.get('/v1/timesheets?from=2026-11-31&to=2026-12-01'),
      422,
      'validation_error',
      'invalid_value',
      'from',
    )
    expectError(
      await w.api.get('/v1/timesheets?from=2026-11-01&to=2026-11-02&group_by=month'),
      422,
      'validation_error',
      undefined,
      'group_by',
    )
    expectError(
      await w.api.get('/v1/timesheets?from=2026-11-01&to=2026-11-02&limit=0'),
      422,
      'validation_error',
      undefined,
      'limit',
    )
    expectError(
      await w.api.get('/v1/timesheets?from=2026-11-01&to=2026-11-02&cursor=abc'),
      400,
      'bad_request',
      'invalid_cursor',
    )
    const reader = t.client((await t.key({ account: w.account, scopes: ['sessions:read'] })).secret)
    expectError(await reader.get('/v1/timesheets?from=2026-11-01&to=2026-11-02'), 403, 'insufficient_scope')
    expectError(
      await reader.get('/v1/timesheets?from=2026-11-01&to=2026-11-02', { accept: 'text/csv' }),
      403,
      'insufficient_scope',
    )
    const payroll = t.client((await t.key({ account: w.account, scopes: ['timesheets:read'] })).secret)
    expect((await payroll.get('/v1/timesheets?from=2026-11-01&to=2026-11-02')).status).toBe(200)
    // Errors of a CSV request are the JSON envelope.
    const bad = await w.api.get('/v1/timesheets?from=2026-11-02&to=2026-11-01', { accept: 'text/csv' })
    expectError(bad, 422, 'validation_error', 'invalid_date_range')
  })

  describe('CSV', () => {
    it('streams every row with the header, CRLF, a download name and 2-decimal hours', async () => {
      const w = await world(t)
      const op = await w.operator({ ident: 'A-1', name: 'Ann', employee_id: '0042' })
      await w.session(op, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
      const s = await w.session(op, '2026-11-03T08:00:00Z', '2026-11-03T12:20:42Z')
      await ok(w.approve(s.id))
      const res = await csv(w.api, 'from=2026-11-01&to=2026-11-30&limit=1')
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
      expect(res.headers['content-disposition']).toBe(
        'attachment; filename="timesheet-2026-11-01-2026-11-30.csv"',
      )
      expect(res.raw.body).toBe(
        `${HEADER}\r\nA-1,0042,Ann,2026-11-02,0.00,8.00,0.00,1,0,0.00,0.00,0.00,0.00,,pending_review\r\nA-1,0042,Ann,2026-11-03,4.35,0.00,0.00,1,0,4.35,0.00,0.00,0.00,,\r\n`,
      )
      // No sessions: the header alone.
      expect((await csv(w.api, 'from=2025-01-01&to=2025-01-31')).raw.body).toBe(`${HEADER}\r\n`)
      // Accept listing JSON first gets JSON.
      const json = await w.api.get('/v1/timesheets?from=2026-11-01&to=2026-11-30', {
        accept: 'application/json, text/csv',
      })
      expect(json.headers['content-type']).toMatch(/^application\/json/)
    })

    it("names the file of one operator's timesheet after its ident, made safe for a file name", async () => {
      const w = await world(t)
      const ann = await w.operator({ ident: 'A-1' })
      const odd = await w.operator({ ident: 'Zoë "x"/y' })
      const name = async (query: string) =>
        (await csv(w.api, `from=2026-11-01&to=2026-11-30&${query}`)).headers['content-disposition']
      expect(await name(`operator_id=${ann.id}`)).toBe(
        'attachment; filename="timesheet-2026-11-01-2026-11-30-A-1.csv"',
      )
      expect(await name(`operator_id=${odd.id}`)).toBe(
        'attachment; filename="timesheet-2026-11-01-2026-11-30-Zo_x_y.csv"',
      )
      // An id no operator of the caller has: its timesheet is empty, and its name still says whose.
      expect(await name('operator_id=op_nobody')).toBe(
        'attachment; filename="timesheet-2026-11-01-2026-11-30-op_nobody.csv"',
      )
      expect(await name('group_by=week')).toBe('attachment; filename="timesheet-2026-11-01-2026-11-30.csv"')
    })

    it('is safe with hostile names: RFC 4180 quoting and the formula-injection prefix', async () => {
      const w = await world(t)
      const hostile = [
        { ident: '=cmd', name: '=HYPERLINK("http://evil.example","click")', employee_id: '+1-555' },
        { ident: '@sum', name: '-2+3', employee_id: '@A1' },
        { ident: 'c,d', name: 'Doe, "Jo"\r\nline two', employee_id: '\tTAB' },
        { ident: 'e', name: '\rreturn', employee_id: 'plain' },
        { ident: 'f', name: 'Zoë 💼', employee_id: '-' },
      ]
      for (const fields of hostile) {
        const op = await w.operator(fields)
        await w.session(op, '2026-11-02T08:00:00Z', '2026-11-02T09:00:00Z')
      }
      const text = (await csv(w.api, 'from=2026-11-02&to=2026-11-02')).raw.body
      const rows = parse(text, { relax_column_count: false }) as string[][]
      expect(rows[0]?.join(',')).toBe(HEADER)
      const byIdent = new Map(rows.slice(1).map((r) => [r[0], r]))
      expect(byIdent.get("'=cmd")?.slice(0, 3)).toEqual([
        "'=cmd",
        "'+1-555",
        `'=HYPERLINK("http://evil.example","click")`,
      ])
      expect(byIdent.get("'@sum")?.slice(0, 3)).toEqual(["'@sum", "'@A1", "'-2+3"])
      expect(byIdent.get('c,d')?.slice(0, 3)).toEqual(['c,d', "'\tTAB", 'Doe, "Jo"\r\nline two'])
      expect(byIdent.get('e')?.slice(0, 3)).toEqual(['e', 'plain', "'\rreturn"])
      expect(byIdent.get('f')?.slice(0, 3)).toEqual(['f', "'-", 'Zoë 💼'])
      // Every data row has the nine cells and 1 hour pending.
      for (const row of rows.slice(1))
        expect(row.slice(3)).toEqual([
          '2026-11-02',
          '0.00',
          '1.00',
          '0.00',
          '1',
          '0',
          '0.00',
          '0.00',
          '0.00',
          '0.00',
          '',
          'pending_review',
        ])
      // The quoting itself, as bytes.
      expect(text).toContain(`"c,d",'\tTAB,"Doe, ""Jo""\r\nline two"`)
      expect(text).toContain(`"'=HYPERLINK(""http://evil.example"",""click"")"`)
    })

    it('over several database batches equals the JSON pages, row for row', async () => {
      const w = await world(t)
      // 60 operators × 90 days = 5,400 sessions: more than one CSV batch (CSV_BATCH sessions).
      expect(60 * 90).toBeGreaterThan(CSV_BATCH)
      const operators = await Promise.all(
        Array.from({ length: 60 }, (_, i) => w.operator({ ident: `P-${String(i).padStart(2, '0')}` })),
      )
      const rows = operators.flatMap((op) =>
        Array.from({ length: 90 }, (_, d) => {
          const checkIn = Date.UTC(2026, 0, 1) + d * 86_400_000 + 8 * 3_600_000
          return {
            id: newId('ses'),
            account_id: w.accountId,
            livemode: 0 as const,
            operator_id: op.id,
            operator_ident: op.ident,
            device_code: 'GATE',
            location_id: null,
            check_in_at: checkIn,
            check_out_at: checkIn + (d + 1) * 61_000,
            break_minutes: 0,
            notes: null,
            is_flagged: 0 as const,
            flag_reason: null,
            source: 'scan' as const,
            status: 'completed' as const,
            deleted_at: null,
            created_at: checkIn,
            updated_at: checkIn,
            work_date: new Date(checkIn).toISOString().slice(0, 10),
            review_status: 'not_required' as const,
            reviewed_at: null,
            reviewed_by: null,
            review_note: null,
          }
        }),
      )
      for (let i = 0; i < rows.length; i += 300)
        await t.db
          .insertInto('sessions')
          .values(rows.slice(i, i + 300))
          .execute()
      const query = 'from=2026-01-01&to=2026-03-31'
      const pages = await all(w.api, query)
      expect(pages).toHaveLength(5400)
      // Small pages: one operator's 90 sessions outgrow a page's batch (2 × 11 + 50 sessions), which
      // is read again larger; the pages still hold every entry once, in order.
      const first = operators[0]
      if (!first) throw new Error('no operator')
      const small = await all(w.api, `${query}&operator_id=${first.id}`, 10)
      expect(small).toEqual(pages.filter((e) => e.operator_id === first.id))
      expect(small).toHaveLength(90)
      const answer = await csv(w.api, query)
      expect(answer.headers['x-total-count']).toBe('5400')
      // 1 January 2026 is a Thursday, 31 March a Tuesday: 14 ISO weeks.
      const weeks = await all(w.api, `${query}&group_by=week`)
      expect(weeks).toHaveLength(60 * 14)
      expect((await csv(w.api, `${query}&group_by=week`)).headers['x-total-count']).toBe(String(60 * 14))
      const lines = answer.raw.body.split('\r\n')
      expect(lines[0]).toBe(HEADER)
      expect(lines.at(-1)).toBe('')
      expect(lines.slice(1, -1)).toEqual(
        pages.map((e) =>
          [
            e.operator_ident,
            '',
            '',
            e.date,
            e.hours.toFixed(2),
            '0.00',
            '0.00',
            e.sessions,
            e.open_sessions,
            e.hours.toFixed(2),
            '0.00',
            '0.00',
            '0.00',
            '',
            '',
          ].join(','),
        ),
      )
    })
  })
})
