import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiClient, buildTestApp, type TestApp } from '../../helpers/app.js'
import {
  type EventEnvelope,
  expectError,
  ISO_MS,
  type List,
  type Operator,
  type PayRule,
  uniq,
} from '../../helpers/assertions.js'
import { eventsOf, freshAccount } from '../../helpers/fixtures.js'
import { created, ok } from '../../helpers/world.js'

const OPERATOR_KEYS = [
  'created',
  'employee_id',
  'end_date',
  'has_pin',
  'home_location_id',
  'id',
  'ident',
  'is_active',
  'livemode',
  'name',
  'object',
  'pay_rule_id',
  'start_date',
  'updated',
]

function expectOperatorShape(op: Operator, livemode = false) {
  expect(Object.keys(op).sort()).toEqual(OPERATOR_KEYS)
  expect(op.object).toBe('operator')
  expect(op.id).toMatch(/^op_[0-9A-Z]{26}$/)
  expect(op.livemode).toBe(livemode)
  expect(op.created).toMatch(ISO_MS)
  expect(op.updated).toMatch(ISO_MS)
  expect(Date.parse(op.updated)).toBeGreaterThanOrEqual(Date.parse(op.created))
}

describe('operators over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  function expectEnvelope(event: EventEnvelope, type: string, object: Operator) {
    expect(Object.keys(event).sort()).toEqual([
      'api_version',
      'created',
      'data',
      'id',
      'livemode',
      'object',
      'type',
    ])
    expect(event.object).toBe('event')
    expect(event.id).toMatch(/^evt_[0-9A-Z]{26}$/)
    expect(event.type).toBe(type)
    expect(event.api_version).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(Number.isNaN(Date.parse(event.api_version))).toBe(false)
    expect(event.livemode).toBe(object.livemode)
    expect(event.created).toMatch(ISO_MS)
    expect(event.data.object).toEqual(object)
  }

  async function create(api: ApiClient, body: Record<string, unknown>): Promise<Operator> {
    const res = await api.post<Operator>('/v1/operators', body)
    expect(res.status).toBe(201)
    return res.body
  }

  describe('POST /v1/operators', () => {
    it('creates an active operator with every field and emits operator.created', async () => {
      const { key, api } = await freshAccount(t)
      const ident = uniq('W')
      const before = Date.now()
      const res = await api.post<Operator>('/v1/operators', {
        ident,
        name: 'Ada Lovelace',
        employee_id: 'HR-1',
      })
      const after = Date.now()
      expect(res.status).toBe(201)
      const op = res.body
      expectOperatorShape(op)
      expect(op).toMatchObject({ ident, name: 'Ada Lovelace', employee_id: 'HR-1', is_active: true })
      expect(op.created).toBe(op.updated)
      expect(Date.parse(op.created)).toBeGreaterThanOrEqual(before)
      expect(Date.parse(op.created)).toBeLessThanOrEqual(after)
      expect(res.headers['idempotent-replayed']).toBeUndefined()

      const events = await eventsOf(t, key.account_id)
      expect(events).toHaveLength(1)
      const [created] = events
      if (!created) throw new Error('no event')
      expectEnvelope(created, 'operator.created', op)
      expect(created.data.previous_attributes).toBeUndefined()
    })

    it('defaults name, employee_id and pay_rule_id to null', async () => {
      const { api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W') })
      expectOperatorShape(op)
      expect(op.name).toBeNull()
      expect(op.employee_id).toBeNull()
      expect(op.pay_rule_id).toBeNull()
      expect(op.is_active).toBe(true)
    })

    it('sets livemode true for a live key', async () => {
      const { key, api } = await freshAccount(t, 'live')
      const op = await create(api, { ident: uniq('W') })
      expectOperatorShape(op, true)
      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['operator.created'])
      expect(events[0]?.livemode).toBe(true)
    })

    it('refuses a missing ident with 422 missing_param and emits nothing', async () => {
      const { key, api } = await freshAccount(t)
      const res = await api.post('/v1/operators', { name: 'No Ident' })
      expectError(res, 422, 'validation_error', 'missing_param', 'ident')
      expect(await eventsOf(t, key.account_id)).toEqual([])
    })

    it('refuses a duplicate ident with 409 duplicate_ident, param ident, and no event', async () => {
      const { key, api } = await freshAccount(t)
      const ident = uniq('W')
      const first = await create(api, { ident })
      const res = await api.post('/v1/operators', { ident, name: 'Other' })
      expectError(res, 409, 'conflict', 'duplicate_ident', 'ident')

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['operator.created'])
      expect(events[0]?.data.object).toEqual(first)
      const rows = await t.db
        .selectFrom('operators')
        .select('id')
        .where('account_id', '=', key.account_id)
        .execute()
      expect(rows).toEqual([{ id: first.id }])
    })

    it('treats idents as unique per account and per mode, not globally', async () => {
      const ident = uniq('W')
      const a = await freshAccount(t)
      const b = await freshAccount(t)
      const aLive = t.client((await t.key({ account: a.name, mode: 'live' })).secret)
      const one = await create(a.api, { ident })
      const two = await create(b.api, { ident })
      const three = await create(aLive, { ident })
      expect(new Set([one.id, two.id, three.id]).size).toBe(3)
      expect(three.livemode).toBe(true)
    })

    it('gives exactly one 201 and nine 409 duplicate_ident to 10 concurrent creates of one ident', async () => {
      const { key, api } = await freshAccount(t)
      const ident = uniq('RACE')
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) => api.post<Operator>('/v1/operators', { ident, name: `n${i}` })),
      )
      const statuses = responses.map((r) => r.status)
      expect(statuses.filter((s) => s >= 500)).toEqual([])
      expect(statuses.filter((s) => s === 201)).toHaveLength(1)
      for (const res of responses.filter((r) => r.status !== 201)) {
        expectError(res, 409, 'conflict', 'duplicate_ident', 'ident')
      }
      const winner = responses.find((r) => r.status === 201)?.body
      const rows = await t.db
        .selectFrom('operators')
        .select(['id', 'name'])
        .where('account_id', '=', key.account_id)
        .where('ident', '=', ident)
        .execute()
      expect(rows).toEqual([{ id: winner?.id, name: winner?.name }])
      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['operator.created'])
      expect(events[0]?.data.object).toEqual(winner)
    })
  })

  describe('GET /v1/operators/{id}', () => {
    it('returns the operator exactly as created', async () => {
      const { api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W'), name: 'Grace', employee_id: 'E-9' })
      const res = await api.get<Operator>(`/v1/operators/${op.id}`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual(op)
    })

    it('answers 404 not_found for an unknown id', async () => {
      const { api } = await freshAccount(t)
      const res = await api.get('/v1/operators/op_01ZZZZZZZZZZZZZZZZZZZZZZZZ')
      expectError(res, 404, 'not_found')
    })

    it("answers 404 for another account's operator and for the other mode's", async () => {
      const owner = await freshAccount(t)
      const op = await create(owner.api, { ident: uniq('W') })
      const stranger = await freshAccount(t)
      expectError(await stranger.api.get(`/v1/operators/${op.id}`), 404, 'not_found')
      const live = t.client((await t.key({ account: owner.name, mode: 'live' })).secret)
      expectError(await live.get(`/v1/operators/${op.id}`), 404, 'not_found')
      expectError(await live.patch(`/v1/operators/${op.id}`, { name: 'x' }), 404, 'not_found')
      expectError(await live.delete(`/v1/operators/${op.id}`), 404, 'not_found')
      // Nothing changed for the owner.
      expect((await owner.api.get<Operator>(`/v1/operators/${op.id}`)).body).toEqual(op)
    })
  })

  describe('PATCH /v1/operators/{id}', () => {
    it('renames and emits operator.updated with previous_attributes', async () => {
      const { key, api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W'), name: 'Old', employee_id: 'E-1' })
      const res = await api.patch<Operator>(`/v1/operators/${op.id}`, { name: 'New' })
      expect(res.status).toBe(200)
      expectOperatorShape(res.body)
      expect(res.body).toMatchObject({ ...op, name: 'New', updated: res.body.updated })
      expect(Date.parse(res.body.updated)).toBeGreaterThanOrEqual(Date.parse(op.updated))
      expect((await api.get(`/v1/operators/${op.id}`)).body).toEqual(res.body)

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['operator.created', 'operator.updated'])
      const updated = events[1]
      if (!updated) throw new Error('no event')
      expectEnvelope(updated, 'operator.updated', res.body)
      expect(updated.data.previous_attributes).toEqual({ name: 'Old' })
    })

    it('relinks employee_id, then sets it and the name to null', async () => {
      const { key, api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W'), name: 'N', employee_id: 'E-1' })
      const relinked = await api.patch<Operator>(`/v1/operators/${op.id}`, { employee_id: 'E-2' })
      expect(relinked.status).toBe(200)
      expect(relinked.body.employee_id).toBe('E-2')
      expect(relinked.body.name).toBe('N')

      const cleared = await api.patch<Operator>(`/v1/operators/${op.id}`, { employee_id: null, name: null })
      expect(cleared.status).toBe(200)
      expect(cleared.body.employee_id).toBeNull()
      expect(cleared.body.name).toBeNull()
      expect((await api.get(`/v1/operators/${op.id}`)).body).toEqual(cleared.body)

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['operator.created', 'operator.updated', 'operator.updated'])
      const [, first, second] = events
      if (!first || !second) throw new Error('missing events')
      expectEnvelope(first, 'operator.updated', relinked.body)
      expect(first.data.previous_attributes).toEqual({ employee_id: 'E-1' })
      expectEnvelope(second, 'operator.updated', cleared.body)
      expect(second.data.previous_attributes).toEqual({ employee_id: 'E-2', name: 'N' })
    })

    it('deactivates with is_active false (operator.deactivated) and reactivates with true (operator.updated)', async () => {
      const { key, api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W') })
      const off = await api.patch<Operator>(`/v1/operators/${op.id}`, { is_active: false })
      expect(off.status).toBe(200)
      expect(off.body.is_active).toBe(false)
      const on = await api.patch<Operator>(`/v1/operators/${op.id}`, { is_active: true })
      expect(on.status).toBe(200)
      expect(on.body.is_active).toBe(true)
      expect((await api.get(`/v1/operators/${op.id}`)).body).toEqual(on.body)

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual([
        'operator.created',
        'operator.deactivated',
        'operator.updated',
      ])
      const [, deactivated, reactivated] = events
      if (!deactivated || !reactivated) throw new Error('missing events')
      expectEnvelope(deactivated, 'operator.deactivated', off.body)
      expect(deactivated.data.previous_attributes).toEqual({ is_active: true })
      expectEnvelope(reactivated, 'operator.updated', on.body)
      expect(reactivated.data.previous_attributes).toEqual({ is_active: false })
    })

    it('emits both operator.updated and operator.deactivated for a rename that also deactivates', async () => {
      const { key, api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W'), name: 'A' })
      const res = await api.patch<Operator>(`/v1/operators/${op.id}`, { name: 'B', is_active: false })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ name: 'B', is_active: false })
      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type).sort()).toEqual([
        'operator.created',
        'operator.deactivated',
        'operator.updated',
      ])
      for (const event of events.slice(1)) {
        expectEnvelope(event, event.type, res.body)
        expect(event.data.previous_attributes).toEqual({ name: 'A', is_active: true })
      }
    })

    it('changes nothing and emits nothing for a no-op PATCH', async () => {
      const { key, api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W'), name: 'Same', employee_id: 'E' })
      for (const body of [{}, { name: 'Same' }, { employee_id: 'E', is_active: true }]) {
        const res = await api.patch<Operator>(`/v1/operators/${op.id}`, body)
        expect(res.status).toBe(200)
        expect(res.body).toEqual(op)
      }
      expect((await api.get(`/v1/operators/${op.id}`)).body).toEqual(op)
      expect((await eventsOf(t, key.account_id)).map((e) => e.type)).toEqual(['operator.created'])
    })

    it('refuses ident (not patchable) with 422 unknown_param and changes nothing', async () => {
      const { key, api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W'), name: 'Keep' })
      const res = await api.patch(`/v1/operators/${op.id}`, { ident: 'other', name: 'Changed' })
      expectError(res, 422, 'validation_error', 'unknown_param', 'ident')
      expect((await api.get(`/v1/operators/${op.id}`)).body).toEqual(op)
      expect((await eventsOf(t, key.account_id)).map((e) => e.type)).toEqual(['operator.created'])
    })

    it('refuses a wrongly typed field with 422 invalid_type', async () => {
      const { api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W') })
      expectError(
        await api.patch(`/v1/operators/${op.id}`, { is_active: 'false' }),
        422,
        'validation_error',
        'invalid_type',
        'is_active',
      )
      expectError(
        await api.patch(`/v1/operators/${op.id}`, { name: 5 }),
        422,
        'validation_error',
        'invalid_type',
        'name',
      )
      expect((await api.get(`/v1/operators/${op.id}`)).body).toEqual(op)
    })

    it('answers 404 for an unknown id', async () => {
      const { key, api } = await freshAccount(t)
      const res = await api.patch('/v1/operators/op_01ZZZZZZZZZZZZZZZZZZZZZZZZ', { name: 'x' })
      expectError(res, 404, 'not_found')
      expect(await eventsOf(t, key.account_id)).toEqual([])
    })
  })

  describe('DELETE /v1/operators/{id}', () => {
    it('soft-deletes: is_active false, still retrievable, operator.deactivated once', async () => {
      const { key, api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W'), name: 'Gone', employee_id: 'E-5' })
      const res = await api.delete<Operator>(`/v1/operators/${op.id}`)
      expect(res.status).toBe(200)
      expectOperatorShape(res.body)
      expect(res.body).toEqual({ ...op, is_active: false, updated: res.body.updated })

      const got = await api.get<Operator>(`/v1/operators/${op.id}`)
      expect(got.status).toBe(200)
      expect(got.body).toEqual(res.body)
      const row = await t.db.selectFrom('operators').selectAll().where('id', '=', op.id).executeTakeFirst()
      expect(row?.is_active).toBe(0)

      const again = await api.delete<Operator>(`/v1/operators/${op.id}`)
      expect(again.status).toBe(200)
      expect(again.body).toEqual(res.body)

      const events = await eventsOf(t, key.account_id)
      expect(events.map((e) => e.type)).toEqual(['operator.created', 'operator.deactivated'])
      const deactivated = events[1]
      if (!deactivated) throw new Error('no event')
      expectEnvelope(deactivated, 'operator.deactivated', res.body)
      expect(deactivated.data.previous_attributes).toEqual({ is_active: true })
    })

    it('can be undone by PATCH is_active true', async () => {
      const { key, api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W') })
      await api.delete(`/v1/operators/${op.id}`)
      const res = await api.patch<Operator>(`/v1/operators/${op.id}`, { is_active: true })
      expect(res.status).toBe(200)
      expect(res.body.is_active).toBe(true)
      expect((await eventsOf(t, key.account_id)).map((e) => e.type)).toEqual([
        'operator.created',
        'operator.deactivated',
        'operator.updated',
      ])
    })

    it('answers 404 for an unknown id', async () => {
      const { api } = await freshAccount(t)
      expectError(await api.delete('/v1/operators/op_01ZZZZZZZZZZZZZZZZZZZZZZZZ'), 404, 'not_found')
    })

    it('keeps the ident taken: a new operator with the ident of a deactivated one is a duplicate', async () => {
      const { api } = await freshAccount(t)
      const ident = uniq('W')
      const op = await create(api, { ident })
      await api.delete(`/v1/operators/${op.id}`)
      expectError(await api.post('/v1/operators', { ident }), 409, 'conflict', 'duplicate_ident', 'ident')
    })
  })

  describe('GET /v1/operators', () => {
    it('lists newest first and filters by is_active, ident and employee_id', async () => {
      const { api } = await freshAccount(t)
      const a = await create(api, { ident: uniq('A'), employee_id: 'E-1' })
      const b = await create(api, { ident: uniq('B'), employee_id: 'E-2' })
      const c = await create(api, { ident: uniq('C'), employee_id: 'E-1' })
      const d = await create(api, { ident: uniq('D') })
      const deletedB = (await api.delete<Operator>(`/v1/operators/${b.id}`)).body

      const all = await api.get<List<Operator>>('/v1/operators')
      expect(all.status).toBe(200)
      expect(all.body).toEqual({
        object: 'list',
        data: [d, c, deletedB, a],
        has_more: false,
        next_cursor: null,
      })

      const ids = async (query: string) => {
        const res = await api.get<List<Operator>>(`/v1/operators?${query}`)
        expect(res.status).toBe(200)
        return res.body.data.map((o) => o.id)
      }
      expect(await ids('is_active=true')).toEqual([d.id, c.id, a.id])
      expect(await ids('is_active=false')).toEqual([b.id])
      expect(await ids(`ident=${encodeURIComponent(c.ident)}`)).toEqual([c.id])
      expect(await ids('ident=nobody')).toEqual([])
      expect(await ids('employee_id=E-1')).toEqual([c.id, a.id])
      expect(await ids('employee_id=E-1&is_active=true')).toEqual([c.id, a.id])
      expect(await ids('employee_id=E-2&is_active=true')).toEqual([])
    })

    it('lists only the caller account and mode', async () => {
      const mine = await freshAccount(t)
      const other = await freshAccount(t)
      const op = await create(mine.api, { ident: uniq('W') })
      await create(other.api, { ident: uniq('W') })
      const res = await mine.api.get<List<Operator>>('/v1/operators')
      expect(res.body.data).toEqual([op])
    })

    it('refuses an unknown query parameter and a non-boolean is_active with 422', async () => {
      const { api } = await freshAccount(t)
      expectError(
        await api.get('/v1/operators?colour=red'),
        422,
        'validation_error',
        'unknown_param',
        'colour',
      )
      expectError(
        await api.get('/v1/operators?is_active=maybe'),
        422,
        'validation_error',
        undefined,
        'is_active',
      )
    })
  })

  describe('pay_rule_id', () => {
    const rule = async (api: ApiClient, name = 'Hourly') =>
      created(api.post<PayRule>('/v1/pay-rules', { name }))

    it('is set on create, changed and cleared by PATCH, each change an operator.updated', async () => {
      const { key, api } = await freshAccount(t)
      const first = await rule(api, 'First')
      const second = await rule(api, 'Second')
      const op = await create(api, { ident: uniq('W'), pay_rule_id: first.id })
      expectOperatorShape(op)
      expect(op.pay_rule_id).toBe(first.id)
      expect((await api.get(`/v1/operators/${op.id}`)).body).toEqual(op)

      const moved = await ok(api.patch<Operator>(`/v1/operators/${op.id}`, { pay_rule_id: second.id }))
      expect(moved.pay_rule_id).toBe(second.id)
      const cleared = await ok(api.patch<Operator>(`/v1/operators/${op.id}`, { pay_rule_id: null }))
      expect(cleared.pay_rule_id).toBeNull()
      expect((await api.get(`/v1/operators/${op.id}`)).body).toEqual(cleared)
      // The same rule again, or null again, is no change.
      expect(await ok(api.patch(`/v1/operators/${op.id}`, { pay_rule_id: null }))).toEqual(cleared)

      const events = (await eventsOf(t, key.account_id)).filter((e) => e.type.startsWith('operator.'))
      expect(events.map((e) => [e.type, e.data.previous_attributes])).toEqual([
        ['operator.created', undefined],
        ['operator.updated', { pay_rule_id: first.id }],
        ['operator.updated', { pay_rule_id: second.id }],
      ])
      expectEnvelope(events[1] as EventEnvelope, 'operator.updated', moved)
    })

    it('refuses an unknown rule with 422 unknown_pay_rule, param pay_rule_id, on create and PATCH', async () => {
      const { key, api } = await freshAccount(t)
      const op = await create(api, { ident: uniq('W') })
      const stranger = await rule((await freshAccount(t)).api)
      for (const id of ['pr_01ZZZZZZZZZZZZZZZZZZZZZZZZ', stranger.id]) {
        expectError(
          await api.post('/v1/operators', { ident: uniq('W'), pay_rule_id: id }),
          422,
          'validation_error',
          'unknown_pay_rule',
          'pay_rule_id',
        )
        expectError(
          await api.patch(`/v1/operators/${op.id}`, { pay_rule_id: id, name: 'Changed' }),
          422,
          'validation_error',
          'unknown_pay_rule',
          'pay_rule_id',
        )
      }
      expect((await api.get(`/v1/operators/${op.id}`)).body).toEqual(op)
      expect((await eventsOf(t, key.account_id)).map((e) => e.type)).toEqual(['operator.created'])
    })

    it("refuses the other mode's rule with 422 cross_mode_reference, param pay_rule_id", async () => {
      const { api, name } = await freshAccount(t)
      const live = t.client((await t.key({ account: name, mode: 'live' })).secret)
      const liveRule = await rule(live)
      const op = await create(api, { ident: uniq('W') })
      expectError(
        await api.post('/v1/operators', { ident: uniq('W'), pay_rule_id: liveRule.id }),
        422,
        'validation_error',
        'cross_mode_reference',
        'pay_rule_id',
      )
      expectError(
        await api.patch(`/v1/operators/${op.id}`, { pay_rule_id: liveRule.id }),
        422,
        'validation_error',
        'cross_mode_reference',
        'pay_rule_id',
      )
      expect((await api.get(`/v1/operators/${op.id}`)).body).toEqual(op)
    })

    it('refuses a pay_rule_id that is not a string or null with 422 invalid_type', async () => {
      const { api } = await freshAccount(t)
      expectError(
        await api.post('/v1/operators', { ident: uniq('W'), pay_rule_id: 5 }),
        422,
        'validation_error',
        'invalid_type',
        'pay_rule_id',
      )
    })
  })
})
