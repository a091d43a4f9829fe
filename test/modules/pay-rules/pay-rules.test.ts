import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAllPayRules } from '../../../src/modules/pay-rules/service.js'
import { dispatchEvents } from '../../../src/modules/webhooks/outbox-relay.js'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import {
  expectError,
  ISO_MS,
  type List,
  type Operator,
  type PayRule,
  uniq,
  type WebhookEndpoint,
} from '../../helpers/assertions.js'
import { eventsOf, freshAccount } from '../../helpers/fixtures.js'
import { created, ok } from '../../helpers/world.js'

/** The object of the spec, in its order. */
const PAY_RULE_KEYS = [
  'object',
  'id',
  'name',
  'is_default',
  'workweek_start',
  'rounding',
  'breaks',
  'overtime',
  'livemode',
  'created',
  'updated',
]

/** A rule with every term set, as the spec's example. */
const CALIFORNIA = {
  name: 'California hourly',
  workweek_start: 'sunday',
  rounding: { interval_minutes: 15, check_in: 'up', check_out: 'down' },
  breaks: [
    { after_minutes: 300, minutes: 30, action: 'deduct' },
    { after_minutes: 600, minutes: 60, action: 'flag' },
  ],
  overtime: { daily_minutes: 480, daily_double_minutes: 720, weekly_minutes: 2400, seventh_day: true },
} as const

describe('pay rules over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    // Webhook endpoints on the loopback discard port; no worker runs, so nothing is sent there.
    t = await buildTestApp({ webhookAllowPrivateUrls: true })
  })
  afterAll(() => t.close())

  const createRule = (api: ApiClient, body: Record<string, unknown>) =>
    created(api.post<PayRule>('/v1/pay-rules', body))

  /** The rules of the account and mode that are the default, read from the API. */
  async function defaults(api: ApiClient): Promise<string[]> {
    const list = await ok(api.get<List<PayRule>>('/v1/pay-rules?limit=200'))
    return list.data.filter((rule) => rule.is_default).map((rule) => rule.id)
  }

  describe('POST /v1/pay-rules', () => {
    it('fills every default: monday, no rounding, no breaks, no overtime, not the default', async () => {
      const { key, api } = await freshAccount(t)
      const before = Date.now()
      const rule = await createRule(api, { name: 'Plain' })
      expect(Object.keys(rule)).toEqual(PAY_RULE_KEYS)
      expect(rule).toEqual({
        object: 'pay_rule',
        id: rule.id,
        name: 'Plain',
        is_default: false,
        workweek_start: 'monday',
        rounding: { interval_minutes: 0, check_in: 'nearest', check_out: 'nearest' },
        breaks: [],
        overtime: {
          daily_minutes: null,
          daily_double_minutes: null,
          weekly_minutes: null,
          seventh_day: false,
        },
        livemode: false,
        created: rule.created,
        updated: rule.created,
      })
      expect(rule.id).toMatch(/^pr_[0-9A-Z]{26}$/)
      expect(rule.created).toMatch(ISO_MS)
      expect(Date.parse(rule.created)).toBeGreaterThanOrEqual(before)
      expect(await ok(api.get(`/v1/pay-rules/${rule.id}`))).toEqual(rule)

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['pay_rule.created'])
      expect(events[0]?.data.object).toEqual(rule)
      expect(events[0]?.data.previous_attributes).toBeUndefined()
    })

    it('keeps every term given, in the API order of the break fields', async () => {
      const { api } = await freshAccount(t)
      // Break fields in another order than the API's: the answer and the stored list use the API's.
      const rule = await createRule(api, {
        ...CALIFORNIA,
        breaks: CALIFORNIA.breaks.map(({ action, minutes, after_minutes }) => ({
          action,
          minutes,
          after_minutes,
        })),
      })
      expect(rule).toMatchObject({ ...CALIFORNIA, is_default: false })
      expect(rule.breaks.map((b) => Object.keys(b))).toEqual([
        ['after_minutes', 'minutes', 'action'],
        ['after_minutes', 'minutes', 'action'],
      ])
      expect(await ok(api.get(`/v1/pay-rules/${rule.id}`))).toEqual(rule)
    })

    it('sets livemode for a live key', async () => {
      const { api } = await freshAccount(t, 'live')
      expect((await createRule(api, { name: 'Live' })).livemode).toBe(true)
    })

    it('replays an idempotent create: one rule, one event', async () => {
      const { key, api } = await freshAccount(t)
      const headers = { 'idempotency-key': uniq('idem') }
      const first = await api.post<PayRule>('/v1/pay-rules', { name: 'Once' }, headers)
      const again = await api.post<PayRule>('/v1/pay-rules', { name: 'Once' }, headers)
      expect(first.status).toBe(201)
      expect(again.status).toBe(201)
      expect(again.body).toEqual(first.body)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect((await ok(api.get<List<PayRule>>('/v1/pay-rules'))).data).toEqual([first.body])
      expect((await eventsOf(t, key.account_id)).map((e) => e.type)).toEqual(['pay_rule.created'])
      const other = await api.post('/v1/pay-rules', { name: 'Other' }, headers)
      expectError(other, 409, 'conflict', 'idempotency_key_reuse')
    })
  })

  describe('validation', () => {
    const breaks = (entry: Record<string, unknown>) => [
      { after_minutes: 360, minutes: 30, action: 'deduct' },
      { after_minutes: 600, minutes: 30, action: 'deduct', ...entry },
    ]
    const CASES: Array<[string, Record<string, unknown>, string, string]> = [
      // Bodies go over the wire as JSON: `name: undefined` leaves the name out.
      ['a missing name', { name: undefined }, 'missing_param', 'name'],
      ['an empty name', { name: '' }, 'invalid_value', 'name'],
      ['a name of 201 characters', { name: 'n'.repeat(201) }, 'invalid_value', 'name'],
      ['an unknown weekday', { workweek_start: 'funday' }, 'invalid_value', 'workweek_start'],
      ['a capitalised weekday', { workweek_start: 'Monday' }, 'invalid_value', 'workweek_start'],
      [
        'a rounding step not in the list',
        { rounding: { interval_minutes: 7 } },
        'invalid_value',
        'rounding.interval_minutes',
      ],
      [
        'a rounding step of 90',
        { rounding: { interval_minutes: 90 } },
        'invalid_value',
        'rounding.interval_minutes',
      ],
      [
        'a rounding step as text',
        { rounding: { interval_minutes: '15' } },
        'invalid_type',
        'rounding.interval_minutes',
      ],
      ['an unknown check-in mode', { rounding: { check_in: 'ceil' } }, 'invalid_value', 'rounding.check_in'],
      [
        'an unknown check-out mode',
        { rounding: { check_out: 'floor' } },
        'invalid_value',
        'rounding.check_out',
      ],
      ['an unknown rounding field', { rounding: { step: 15 } }, 'unknown_param', 'rounding.step'],
      [
        'six break rules',
        { breaks: [...breaks({}), ...breaks({}), ...breaks({})] },
        'invalid_value',
        'breaks',
      ],
      [
        'a break after 0 minutes',
        { breaks: breaks({ after_minutes: 0 }) },
        'invalid_value',
        'breaks[1].after_minutes',
      ],
      [
        'a break after 1441 minutes',
        { breaks: breaks({ after_minutes: 1441 }) },
        'invalid_value',
        'breaks[1].after_minutes',
      ],
      ['a break of 0 minutes', { breaks: breaks({ minutes: 0 }) }, 'invalid_value', 'breaks[1].minutes'],
      ['a break of 241 minutes', { breaks: breaks({ minutes: 241 }) }, 'invalid_value', 'breaks[1].minutes'],
      ['a break of 30.5 minutes', { breaks: breaks({ minutes: 30.5 }) }, 'invalid_type', 'breaks[1].minutes'],
      ['an unknown break action', { breaks: breaks({ action: 'pay' }) }, 'invalid_value', 'breaks[1].action'],
      [
        'a break without its action',
        { breaks: [{ after_minutes: 360, minutes: 30 }] },
        'missing_param',
        'breaks[0].action',
      ],
      [
        'a daily threshold of 0',
        { overtime: { daily_minutes: 0 } },
        'invalid_value',
        'overtime.daily_minutes',
      ],
      [
        'a daily threshold as text',
        { overtime: { daily_minutes: '480' } },
        'invalid_type',
        'overtime.daily_minutes',
      ],
      [
        'a weekly threshold past a week',
        { overtime: { weekly_minutes: 10081 } },
        'invalid_value',
        'overtime.weekly_minutes',
      ],
      [
        'double time without a daily threshold',
        { overtime: { daily_double_minutes: 720 } },
        'invalid_value',
        'overtime.daily_double_minutes',
      ],
      [
        'double time at the daily threshold',
        { overtime: { daily_minutes: 480, daily_double_minutes: 480 } },
        'invalid_value',
        'overtime.daily_double_minutes',
      ],
      [
        'double time below the daily threshold',
        { overtime: { daily_minutes: 480, daily_double_minutes: 400 } },
        'invalid_value',
        'overtime.daily_double_minutes',
      ],
      [
        'the seventh-day rule without a daily threshold',
        { overtime: { weekly_minutes: 2400, seventh_day: true } },
        'invalid_value',
        'overtime.seventh_day',
      ],
      [
        'a seventh-day rule as text',
        { overtime: { seventh_day: 'yes' } },
        'invalid_type',
        'overtime.seventh_day',
      ],
      ['is_default as text', { is_default: 'true' }, 'invalid_type', 'is_default'],
      ['an unknown field', { colour: 'red' }, 'unknown_param', 'colour'],
    ]

    it.each(CASES)(
      'refuses %s on create (422 %s, param %s) and writes nothing',
      async (_, body, code, param) => {
        const { key, api } = await freshAccount(t)
        const res = await api.post('/v1/pay-rules', { name: 'Rule', ...body })
        expectError(res, 422, 'validation_error', code, param)
        expect((await ok(api.get<List<PayRule>>('/v1/pay-rules'))).data).toEqual([])
        expect(await eventsOf(t, key.account_id)).toEqual([])
      },
    )

    // A PATCH need not name the rule: every other case holds for it as well.
    it.each(CASES.filter(([name]) => name !== 'a missing name'))(
      'refuses %s on PATCH (422 %s, param %s) and changes nothing',
      async (_, body, code, param) => {
        const { key, api } = await freshAccount(t)
        const rule = await createRule(api, { name: 'Rule' })
        expectError(await api.patch(`/v1/pay-rules/${rule.id}`, body), 422, 'validation_error', code, param)
        expect(await ok(api.get(`/v1/pay-rules/${rule.id}`))).toEqual(rule)
        expect((await eventsOf(t, key.account_id)).map((e) => e.type)).toEqual(['pay_rule.created'])
      },
    )

    it('checks the overtime rules on the terms a PATCH leaves, not only on those it sends', async () => {
      const { api } = await freshAccount(t)
      const rule = await createRule(api, CALIFORNIA)
      for (const overtime of [{ daily_minutes: null }, { daily_minutes: 720 }, { daily_minutes: 800 }]) {
        expectError(
          await api.patch(`/v1/pay-rules/${rule.id}`, { overtime }),
          422,
          'validation_error',
          'invalid_value',
          'overtime.daily_double_minutes',
        )
      }
      expectError(
        await api.patch(`/v1/pay-rules/${rule.id}`, {
          overtime: { daily_minutes: null, daily_double_minutes: null },
        }),
        422,
        'validation_error',
        'invalid_value',
        'overtime.seventh_day',
      )
      // Turned off together, the three are consistent.
      const off = await ok(
        api.patch<PayRule>(`/v1/pay-rules/${rule.id}`, {
          overtime: { daily_minutes: null, daily_double_minutes: null, seventh_day: false },
        }),
      )
      expect(off.overtime).toEqual({
        daily_minutes: null,
        daily_double_minutes: null,
        weekly_minutes: 2400,
        seventh_day: false,
      })
    })
  })

  describe('PATCH /v1/pay-rules/{id}', () => {
    it('changes the fields of rounding and overtime it names, replaces breaks, and emits pay_rule.updated', async () => {
      const { key, api } = await freshAccount(t)
      const rule = await createRule(api, CALIFORNIA)
      const res = await ok(
        api.patch<PayRule>(`/v1/pay-rules/${rule.id}`, {
          name: 'California, amended',
          rounding: { check_out: 'nearest' },
          overtime: { weekly_minutes: 2280 },
          breaks: [{ after_minutes: 360, minutes: 30, action: 'flag' }],
        }),
      )
      expect(res).toEqual({
        ...rule,
        name: 'California, amended',
        rounding: { ...rule.rounding, check_out: 'nearest' },
        overtime: { ...rule.overtime, weekly_minutes: 2280 },
        breaks: [{ after_minutes: 360, minutes: 30, action: 'flag' }],
        updated: res.updated,
      })
      expect(await ok(api.get(`/v1/pay-rules/${rule.id}`))).toEqual(res)

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['pay_rule.created', 'pay_rule.updated'])
      expect(events[1]?.data.object).toEqual(res)
      expect(events[1]?.data.previous_attributes).toEqual({
        name: rule.name,
        rounding: rule.rounding,
        overtime: rule.overtime,
        breaks: rule.breaks,
      })
    })

    it('writes and emits nothing for a PATCH that changes nothing (break fields in any order)', async () => {
      const { key, api } = await freshAccount(t)
      const rule = await createRule(api, CALIFORNIA)
      for (const body of [
        {},
        { name: CALIFORNIA.name, rounding: { interval_minutes: 15 } },
        {
          breaks: CALIFORNIA.breaks.map(({ action, minutes, after_minutes }) => ({
            minutes,
            action,
            after_minutes,
          })),
        },
        { overtime: { seventh_day: true }, workweek_start: 'sunday', is_default: false },
      ]) {
        expect(await ok(api.patch(`/v1/pay-rules/${rule.id}`, body))).toEqual(rule)
      }
      expect((await eventsOf(t, key.account_id)).map((e) => e.type)).toEqual(['pay_rule.created'])
    })

    it('answers 404 for an unknown id', async () => {
      const { api } = await freshAccount(t)
      expectError(
        await api.patch('/v1/pay-rules/pr_01ZZZZZZZZZZZZZZZZZZZZZZZZ', { name: 'x' }),
        404,
        'not_found',
      )
    })
  })

  describe('the default rule', () => {
    it('is one per account and mode: a new default unsets the previous one, with its event', async () => {
      const { key, api } = await freshAccount(t)
      const first = await createRule(api, { name: 'First', is_default: true })
      expect(first.is_default).toBe(true)
      const second = await createRule(api, { name: 'Second', is_default: true })
      expect(second.is_default).toBe(true)
      expect(await defaults(api)).toEqual([second.id])
      const firstNow = await ok(api.get<PayRule>(`/v1/pay-rules/${first.id}`))
      expect(firstNow).toEqual({ ...first, is_default: false, updated: firstNow.updated })

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => [e.type, e.data.object.id])).toEqual([
        ['pay_rule.created', first.id],
        ['pay_rule.updated', first.id],
        ['pay_rule.created', second.id],
      ])
      expect(events[1]?.data.object).toEqual(firstNow)
      expect(events[1]?.data.previous_attributes).toEqual({ is_default: true })

      // PATCH makes the first the default again; the second stops being it.
      const back = await ok(api.patch<PayRule>(`/v1/pay-rules/${first.id}`, { is_default: true }))
      expect(back.is_default).toBe(true)
      expect(await defaults(api)).toEqual([first.id])
      const later = await eventsOf(t, key.account_id, undefined, events.at(-1)?.id)
      expect(later.map((e) => [e.type, e.data.object.id, e.data.previous_attributes])).toEqual([
        ['pay_rule.updated', second.id, { is_default: true }],
        ['pay_rule.updated', first.id, { is_default: false }],
      ])

      // Making the default the default again changes nothing; false leaves the mode without one.
      expect(await ok(api.patch(`/v1/pay-rules/${first.id}`, { is_default: true }))).toEqual(back)
      await ok(api.patch(`/v1/pay-rules/${first.id}`, { is_default: false }))
      expect(await defaults(api)).toEqual([])
    })

    it('stays one under concurrent creates and PATCHes that each make a rule the default', async () => {
      const { key, api } = await freshAccount(t)
      const plain = await Promise.all([1, 2, 3].map((n) => createRule(api, { name: `Plain ${n}` })))
      const answers = await Promise.all([
        ...[1, 2, 3, 4].map((n) =>
          api.post<PayRule>('/v1/pay-rules', { name: `Default ${n}`, is_default: true }),
        ),
        ...plain.map((rule) => api.patch<PayRule>(`/v1/pay-rules/${rule.id}`, { is_default: true })),
      ])
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 200, 200, 200])
      const rows = await t.db
        .selectFrom('pay_rules')
        .select('id')
        .where('account_id', '=', key.account_id)
        .where('is_default', '=', 1)
        .execute()
      expect(rows).toHaveLength(1)
      expect(await defaults(api)).toEqual(rows.map((r) => r.id))
    })

    it('is per mode: a live default leaves the test default alone', async () => {
      const account = uniq('acct')
      const test = t.client((await t.key({ account, mode: 'test' })).secret)
      const live = t.client((await t.key({ account, mode: 'live' })).secret)
      const testDefault = await createRule(test, { name: 'Test', is_default: true })
      const liveDefault = await createRule(live, { name: 'Live', is_default: true })
      expect(await defaults(test)).toEqual([testDefault.id])
      expect(await defaults(live)).toEqual([liveDefault.id])
    })
  })

  describe('DELETE /v1/pay-rules/{id}', () => {
    it('refuses a rule an operator has (409 pay_rule_in_use), then deletes it once unassigned', async () => {
      const { key, api } = await freshAccount(t)
      const rule = await createRule(api, { name: 'Used' })
      const operator = await created(
        api.post<Operator>('/v1/operators', { ident: uniq('W'), pay_rule_id: rule.id }),
      )
      expectError(await api.delete(`/v1/pay-rules/${rule.id}`), 409, 'conflict', 'pay_rule_in_use')
      // A deactivated operator keeps its rule (reactivated, it would need it): still in use.
      await ok(api.delete(`/v1/operators/${operator.id}`))
      expectError(await api.delete(`/v1/pay-rules/${rule.id}`), 409, 'conflict', 'pay_rule_in_use')
      expect(await ok(api.get(`/v1/pay-rules/${rule.id}`))).toEqual(rule)

      await ok(api.patch(`/v1/operators/${operator.id}`, { pay_rule_id: null }))
      const res = await ok(api.delete(`/v1/pay-rules/${rule.id}`))
      expect(res).toEqual({ object: 'pay_rule', id: rule.id, deleted: true })
      expectError(await api.get(`/v1/pay-rules/${rule.id}`), 404, 'not_found')
      expectError(await api.delete(`/v1/pay-rules/${rule.id}`), 404, 'not_found')

      const events = (await eventsOf(t, key.account_id)).filter((e) => e.type.startsWith('pay_rule.'))
      expect(events.map((e) => e.type)).toEqual(['pay_rule.created', 'pay_rule.deleted'])
      expect(events[1]?.data.object).toEqual(rule)
    })

    it('never leaves an operator with a deleted rule when a delete and an assignment race', async () => {
      const { key, api } = await freshAccount(t)
      const rules = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => createRule(api, { name: `Race ${n}` })))
      const answers = await Promise.all(
        rules.map((rule) =>
          Promise.all([
            api.delete(`/v1/pay-rules/${rule.id}`),
            api.post<Operator>('/v1/operators', { ident: uniq('W'), pay_rule_id: rule.id }),
          ]),
        ),
      )
      for (const [removed, assigned] of answers) {
        // Either the delete came first (the assignment finds no rule) or the assignment did.
        if (removed.status === 200) {
          expectError(assigned, 422, 'validation_error', 'unknown_pay_rule', 'pay_rule_id')
        } else {
          expectError(removed, 409, 'conflict', 'pay_rule_in_use')
          expect(assigned.status).toBe(201)
        }
      }
      const dangling = await t.db
        .selectFrom('operators')
        .leftJoin('pay_rules', 'pay_rules.id', 'operators.pay_rule_id')
        .select('operators.id')
        .where('operators.account_id', '=', key.account_id)
        .where('pay_rules.id', 'is', null)
        .execute()
      expect(dangling).toEqual([])
    })

    it("is not blocked by another account's or mode's operators (they cannot name the rule)", async () => {
      const { api, name } = await freshAccount(t)
      const rule = await createRule(api, { name: 'Mine' })
      const live = t.client((await t.key({ account: name, mode: 'live' })).secret)
      expectError(
        await live.post('/v1/operators', { ident: uniq('W'), pay_rule_id: rule.id }),
        422,
        'validation_error',
        'cross_mode_reference',
        'pay_rule_id',
      )
      expect(await ok(api.delete(`/v1/pay-rules/${rule.id}`))).toMatchObject({ deleted: true })
    })
  })

  describe('GET /v1/pay-rules', () => {
    it('lists newest first, pages with a cursor, and shows only the caller account and mode', async () => {
      const { api, name } = await freshAccount(t)
      const a = await createRule(api, { name: 'A' })
      const b = await createRule(api, { name: 'B' })
      const c = await createRule(api, { name: 'C' })
      const live = t.client((await t.key({ account: name, mode: 'live' })).secret)
      const liveRule = await createRule(live, { name: 'Live' })
      await createRule((await freshAccount(t)).api, { name: 'Stranger' })

      const first = await ok(api.get<List<PayRule>>('/v1/pay-rules?limit=2'))
      expect(first.data).toEqual([c, b])
      expect(first.has_more).toBe(true)
      const second = await ok(
        api.get<List<PayRule>>(`/v1/pay-rules?limit=2&cursor=${encodeURIComponent(first.next_cursor ?? '')}`),
      )
      expect(second).toEqual({ object: 'list', data: [a], has_more: false, next_cursor: null })
      expect((await ok(live.get<List<PayRule>>('/v1/pay-rules'))).data).toEqual([liveRule])

      expectError(await live.get(`/v1/pay-rules/${a.id}`), 404, 'not_found')
      expectError(await live.patch(`/v1/pay-rules/${a.id}`, { name: 'x' }), 404, 'not_found')
      expectError(await live.delete(`/v1/pay-rules/${a.id}`), 404, 'not_found')
      expect(await ok(api.get(`/v1/pay-rules/${a.id}`))).toEqual(a)
    })

    it('listAllPayRules gives every rule of the account and mode, for the timesheet', async () => {
      const { key, api, name } = await freshAccount(t)
      const rules = []
      for (let n = 0; n < 3; n++) rules.push(await createRule(api, { ...CALIFORNIA, name: `R${n}` }))
      await createRule(t.client((await t.key({ account: name, mode: 'live' })).secret), { name: 'Live' })
      const all = await listAllPayRules(t.db, {
        principalId: key.id,
        locationIds: null,
        accountId: key.account_id,
        livemode: false,
      })
      expect(all).toEqual(rules)
    })
  })

  describe('scopes', () => {
    it('needs timesheets:write to create, change and delete, and timesheets:read to read', async () => {
      const account = uniq('acct')
      const owner = t.client((await t.key({ account })).secret)
      const rule = await createRule(owner, { name: 'Scoped' })
      const reader = t.client((await t.key({ account, scopes: ['timesheets:read'] })).secret)
      const stranger = t.client(
        (await t.key({ account, scopes: ['operators:write', 'sessions:write'] })).secret,
      )

      for (const res of [
        await reader.post('/v1/pay-rules', { name: 'No' }),
        await reader.patch(`/v1/pay-rules/${rule.id}`, { name: 'No' }),
        await reader.delete(`/v1/pay-rules/${rule.id}`),
        await stranger.get('/v1/pay-rules'),
        await stranger.get(`/v1/pay-rules/${rule.id}`),
      ]) {
        expectError(res, 403, 'insufficient_scope', 'missing_scope')
      }
      expect(await ok(reader.get(`/v1/pay-rules/${rule.id}`))).toEqual(rule)
      expect((await ok(reader.get<List<PayRule>>('/v1/pay-rules'))).data).toEqual([rule])
    })
  })

  describe('webhooks', () => {
    it('pay_rule.* and * subscribe to the three events; other resources do not', async () => {
      const { api } = await freshAccount(t)
      const endpoint = async (enabled_events: string[]) =>
        created(
          api.post<WebhookEndpoint>('/v1/webhook-endpoints', {
            url: 'http://127.0.0.1:9/hook',
            enabled_events,
          }),
        )
      const wildcard = await endpoint(['pay_rule.*'])
      const everything = await endpoint(['*'])
      const exact = await endpoint(['pay_rule.deleted'])
      const others = await endpoint(['operator.*', 'pay_period.*'])

      const rule = await createRule(api, { name: 'Hooked' })
      await ok(api.patch(`/v1/pay-rules/${rule.id}`, { name: 'Hooked again' }))
      await ok(api.delete(`/v1/pay-rules/${rule.id}`))
      while ((await dispatchEvents(t.db)) > 0) {}

      const typesFor = async (endpointId: string) =>
        (
          await t.db
            .selectFrom('webhook_deliveries')
            .select('event_type')
            .where('endpoint_id', '=', endpointId)
            .orderBy('event_id')
            .execute()
        ).map((row) => row.event_type)
      const all = ['pay_rule.created', 'pay_rule.updated', 'pay_rule.deleted']
      expect(await typesFor(wildcard.id)).toEqual(all)
      expect(await typesFor(everything.id)).toEqual(all)
      expect(await typesFor(exact.id)).toEqual(['pay_rule.deleted'])
      expect(await typesFor(others.id)).toEqual([])
    })
  })
})
