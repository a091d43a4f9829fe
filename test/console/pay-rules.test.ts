import fs from 'node:fs'
import type { Locator } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import type { List, Location, Operator, PayRule, Scan, Session } from '../helpers/assertions.js'
import { chromiumAvailable, expectUsablePage, SCREENS, useConsole } from '../helpers/browser.js'
import { openFromMenu } from '../helpers/console.js'

/** Wall-clock time in Los Angeles in October 2026 (PDT, UTC−7) as the API's instant. */
const la = (day: string, time: string) => new Date(`${day}T${time}:00-07:00`).toISOString()

/** The workweek of the walk: Monday 19 to Sunday 25 October 2026. */
const WEEK = { from: '2026-10-19', to: '2026-10-25' }

/** A row's cells as one line of text, spaces collapsed. */
const textOf = async (locator: Locator) => (await locator.innerText()).replace(/\s+/g, ' ').trim()

/**
 * Pay rules in Debian's Chromium against the real service: a California-style rule created, refused
 * and edited through its page, made the default, set on an operator; the timesheet of a week that it
 * splits into regular, overtime and double time, with a deducted and a missed break, per day and
 * per week; and a session's breaks on its page. For each screen a service of its own and one page
 * walked through in order.
 */
describe.runIf(chromiumAvailable()).each(SCREENS)('pay rules in the console, on a $name', (screen) => {
  const sessions: Record<string, string> = {}

  const api = () => ui.t.client(ui.key)
  const expectUsable = (name: string) => expectUsablePage(ui.page, screen, name, ['session-breaks'])

  /** Ada's session of a day, entered through the API with its breaks, and approved. */
  async function workDay(day: string, from: string, to: string, breaks: Array<[string, string, boolean?]>) {
    const created = await api().post<Session>('/v1/sessions', {
      operator_ident: 'W-001',
      device_id: 'GATE-LA',
      check_in: { time: la(day, from) },
      check_out: { time: la(day, to) },
      breaks: breaks.map(([start, end, paid]) => ({
        start: { time: la(day, start) },
        end: { time: la(day, end) },
        paid: paid ?? false,
      })),
    })
    expect(created.status).toBe(201)
    sessions[day] = created.body.id
    expect((await api().post(`/v1/sessions/${created.body.id}/approve`, {})).status).toBe(200)
  }

  async function scan(operator: string, direction: string, day: string, time: string): Promise<Scan> {
    const scanned = await api().post<Scan>('/v1/scans', {
      device_id: 'GATE-LA',
      operator_ident: operator,
      direction,
      time: la(day, time),
    })
    expect(scanned.status).toBe(201)
    return scanned.body
  }

  const rulesOverApi = async () => (await api().get<List<PayRule>>('/v1/pay-rules')).body.data
  const operatorOverApi = async (ident: string) =>
    (await api().get<List<Operator>>(`/v1/operators?ident=${ident}`)).body.data[0]

  /** The row of a rule on the Pay rules page, by its name. */
  const ruleRow = (name: string) =>
    ui.page
      .getByRole('row')
      .filter({ has: ui.page.getByRole('button', { name: `Edit ${name}`, exact: true }) })

  const ui = useConsole(screen, {
    // As `cli keys label` sets it: the session's history names the key by it.
    keyLabel: 'Ops manager',
    seed: async () => {
      await api().post('/v1/operators', { ident: 'W-001', name: 'Ada Lovelace', employee_id: 'HR-7' })
      await api().post('/v1/operators', { ident: 'W-002', name: 'Grace Hopper' })
      const location = await api().post<Location>('/v1/locations', {
        name: 'Los Angeles depot',
        timezone: 'America/Los_Angeles',
      })
      await api().post('/v1/devices', { code: 'GATE-LA', name: 'Depot gate', location_id: location.body.id })
      // A rule nobody uses, which the page deletes.
      expect((await api().post('/v1/pay-rules', { name: 'Old rule' })).status).toBe(201)

      // Ada's week. Monday: 14 hours without a break (06:58 and 21:05 round to 07:00 and 21:00). Tuesday
      // to Friday: 9 hours after an unpaid half hour (Tuesday also has a paid quarter). Saturday, by
      // scans: 6 hours after a half-hour break.
      await workDay('2026-10-19', '06:58', '21:05', [])
      await workDay('2026-10-20', '08:00', '17:30', [
        ['10:00', '10:15', true],
        ['12:00', '12:30'],
      ])
      for (const day of ['2026-10-21', '2026-10-22', '2026-10-23']) {
        await workDay(day, '08:00', '17:30', [['12:00', '12:30']])
      }
      const saturday = await scan('W-001', 'in', '2026-10-24', '08:00')
      sessions['2026-10-24'] = saturday.session_id ?? ''
      await scan('W-001', 'break_start', '2026-10-24', '11:00')
      await scan('W-001', 'break_end', '2026-10-24', '11:30')
      await scan('W-001', 'out', '2026-10-24', '14:30')
      const scanned = await api().get<Session>(`/v1/sessions/${sessions['2026-10-24']}`)
      if (scanned.body.review_status === 'pending') {
        await api().post(`/v1/sessions/${sessions['2026-10-24']}/approve`, {})
      }
      // Grace: 9 hours on Monday without a break, still awaiting review; Wednesday, checked in only.
      const grace = await api().post<Session>('/v1/sessions', {
        operator_ident: 'W-002',
        device_id: 'GATE-LA',
        check_in: { time: la('2026-10-19', '09:00') },
        check_out: { time: la('2026-10-19', '18:00') },
      })
      expect(grace.body.review_status).toBe('pending')
      await scan('W-002', 'in', '2026-10-21', '08:00')
    },
    timeoutMs: 60_000,
  })

  it('creates a rule through its form, showing the refusal of the API on the field it names', async () => {
    await openFromMenu(ui.page, 'Pay rules')
    await ui.page.getByRole('heading', { name: 'Pay rules', level: 1 }).waitFor()
    await ruleRow('Old rule').waitFor()
    await ui.page.getByRole('button', { name: 'New pay rule' }).click()
    const form = ui.page.getByRole('form', { name: 'Create pay rule' })
    await form.getByLabel('Name').fill('California hourly')
    await form.getByLabel('To a multiple of').selectOption('15')
    await form.getByRole('button', { name: 'Add a break rule' }).click()
    await form.getByLabel('Rule 1: after more than (hours)').fill('5')
    await form.getByLabel('Rule 1: at least (minutes)').fill('30')
    await form.getByLabel('Rule 1: when missing').selectOption('flag')
    await form.getByLabel('Daily overtime after (hours)').fill('8')
    // Double time before overtime: the API refuses it, naming overtime.daily_double_minutes.
    const double = form.getByLabel('Double time after (hours a day)')
    await double.fill('6')
    await form.getByLabel('Weekly overtime after (hours)').fill('40')
    await form.getByLabel('Seventh consecutive day: overtime, then double time').check()
    await form.getByRole('button', { name: 'Create pay rule' }).click()

    await form.getByText('The rule was not saved: see the field marked above.').waitFor()
    expect(await double.getAttribute('aria-invalid')).toBe('true')
    const message = form.locator(`#${await double.getAttribute('aria-describedby')}`)
    expect(await message.innerText()).toMatch(/daily_double_minutes/)
    // The refused field has the focus, so the keyboard is where the fix is.
    expect(await double.evaluate((input) => input === input.ownerDocument.activeElement)).toBe(true)
    expect(await rulesOverApi()).toHaveLength(1)
    await expectUsable('pay-rules-refused')

    await double.fill('12')
    await form.getByRole('button', { name: 'Create pay rule' }).click()
    const row = ruleRow('California hourly')
    await row.waitFor()
    expect(await textOf(row.getByRole('cell').nth(0))).toBe('California hourly')
    expect(await textOf(row)).toMatch(
      /^California hourly Monday 15 min, both to the nearest After 5 h: 30 min, flagged if missing Daily over 8 h Double time over 12 h Weekly over 40 h Seventh day/,
    )
    await ui.page.getByText('2 pay rules shown.').waitFor()
    const created = (await rulesOverApi()).find((rule) => rule.name === 'California hourly')
    expect(created).toMatchObject({
      is_default: false,
      workweek_start: 'monday',
      rounding: { interval_minutes: 15, check_in: 'nearest', check_out: 'nearest' },
      breaks: [{ after_minutes: 300, minutes: 30, action: 'flag' }],
      overtime: { daily_minutes: 480, daily_double_minutes: 720, weekly_minutes: 2400, seventh_day: true },
    })
  })

  it('edits the rule, refused first on the break rule the API names', async () => {
    await ui.page.getByRole('button', { name: 'Edit California hourly' }).click()
    const form = ui.page.getByRole('form', { name: 'Save California hourly' })
    await form.getByRole('button', { name: 'Add a break rule' }).click()
    await form.getByLabel('Rule 2: after more than (hours)').fill('10')
    const minutes = form.getByLabel('Rule 2: at least (minutes)')
    await minutes.fill('300')
    await form.getByRole('button', { name: 'Save California hourly' }).click()
    await form.getByText('The rule was not saved: see the field marked above.').waitFor()
    expect(await minutes.getAttribute('aria-invalid')).toBe('true')
    expect(await form.locator(`#${await minutes.getAttribute('aria-describedby')}`).innerText()).toMatch(
      /breaks\[1\]\.minutes.*at most 240/,
    )

    await minutes.fill('60')
    await form.getByRole('button', { name: 'Save California hourly' }).click()
    await form.waitFor({ state: 'detached' })
    expect(await textOf(ruleRow('California hourly'))).toContain(
      'After 5 h: 30 min, flagged if missing After 10 h: 60 min, deducted if missing',
    )
    const [rule] = (await rulesOverApi()).filter((r) => r.name === 'California hourly')
    expect(rule?.breaks).toEqual([
      { after_minutes: 300, minutes: 30, action: 'flag' },
      { after_minutes: 600, minutes: 60, action: 'deduct' },
    ])
  })

  it('makes the rule the default, and deletes an unused rule after a question', async () => {
    await ui.page.getByRole('button', { name: 'Make default: California hourly' }).click()
    await ruleRow('California hourly').getByText('default', { exact: true }).waitFor()
    expect(await ui.page.getByRole('button', { name: 'Make default: California hourly' }).count()).toBe(0)
    expect((await rulesOverApi()).find((r) => r.is_default)?.name).toBe('California hourly')
    await expectUsable('pay-rules')

    await ui.page.getByRole('button', { name: 'Delete Old rule' }).click()
    const question = ui.page.getByRole('group', { name: 'Delete the pay rule Old rule?' })
    await question.getByRole('button', { name: 'Delete the rule' }).click()
    await ui.page.getByText('1 pay rule shown.').waitFor()
    expect((await rulesOverApi()).map((r) => r.name)).toEqual(['California hourly'])
  })

  it("sets and clears an operator's rule on the Operators page", async () => {
    await openFromMenu(ui.page, 'Operators')
    const ada = ui.page.getByLabel('Pay rule of W-001')
    const grace = ui.page.getByLabel('Pay rule of W-002')
    // Without a rule of their own, operators are counted by the default, which the menu names.
    await grace
      .locator('option', { hasText: 'Account default: California hourly' })
      .waitFor({ state: 'attached' })
    expect(await grace.inputValue()).toBe('')
    const [rule] = await rulesOverApi()
    await ada.selectOption({ label: 'California hourly' })
    await expect.poll(async () => (await operatorOverApi('W-001'))?.pay_rule_id).toBe(rule?.id)
    expect(await ada.inputValue()).toBe(rule?.id)

    await grace.selectOption({ label: 'California hourly' })
    await expect.poll(async () => (await operatorOverApi('W-002'))?.pay_rule_id).toBe(rule?.id)
    await grace.selectOption({ label: 'Account default: California hourly' })
    await expect.poll(async () => (await operatorOverApi('W-002'))?.pay_rule_id).toBeNull()
    // The menu is disabled while its change is saved: the service commits before the page has its
    // answer, so the menu comes back a moment after the API shows the change.
    await expect.poll(() => grace.isEnabled(), { timeout: 10_000 }).toBe(true)
  })

  it('refuses plainly to delete a rule an operator has', async () => {
    await openFromMenu(ui.page, 'Pay rules')
    await ui.page.getByRole('button', { name: 'Delete California hourly' }).click()
    await ui.page
      .getByRole('group', { name: 'Delete the pay rule California hourly?' })
      .getByRole('button', { name: 'Delete the rule' })
      .click()
    const alert = ui.page.getByRole('alert')
    await alert.waitFor()
    expect(await textOf(alert)).toMatch(
      /^This rule cannot be deleted: an operator still has it\. .* Give its operators another rule \(or the account default\) on the Operators page, then delete it\.$/,
    )
    expect(await rulesOverApi()).toHaveLength(1)
  })

  it('splits the week into regular, overtime and double time, with the flags, per day', async () => {
    await openFromMenu(ui.page, 'Timesheets')
    await ui.page.getByText(/^(\d+ rows? shown|No session has a work date)/).waitFor()
    await ui.page.getByLabel('From', { exact: true }).fill(WEEK.from)
    await ui.page.getByLabel('To', { exact: true }).fill(WEEK.to)
    await Promise.all([
      ui.page.waitForResponse((response) => /\/v1\/timesheets\?.*from=2026-10-19/.test(response.url())),
      ui.page.getByRole('button', { name: 'Show timesheet', exact: true }).click(),
    ])
    await ui.page.getByText('8 rows shown.').waitFor()
    const rows = await Promise.all(
      (await ui.page.getByRole('row', { name: /W-00\d/ }).all()).map((row) => textOf(row)),
    )
    // Columns: operator, name, employee id, date, hours, regular, overtime, double time, auto break,
    // pending, rejected, sessions, flags. Monday: 14 rounded hours, an hour deducted (no break after
    // 10 hours), the half hour after 5 missed (flagged); 13 hours are 8 regular, 4 overtime and 1
    // double time. Tuesday to Friday: 8 regular and 1 overtime each. Saturday: the week's regular
    // time is at 40 hours, so its 6 hours are overtime.
    expect(rows).toEqual([
      'W-001 Ada Lovelace HR-7 2026-10-19 13.00 8.00 4.00 1.00 1.00 0.00 0.00 1 Missed break',
      'W-001 Ada Lovelace HR-7 2026-10-20 9.00 8.00 1.00 0.00 0.00 0.00 0.00 1',
      'W-001 Ada Lovelace HR-7 2026-10-21 9.00 8.00 1.00 0.00 0.00 0.00 0.00 1',
      'W-001 Ada Lovelace HR-7 2026-10-22 9.00 8.00 1.00 0.00 0.00 0.00 0.00 1',
      'W-001 Ada Lovelace HR-7 2026-10-23 9.00 8.00 1.00 0.00 0.00 0.00 0.00 1',
      'W-001 Ada Lovelace HR-7 2026-10-24 6.00 0.00 6.00 0.00 0.00 0.00 0.00 1',
      // Pending hours are never split; the missing break is flagged all the same.
      'W-002 Grace Hopper — 2026-10-19 0.00 0.00 0.00 0.00 0.00 9.00 0.00 1 Missed break Pending review',
      'W-002 Grace Hopper — 2026-10-21 0.00 0.00 0.00 0.00 0.00 0.00 0.00 1 (1 open) Open session',
    ])
    const total = ui.page.getByRole('row', { name: /^Total/ })
    await total.getByText(/^Total of all/).waitFor()
    expect(await textOf(total)).toBe('Total of all 8 rows 55.00 40.00 14.00 1.00 1.00 9.00 0.00 8')
  })

  it("totals each operator's workweek per week, and downloads that CSV", async () => {
    await ui.page.getByLabel('Per', { exact: true }).selectOption('week')
    await Promise.all([
      ui.page.waitForResponse((response) => /\/v1\/timesheets\?.*group_by=week/.test(response.url())),
      ui.page.getByRole('button', { name: 'Show timesheet', exact: true }).click(),
    ])
    await ui.page.getByText('2 rows shown.').waitFor()
    expect(await ui.page.getByRole('columnheader', { name: 'Week of' }).count()).toBe(1)
    const rows = await Promise.all(
      (await ui.page.getByRole('row', { name: /W-00\d/ }).all()).map((row) => textOf(row)),
    )
    expect(rows).toEqual([
      'W-001 Ada Lovelace HR-7 2026-10-19 55.00 40.00 14.00 1.00 1.00 0.00 0.00 6 Missed break',
      'W-002 Grace Hopper — 2026-10-19 0.00 0.00 0.00 0.00 0.00 9.00 0.00 2 (1 open) Missed break Open session Pending review',
    ])
    const total = ui.page.getByRole('row', { name: /^Total/ })
    await total.getByText('Total of all 2 rows').waitFor()
    expect(await textOf(total)).toBe('Total of all 2 rows 55.00 40.00 14.00 1.00 1.00 9.00 0.00 8')
    await expectUsable('timesheets-week')

    const [download] = await Promise.all([
      ui.page.waitForEvent('download'),
      ui.page.getByRole('button', { name: 'Download CSV' }).click(),
    ])
    const expected = await api().get(`/v1/timesheets?from=${WEEK.from}&to=${WEEK.to}&group_by=week`, {
      accept: 'text/csv',
    })
    const csv = fs.readFileSync(await download.path(), 'utf8')
    expect(csv).toBe(expected.raw.body)
    expect(csv).toMatch(/regular_hours,overtime_hours,double_time_hours,auto_break_hours,pay_rule_id,flags/)
  })

  it("shows a session's breaks on its timeline: when, how long, paid or not, and how recorded", async () => {
    await ui.page.goto(`${ui.base}/console/sessions/${sessions['2026-10-20']}`)
    const timeline = ui.page.getByRole('list', { name: 'Check-in, breaks and check-out' })
    await timeline.waitFor()
    const entries = await Promise.all(
      (await timeline.getByRole('listitem').all()).map((entry) => textOf(entry)),
    )
    // Los Angeles time, as the session's location keeps it (PDT, whatever the browser's zone).
    const zone = '(PDT|GMT-7)'
    expect(entries).toEqual([
      expect.stringMatching(new RegExp(`^Check-in 20 Oct 2026, 08:00 ${zone}$`)),
      expect.stringMatching(
        new RegExp(
          `^Break paid 15 min 20 Oct 2026, 10:00 ${zone} to 20 Oct 2026, 10:15 ${zone}, entered through the API$`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `^Break unpaid 30 min 20 Oct 2026, 12:00 ${zone} to 20 Oct 2026, 12:30 ${zone}, entered through the API$`,
        ),
      ),
      expect.stringMatching(new RegExp(`^Check-out 20 Oct 2026, 17:30 ${zone}$`)),
    ])
    expect(await ui.page.locator('.fields').innerText()).toMatch(/Break\s+30 min\s+Hours\s+9\.00 h/)
    const history = ui.page.getByRole('region', { name: 'History' })
    await history.getByText(/^created /).waitFor()
    expect(await textOf(history)).toMatch(
      /Breaks — → 20 Oct 2026, 10:00 \S+ to 20 Oct 2026, 10:15 \S+ \(paid\); 20 Oct 2026, 12:00 \S+ to 20 Oct 2026, 12:30 \S+ Break \(min\)/,
    )
    // With break records, the break's minutes follow from them: the form does not offer to set them.
    expect(await ui.page.getByLabel('Break (minutes)').isDisabled()).toBe(true)
    // The timeline at the top of the window (the screenshot's subject), the fields above it.
    await ui.page.evaluate("document.getElementById('timeline-heading').scrollIntoView()")
    await expectUsable('session-breaks')

    await ui.page.goto(`${ui.base}/console/sessions/${sessions['2026-10-24']}`)
    const scanned = ui.page.getByRole('list', { name: 'Check-in, breaks and check-out' })
    await scanned.waitFor()
    expect(await textOf(scanned.getByRole('listitem').nth(1))).toMatch(
      /^Break unpaid 30 min 24 Oct 2026, 11:00 .* to 24 Oct 2026, 11:30 .*, recorded by break scans$/,
    )
  })

  it('ran without a script error or a CSP refusal', () => {
    // The refused rules (422) and the refused delete (409): the browser logs those answers.
    expect(ui.errors.filter((text) => !/status of (409|422)/.test(text))).toEqual([])
  })
})
