import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../packages/client/src/export/cli.js'
import { AttendanceApiError, type AttendanceClient } from '../../packages/client/src/index.js'
import { run, START_MS } from '../helpers/process.js'
import { type ServedApp, serveApp } from './setup.js'

const HEADER =
  'operator_ident,employee_id,name,date,hours,pending_hours,rejected_hours,sessions,open_sessions,regular_hours,overtime_hours,double_time_hours,auto_break_hours,pay_rule_id,flags'

describe('the client: review, pay periods, timesheets', () => {
  let served: ServedApp
  let dir: string

  beforeAll(async () => {
    served = await serveApp()
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-export-test-'))
  })
  afterAll(async () => {
    await served?.close()
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  /** An account with 3 operators and a few sessions in a month of 2026 (November unless told). */
  async function month(client: AttendanceClient, yearMonth = '2026-11') {
    const location = await client.locations.create({ name: 'HQ', timezone: 'Europe/Paris' })
    await client.devices.create({ code: 'GATE', location_id: location.id })
    const sessions = []
    for (const ident of ['C', 'A', 'B']) {
      const operator = await client.operators.create({ ident, name: `Worker ${ident}` })
      for (const day of ['02', '03']) {
        sessions.push(
          await client.sessions.create({
            operator_id: operator.id,
            device_id: 'GATE',
            check_in: { time: `${yearMonth}-${day}T08:00:00+01:00` },
            check_out: { time: `${yearMonth}-${day}T12:30:00+01:00` },
          }),
        )
      }
    }
    return sessions
  }

  it('approves and rejects sessions, closes and reopens a pay period', async () => {
    const { client } = await served.client()
    // October: a period closes once it is over.
    const sessions = await month(client, '2026-10')
    const period = await client.payPeriods.create({ start_date: '2026-10-01', end_date: '2026-10-31' })
    expect(period).toMatchObject({ object: 'pay_period', status: 'open' })

    const refused = await client.payPeriods.close(period.id).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(AttendanceApiError)
    expect((refused as AttendanceApiError).code).toBe('pending_reviews')

    const [first, second, ...rest] = sessions
    const approved = await client.sessions.approve(first?.id ?? '', { note: 'ok' })
    expect(approved).toMatchObject({ review_status: 'approved', review_note: 'ok' })
    const rejected = await client.sessions.reject(second?.id ?? '', { note: 'duplicate' })
    expect(rejected.review_status).toBe('rejected')
    for (const s of rest) await client.sessions.approve(s.id)

    const pending = await client.sessions.list({ review_status: 'pending' })
    expect(pending.data).toEqual([])
    const closed = await client.payPeriods.close(period.id)
    expect(closed.status).toBe('closed')
    const frozen = await client.sessions.approve(second?.id ?? '').catch((error: unknown) => error)
    expect((frozen as AttendanceApiError).code).toBe('period_closed')
    expect((await client.payPeriods.reopen(period.id)).status).toBe('open')
    const all = []
    for await (const p of client.payPeriods.iterate({ limit: 1 })) all.push(p.id)
    expect(all).toEqual([period.id])
    expect(await client.payPeriods.retrieve(period.id)).toMatchObject({ status: 'open' })
  })

  it('the review queue by work date and operator ident; a session without a check-out is completed, then approved', async () => {
    const { client } = await served.client()
    const sessions = await month(client)
    const queue = []
    for await (const s of client.sessions.iterate({ review_status: 'pending', order: 'work_date', limit: 4 }))
      queue.push(`${s.work_date} ${s.operator_ident}`)
    // By work date, then by id (the order they were entered: C, A, B each day).
    expect(queue).toEqual([
      '2026-11-02 C',
      '2026-11-02 A',
      '2026-11-02 B',
      '2026-11-03 C',
      '2026-11-03 A',
      '2026-11-03 B',
    ])
    const ofA = await client.sessions.list({ operator_ident: 'A', order: 'work_date' })
    expect(ofA.data.map((s) => s.id)).toEqual(sessions.slice(2, 4).map((s) => s.id))
    expect((await client.sessions.list({ operator_ident: 'nobody' })).data).toEqual([])

    // A forgotten check-out, closed by the operator's next scan 25 hours later.
    const first = await client.scans.create({
      device_id: 'GATE',
      operator_ident: 'A',
      time: '2026-11-05T08:00:00Z',
    })
    await client.scans.create({ device_id: 'GATE', operator_ident: 'A', time: '2026-11-06T09:00:00Z' })
    const id = first.session_id ?? ''
    const refused = await client.sessions.approve(id).catch((error: unknown) => error)
    expect((refused as AttendanceApiError).code).toBe('check_out_missing')
    await client.sessions.update(id, { check_out: { time: '2026-11-05T16:00:00Z' } })
    expect((await client.sessions.approve(id)).review_status).toBe('approved')
    const [approval] = (await client.sessions.revisions(id)).data
    expect(approval).toMatchObject({ action: 'approved', key_label: null })
  })

  it('timesheets.iterate pages through every entry; timesheets.csv streams the same rows', async () => {
    const { client, key } = await served.client()
    const sessions = await month(client)
    for (const s of sessions.slice(0, 3)) await client.sessions.approve(s.id)
    const params = { from: '2026-11-01', to: '2026-11-30' }
    const entries = []
    for await (const entry of client.timesheets.iterate({ ...params, limit: 2 })) entries.push(entry)
    expect(entries.map((e) => `${e.operator_ident} ${e.date} ${e.hours} ${e.pending_hours}`)).toEqual([
      'A 2026-11-02 4.5 0',
      'A 2026-11-03 0 4.5',
      'B 2026-11-02 0 4.5',
      'B 2026-11-03 0 4.5',
      'C 2026-11-02 4.5 0',
      'C 2026-11-03 4.5 0',
    ])
    const page = await client.timesheets.list({ ...params, group_by: 'week' })
    expect(page.data.map((e) => e.date)).toEqual(['2026-11-02', '2026-11-02', '2026-11-02'])

    const download = await client.timesheets.csv(params)
    expect(download.totalRows).toBe(6)
    expect(download.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    const lines = (await new Response(download.body).text()).split('\r\n')
    expect(lines[0]).toBe(HEADER)
    expect(lines.slice(1, -1)).toEqual(
      entries.map((e) =>
        [
          e.operator_ident,
          '',
          e.name,
          e.date,
          e.hours.toFixed(2),
          e.pending_hours.toFixed(2),
          '0.00',
          1,
          0,
          e.regular_hours.toFixed(2),
          '0.00',
          '0.00',
          '0.00',
          '',
          e.flags.join(';'),
        ].join(','),
      ),
    )
    // An error answer rejects like any call.
    const bad = await client.timesheets.csv({ from: '2026-11-02', to: '2026-11-01' }).catch((e: unknown) => e)
    expect((bad as AttendanceApiError).code).toBe('invalid_date_range')
    const noScope = (
      await served.client(await served.key({ account: key.account_id, scopes: ['sessions:read'] }))
    ).client
    const forbidden = await noScope.timesheets.csv(params).catch((e: unknown) => e)
    expect((forbidden as AttendanceApiError).status).toBe(403)
  })

  describe('attendance-export', () => {
    async function exportRun(secret: string, args: string[]) {
      let stdout = ''
      let stderr = ''
      const sink = new Writable({
        write(chunk, _encoding, done) {
          stdout += String(chunk)
          done()
        },
      })
      const code = await main(args, {
        stdout: Object.assign(sink, { isTTY: false }),
        stderr: { write: (text: string) => (stderr += text) },
        env: { ATTENDANCE_API_KEY: secret, ATTENDANCE_BASE_URL: served.baseUrl },
      })
      return { code, stdout, stderr }
    }

    it('writes the CSV to --out, through a temporary file, and reports the rows', async () => {
      const { client, key } = await served.client()
      await month(client)
      const out = path.join(dir, 'november.csv')
      const result = await exportRun(key.secret, ['--from', '2026-11-01', '--to', '2026-11-30', '--out', out])
      expect(result.code, result.stderr).toBe(0)
      const text = fs.readFileSync(out, 'utf8')
      expect(text.split('\r\n')[0]).toBe(HEADER)
      expect(text.split('\r\n')).toHaveLength(8)
      expect(fs.existsSync(`${out}.part`)).toBe(false)
      // The progress counts data rows against X-Total-Count, as the final line does: the same 6.
      expect(result.stderr).toContain('progress: 6/6 rows')
      expect(result.stderr).toContain(`6 rows (2026-11-01 to 2026-11-30) written to ${out}`)
      expect(result.stdout).toBe('')
    })

    it('--help lists every column of the CSV the service sends, in order, and says what a week is', async () => {
      const { key } = await served.client()
      const help = await exportRun(key.secret, ['--help'])
      expect(help.code).toBe(0)
      // The indented lines after the sentence that announces the header row, up to the blank line.
      const after = help.stdout
        .split('\n')
        .slice(help.stdout.split('\n').findIndex((line) => line.endsWith('every column in order:')) + 1)
      const listed = after
        .slice(0, after.indexOf(''))
        .map((line) => line.trim())
        .join('')
      const exported = await exportRun(key.secret, ['--from', '2026-11-01', '--to', '2026-11-30'])
      expect(exported.code, exported.stderr).toBe(0)
      expect(listed).toBe(exported.stdout.split('\r\n')[0])
      expect(listed.split(',')).toHaveLength(15)
      // Weeks are the operator's pay rule's workweeks, not ISO weeks.
      expect(help.stdout).toMatch(
        /week: the operator's pay rule's workweek, which begins on\s+its workweek_start/,
      )
      expect(help.stdout).not.toMatch(/\bISO\b/)
    })

    it('refuses bad input with exit 2 and leaves nothing behind on a failed download', async () => {
      const { key } = await served.client()
      expect((await exportRun(key.secret, ['--from', '2026-11-01'])).code).toBe(2)
      expect((await exportRun(key.secret, ['--from', '2026-11-01', '--to', 'soon'])).code).toBe(2)
      expect(
        (await exportRun(key.secret, ['--from', '2026-11-01', '--to', '2026-11-30', '--group-by', 'month']))
          .code,
      ).toBe(2)
      expect((await exportRun('nope', ['--from', '2026-11-01', '--to', '2026-11-30'])).code).toBe(2)
      const help = await exportRun(key.secret, ['--help'])
      expect(help.code).toBe(0)
      expect(help.stdout).toContain('Usage: attendance-export')
      const out = path.join(dir, 'bad.csv')
      const failed = await exportRun(key.secret, ['--from', '2026-11-30', '--to', '2026-11-01', '--out', out])
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain('invalid_date_range')
      expect(fs.existsSync(out)).toBe(false)
      expect(fs.existsSync(`${out}.part`)).toBe(false)
    })

    // A child process under tsx: its bound (START_MS, for a loaded 2-core machine) plus the set-up.
    it('as a command, writes to standard output without --out', { timeout: START_MS + 30_000 }, async () => {
      const { client, key } = await served.client()
      await month(client)
      const result = await run(
        'node',
        [
          '--import',
          'tsx',
          'packages/client/src/export/cli.ts',
          '--from',
          '2026-11-01',
          '--to',
          '2026-11-30',
          '--group-by',
          'week',
        ],
        { env: { ATTENDANCE_API_KEY: key.secret, ATTENDANCE_BASE_URL: served.baseUrl } },
      )
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toBe(
        `${HEADER}\r\n${['A', 'B', 'C'].map((w) => `${w},,Worker ${w},2026-11-02,0.00,9.00,0.00,2,0,0.00,0.00,0.00,0.00,,pending_review\r\n`).join('')}`,
      )
      expect(result.stderr).toContain('3 rows (2026-11-01 to 2026-11-30).')
    })
  })
})
