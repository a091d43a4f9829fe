import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type Operator } from '../../helpers/assertions.js'
import { eventsOf, freshAccount } from '../../helpers/fixtures.js'
import { sitesWorld, walkList } from '../../helpers/sites.js'

/**
 * Operators' home location and employment dates, and what a principal held to sites may do with
 * them (decisions.md, "Sites"): read every operator, change those homed at its locations.
 */
describe('operators: home location, employment dates and sites', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  describe('home_location_id, start_date and end_date', () => {
    it('are set at creation, shown, changed and cleared, with operator.updated naming the old values', async () => {
      const w = await sitesWorld(t)
      const res = await w.owner.post<Operator>('/v1/operators', {
        ident: 'W-9',
        home_location_id: w.here.id,
        start_date: '2026-01-05',
        end_date: '2026-12-31',
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(res.body).toMatchObject({
        home_location_id: w.here.id,
        start_date: '2026-01-05',
        end_date: '2026-12-31',
      })
      expect((await w.owner.get<Operator>(`/v1/operators/${res.body.id}`)).body).toEqual(res.body)
      expect(w.operators.homeless).toMatchObject({ home_location_id: null, start_date: null, end_date: null })

      const moved = await w.owner.patch<Operator>(`/v1/operators/${res.body.id}`, {
        home_location_id: w.there.id,
        end_date: null,
      })
      expect(moved.status, JSON.stringify(moved.body)).toBe(200)
      expect(moved.body).toMatchObject({
        home_location_id: w.there.id,
        start_date: '2026-01-05',
        end_date: null,
      })
      const updated = (await eventsOf(t, w.accountId, false)).filter(
        (e) => e.type === 'operator.updated' && (e.data.object as { id: string }).id === res.body.id,
      )
      expect(updated).toHaveLength(1)
      expect(updated[0]?.data.previous_attributes).toMatchObject({
        home_location_id: w.here.id,
        end_date: '2026-12-31',
      })
      expect(Object.keys(updated[0]?.data.previous_attributes ?? {}).sort()).not.toContain('start_date')
      const cleared = await w.owner.patch<Operator>(`/v1/operators/${res.body.id}`, {
        home_location_id: null,
      })
      expect(cleared.body.home_location_id).toBeNull()
    })

    it('refuses an end before the start (invalid_date_range), on create and on the merged state of a PATCH', async () => {
      const { api } = await freshAccount(t)
      expectError(
        await api.post('/v1/operators', { ident: 'A', start_date: '2026-03-02', end_date: '2026-03-01' }),
        422,
        'validation_error',
        'invalid_date_range',
        'end_date',
      )
      const made = await api.post<Operator>('/v1/operators', { ident: 'A', start_date: '2026-03-02' })
      expect(made.status).toBe(201)
      expect(made.body.start_date).toBe('2026-03-02')
      expectError(
        await api.patch(`/v1/operators/${made.body.id}`, { end_date: '2026-03-01' }),
        422,
        'validation_error',
        'invalid_date_range',
        'end_date',
      )
      const ended = await api.patch<Operator>(`/v1/operators/${made.body.id}`, { end_date: '2026-03-02' })
      expect(ended.body.end_date).toBe('2026-03-02')
      expectError(
        await api.patch(`/v1/operators/${made.body.id}`, { start_date: '2026-03-03' }),
        422,
        'validation_error',
        'invalid_date_range',
        'start_date',
      )
      expect((await api.get<Operator>(`/v1/operators/${made.body.id}`)).body).toEqual(ended.body)
    })

    it('refuses a date that is not a calendar date, and a home that is no location of the account and mode', async () => {
      const w = await sitesWorld(t)
      for (const date of ['2026-02-30', '02/03/2026', '2026-3-2']) {
        const res = await w.owner.post('/v1/operators', { ident: 'B', start_date: date })
        expect(res.status, date).toBe(422)
      }
      expectError(
        await w.owner.post('/v1/operators', { ident: 'B', home_location_id: 'loc_nothing' }),
        422,
        'validation_error',
        'unknown_location',
        'home_location_id',
      )
      const live = t.client((await t.key({ account: w.account, mode: 'live' })).secret)
      expectError(
        await live.post('/v1/operators', { ident: 'B', home_location_id: w.here.id }),
        422,
        'validation_error',
        'cross_mode_reference',
        'home_location_id',
      )
    })
  })

  describe('a principal held to sites', () => {
    it('reads every operator, wherever homed', async () => {
      const w = await sitesWorld(t)
      const all = await walkList(w.restricted, '/v1/operators', 2)
      expect(all.ids.sort()).toEqual(
        Object.values(w.operators)
          .map((o) => o.id)
          .sort(),
      )
      for (const operator of Object.values(w.operators)) {
        expect((await w.restricted.get<Operator>(`/v1/operators/${operator.id}`)).body).toEqual(operator)
      }
    })

    it('changes operators homed at its locations only: elsewhere or nowhere, 403 location_restricted', async () => {
      const w = await sitesWorld(t)
      for (const operator of [w.operators.there, w.operators.homeless]) {
        for (const res of [
          await w.restricted.patch(`/v1/operators/${operator.id}`, { name: 'Renamed' }),
          await w.restricted.patch(`/v1/operators/${operator.id}`, { pin: '1234' }),
          await w.restricted.patch(`/v1/operators/${operator.id}`, { home_location_id: w.here.id }),
          await w.restricted.delete(`/v1/operators/${operator.id}`),
        ]) {
          const error = expectError(res, 403, 'insufficient_scope', 'location_restricted')
          expect(error.message).toContain(operator.id)
        }
        expect((await w.owner.get<Operator>(`/v1/operators/${operator.id}`)).body).toEqual(operator)
      }
      // A missing one is still a 404.
      expectError(await w.restricted.patch('/v1/operators/op_nothing', { name: 'X' }), 404, 'not_found')
      const renamed = await w.restricted.patch<Operator>(`/v1/operators/${w.operators.here.id}`, {
        name: 'Renamed',
        pin: '1234',
      })
      expect(renamed.status).toBe(200)
      expect(renamed.body).toMatchObject({ name: 'Renamed', has_pin: true })
      const deactivated = await w.restricted.delete<Operator>(`/v1/operators/${w.operators.here.id}`)
      expect(deactivated.body.is_active).toBe(false)
    })

    it('homes the operators it makes or moves at its locations, never elsewhere or nowhere', async () => {
      const w = await sitesWorld(t)
      for (const [body, code] of [
        [{}, 'invalid_value'],
        [{ home_location_id: null }, 'invalid_value'],
        [{ home_location_id: w.there.id }, 'unknown_location'],
      ] as const) {
        expectError(
          await w.restricted.post('/v1/operators', { ident: 'NEW', ...body }),
          422,
          'validation_error',
          code,
          'home_location_id',
        )
      }
      const made = await w.restricted.post<Operator>('/v1/operators', {
        ident: 'NEW',
        home_location_id: w.here.id,
      })
      expect(made.status).toBe(201)
      for (const [home, code] of [
        [null, 'invalid_value'],
        [w.there.id, 'unknown_location'],
      ] as const) {
        expectError(
          await w.restricted.patch(`/v1/operators/${made.body.id}`, { home_location_id: home }),
          422,
          'validation_error',
          code,
          'home_location_id',
        )
      }
      expect((await w.owner.get<Operator>(`/v1/operators/${made.body.id}`)).body).toEqual(made.body)
    })
  })
})
