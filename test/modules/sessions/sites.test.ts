import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { errorOf, expectError, type List, type Location, type Session } from '../../helpers/assertions.js'
import { expectAnsweredAsMissing, type SitesWorld, sitesWorld, walkList } from '../../helpers/sites.js'

/** Sessions for a principal held to sites (decisions.md, "Sites"): elsewhere, they do not exist. */
describe('sessions at other sites', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  const day = (n: number, from = 8, to = 16) => {
    const date = `2026-03-${String(n).padStart(2, '0')}`
    return {
      check_in: { time: `${date}T${String(from).padStart(2, '0')}:00:00Z` },
      check_out: { time: `${date}T${String(to).padStart(2, '0')}:00:00Z` },
    }
  }

  async function session(w: SitesWorld, where: 'here' | 'there' | 'nowhere', n: number) {
    const res = await w.owner.post<Session>('/v1/sessions', {
      operator_id: w.operators.here.id,
      device_id: w.devices[where].code,
      ...day(n),
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body
  }

  /** A session at each place: here, there, and one without a location (its device stands nowhere). */
  async function placed() {
    const w = await sitesWorld(t)
    const here = await session(w, 'here', 2)
    const there = await session(w, 'there', 3)
    const nowhere = await session(w, 'nowhere', 4)
    expect([here.location_id, there.location_id, nowhere.location_id]).toEqual([w.here.id, w.there.id, null])
    return { w, here, there, nowhere }
  }

  it('reads a session at its site; one elsewhere or without a location answers as a missing id', async () => {
    const { w, here, there, nowhere } = await placed()
    const read = await w.restricted.get<Session>(`/v1/sessions/${here.id}`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual(here)
    for (const id of [there.id, nowhere.id]) {
      await expectAnsweredAsMissing(
        w.restricted,
        { method: 'GET', path: (s) => `/v1/sessions/${s}` },
        id,
        w.owner,
      )
      await expectAnsweredAsMissing(
        w.restricted,
        { method: 'GET', path: (s) => `/v1/sessions/${s}/revisions` },
        id,
        w.owner,
      )
    }
  })

  it('leaves them out of the list, in full pages, newest first and by work date', async () => {
    const w = await sitesWorld(t)
    // Interleaved, so a page cut after the LIMIT would come out short.
    const mine: string[] = []
    for (let n = 2; n <= 13; n++) {
      const where = n % 3 === 0 ? 'here' : n % 3 === 1 ? 'there' : 'nowhere'
      const made = await session(w, where, n)
      if (where === 'here') mine.push(made.id)
    }
    expect(mine).toHaveLength(4)
    const newest = await walkList(w.restricted, '/v1/sessions', 3)
    expect(newest.ids).toEqual([...mine].reverse())
    expect(newest.pages).toEqual([3, 1])
    const byDate = await walkList(w.restricted, '/v1/sessions?order=work_date', 3)
    expect(byDate.ids).toEqual(mine)
    expect(byDate.pages).toEqual([3, 1])
    // Filters narrow what it sees; they never widen it.
    const filtered = await w.restricted.get<List<Session>>(`/v1/sessions?location_id=${w.there.id}`)
    expect(filtered.body.data).toEqual([])
    const byDevice = await w.restricted.get<List<Session>>(`/v1/sessions?device_id=${w.devices.there.code}`)
    expect(byDevice.body.data).toEqual([])
    const byOperator = await w.restricted.get<List<Session>>(
      `/v1/sessions?operator_id=${w.operators.here.id}&status=completed&is_flagged=true`,
    )
    expect(byOperator.body.data.map((s) => s.id)).toEqual([...mine].reverse())
    // The owner's key sees all twelve.
    expect((await walkList(w.owner, '/v1/sessions', 50)).ids).toHaveLength(12)
  })

  it('edits, deletes, approves or rejects one elsewhere as a missing id, and nothing changes', async () => {
    const { w, there, nowhere } = await placed()
    for (const id of [there.id, nowhere.id]) {
      const requests = [
        { method: 'PATCH' as const, path: (s: string) => `/v1/sessions/${s}`, body: { notes: 'moved' } },
        { method: 'DELETE' as const, path: (s: string) => `/v1/sessions/${s}` },
        { method: 'POST' as const, path: (s: string) => `/v1/sessions/${s}/approve`, body: {} },
        { method: 'POST' as const, path: (s: string) => `/v1/sessions/${s}/reject`, body: { note: 'No.' } },
      ]
      for (const request of requests) await expectAnsweredAsMissing(w.restricted, request, id)
      const unchanged = await w.owner.get<Session>(`/v1/sessions/${id}`)
      expect(unchanged.body).toEqual(id === there.id ? there : nowhere)
    }
  })

  it('edits, approves and deletes one at its site', async () => {
    const { w, here } = await placed()
    const edited = await w.restricted.patch<Session>(`/v1/sessions/${here.id}`, { notes: 'checked' })
    expect(edited.status, JSON.stringify(edited.body)).toBe(200)
    expect(edited.body.notes).toBe('checked')
    const approved = await w.restricted.post<Session>(`/v1/sessions/${here.id}/approve`, {})
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)
    expect(approved.body.review_status).toBe('approved')
    expect((await w.restricted.delete(`/v1/sessions/${here.id}`)).status).toBe(200)
  })

  it('creates at its site only: a device or location elsewhere is unknown, as one that does not exist', async () => {
    const w = await sitesWorld(t)
    const body = { operator_id: w.operators.there.id, ...day(2) }
    // An operator homed elsewhere may work here: operators are readable and referable.
    const made = await w.restricted.post<Session>('/v1/sessions', { ...body, device_id: w.devices.here.code })
    expect(made.status, JSON.stringify(made.body)).toBe(201)
    expect(made.body.location_id).toBe(w.here.id)

    const refusals = [
      [{ device_id: w.devices.there.code }, 'unknown_device', 'device_id', w.devices.there.code],
      [{ device_id: w.devices.nowhere.code }, 'unknown_device', 'device_id', w.devices.nowhere.code],
      [
        { device_id: w.devices.here.code, location_id: w.there.id },
        'unknown_location',
        'location_id',
        w.there.id,
      ],
      [
        { device_id: w.devices.here.code, location_name: w.there.name },
        'unknown_location',
        'location_name',
        w.there.name,
      ],
    ] as const
    for (const [names, code, param, value] of refusals) {
      const res = await w.restricted.post('/v1/sessions', { ...body, ...day(5), ...names })
      const error = expectError(res, 422, 'validation_error', code, param)
      // Word for word what a value that names nothing gets.
      const nothing = await w.restricted.post('/v1/sessions', {
        ...body,
        ...day(5),
        ...names,
        [param]: 'nothing-here',
      })
      expect(error.message.replace(value, '<v>')).toBe(
        errorOf(nothing).message.replace('nothing-here', '<v>'),
      )
    }
    expect((await w.owner.get<List<Session>>('/v1/sessions')).body.data.map((s) => s.id)).toEqual([
      made.body.id,
    ])
  })

  it('a location name shared with a location elsewhere names its own, not an ambiguous one', async () => {
    const w = await sitesWorld(t)
    const twin = await w.owner.post<Location>('/v1/locations', { name: w.here.name, timezone: 'UTC' })
    expect(twin.status).toBe(201)
    const body = { operator_id: w.operators.here.id, device_id: w.devices.here.code, ...day(2) }
    const mine = await w.restricted.post<Session>('/v1/sessions', { ...body, location_name: w.here.name })
    expect(mine.status, JSON.stringify(mine.body)).toBe(201)
    expect(mine.body.location_id).toBe(w.here.id)
    const owners = await w.owner.post('/v1/sessions', { ...body, ...day(3), location_name: w.here.name })
    expectError(owners, 422, 'validation_error', 'ambiguous_location', 'location_name')
  })

  it('cannot move a session elsewhere or take its location away', async () => {
    const { w, here } = await placed()
    const refusals = [
      [{ device_id: w.devices.there.code }, 'unknown_device', 'device_id'],
      [{ location_id: w.there.id }, 'unknown_location', 'location_id'],
      [{ location_id: null }, 'invalid_value', 'location_id'],
    ] as const
    for (const [body, code, param] of refusals) {
      expectError(
        await w.restricted.patch(`/v1/sessions/${here.id}`, body),
        422,
        'validation_error',
        code,
        param,
      )
    }
    expect((await w.owner.get<Session>(`/v1/sessions/${here.id}`)).body).toEqual(here)
    // The owner's key may.
    const moved = await w.owner.patch<Session>(`/v1/sessions/${here.id}`, { location_id: null })
    expect(moved.status).toBe(200)
    expect(moved.body.location_id).toBeNull()
  })

  it('an overlap with a session it cannot see says "another session", never its id', async () => {
    const { w, here, there } = await placed()
    const overlapping = {
      operator_id: w.operators.here.id,
      device_id: w.devices.here.code,
      ...day(3, 10, 12),
    }
    const hidden = expectError(
      await w.restricted.post('/v1/sessions', overlapping),
      409,
      'conflict',
      'overlapping_session',
    )
    expect(hidden.message).toContain('another session')
    expect(hidden.message).not.toContain(there.id)
    // An edit onto it alike.
    const edit = await w.restricted.patch(`/v1/sessions/${here.id}`, day(3, 9, 11))
    expect(errorOf(edit)).toMatchObject({ code: 'overlapping_session' })
    expect(errorOf(edit).message).not.toContain(there.id)
    // One it sees is named; the owner's key is told every id.
    const seen = await w.restricted.post('/v1/sessions', { ...overlapping, ...day(2, 10, 12) })
    expect(errorOf(seen).message).toContain(here.id)
    const owners = await w.owner.post('/v1/sessions', overlapping)
    expect(errorOf(owners).message).toContain(there.id)
  })
})
