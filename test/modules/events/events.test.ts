import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiClient, buildTestApp, errorOf, type TestApp } from '../../helpers/app.js'
import { type EventEnvelope as Envelope, ISO_MS, type List, uniq } from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import { freshAccount } from '../../helpers/fixtures.js'

describe('events API', () => {
  const clock = useTestClock()
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  async function createOperator(api: ApiClient) {
    const res = await api.post<Record<string, unknown> & { id: string }>('/v1/operators', {
      ident: uniq('op'),
      name: 'Ada',
    })
    expect(res.status).toBe(201)
    return res.body
  }

  async function list(api: ApiClient, query = '') {
    const res = await api.get<List<Envelope>>(`/v1/events${query}`)
    expect(res.status).toBe(200)
    return res.body
  }

  /** Every event of the list, following cursors. */
  async function listAll(api: ApiClient, query: Record<string, string> = {}, limit = 2) {
    const ids: string[] = []
    let cursor: string | null = null
    for (let page = 0; page < 50; page++) {
      const params = new URLSearchParams({ ...query, limit: String(limit), ...(cursor ? { cursor } : {}) })
      const body = await list(api, `?${params}`)
      expect(body.data.length).toBeLessThanOrEqual(limit)
      ids.push(...body.data.map((e) => e.id))
      expect(body.has_more).toBe(body.next_cursor !== null)
      if (!body.has_more) return ids
      cursor = body.next_cursor
    }
    throw new Error('too many pages')
  }

  /** An account with a few events 15 ms apart on the service's clock. */
  async function seeded() {
    const ctx = await freshAccount(t)
    const { api } = ctx
    const first = await createOperator(api)
    clock.advance(15)
    const second = await createOperator(api)
    clock.advance(15)
    const renamed = await api.patch<Record<string, unknown>>(`/v1/operators/${first.id}`, { name: 'Grace' })
    expect(renamed.status).toBe(200)
    clock.advance(15)
    const location = await api.post<Record<string, unknown> & { id: string }>('/v1/locations', {
      name: uniq('site'),
    })
    expect(location.status).toBe(201)
    const all = (await list(api)).data
    return { ...ctx, first, second, renamed: renamed.body, location: location.body, all }
  }

  it('lists the account’s events newest first, each one the envelope with the API object', async () => {
    const { api, first, second, renamed, location, all } = await seeded()
    expect(all.map((e) => e.type)).toEqual([
      'location.created',
      'operator.updated',
      'operator.created',
      'operator.created',
    ])
    expect(all.map((e) => e.data.object)).toEqual([location, renamed, second, first])
    expect(all[1]?.data.previous_attributes).toEqual({ name: 'Ada' })
    const ids = all.map((e) => e.id)
    expect(ids).toEqual([...ids].sort().reverse())
    const created = all.map((e) => Date.parse(e.created))
    expect(created).toEqual([...created].sort((a, b) => b - a))
    expect(created.map((at) => at - (created[3] as number))).toEqual([45, 30, 15, 0])
    for (const event of all) {
      expect(Object.keys(event).sort()).toEqual([
        'api_version',
        'created',
        'data',
        'id',
        'livemode',
        'object',
        'type',
      ])
      expect('previous_attributes' in event.data).toBe(event.type === 'operator.updated')
      expect(event.object).toBe('event')
      expect(event.id).toMatch(/^evt_[0-9A-Z]{26}$/)
      expect(event.api_version).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(event.livemode).toBe(false)
      expect(event.created).toMatch(ISO_MS)
    }
    const listed = await list(api)
    expect(listed).toMatchObject({ object: 'list', has_more: false, next_cursor: null })
  })

  it('retrieves one event by id, identical to its list entry', async () => {
    const { api, all } = await seeded()
    for (const event of all) {
      const res = await api.get<Envelope>(`/v1/events/${event.id}`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual(event)
    }
    const missing = await api.get('/v1/events/evt_01JAAAAAAAAAAAAAAAAAAAAAAA')
    expect(missing.status).toBe(404)
    expect(errorOf(missing).type).toBe('not_found')
  })

  it('filters by type', async () => {
    const { api, first, second } = await seeded()
    const created = await list(api, '?type=operator.created')
    expect(created.data.map((e) => e.type)).toEqual(['operator.created', 'operator.created'])
    expect(created.data.map((e) => e.data.object.id)).toEqual([second.id, first.id])
    expect((await list(api, '?type=operator.updated')).data).toHaveLength(1)
    expect((await list(api, '?type=session.completed')).data).toEqual([])
  })

  it('filters by created_from (inclusive) and created_to (exclusive)', async () => {
    const { api, all } = await seeded()
    // Newest first: [location.created, operator.updated, operator.created (2nd), operator.created (1st)].
    const pivot = all[1] as Envelope
    const from = await list(api, `?created_from=${encodeURIComponent(pivot.created)}`)
    expect(from.data.map((e) => e.id)).toEqual([all[0]?.id, pivot.id])
    const to = await list(api, `?created_to=${encodeURIComponent(pivot.created)}`)
    expect(to.data.map((e) => e.id)).toEqual([all[2]?.id, all[3]?.id])
    const window = await list(
      api,
      `?created_from=${encodeURIComponent(all[2]?.created ?? '')}&created_to=${encodeURIComponent(all[0]?.created ?? '')}`,
    )
    expect(window.data.map((e) => e.id)).toEqual([all[1]?.id, all[2]?.id])
    // Other zone designators name the same instant.
    const instant = new Date(Date.parse(pivot.created))
    const offset = new Date(instant.getTime() + 2 * 3_600_000).toISOString().replace('Z', '+02:00')
    const fromOffset = await list(api, `?created_from=${encodeURIComponent(offset)}`)
    expect(fromOffset.data.map((e) => e.id)).toEqual([all[0]?.id, pivot.id])
    const combined = await list(
      api,
      `?type=operator.created&created_from=${encodeURIComponent(all[2]?.created ?? '')}`,
    )
    expect(combined.data.map((e) => e.id)).toEqual([all[2]?.id])
    expect((await list(api, '?created_from=2999-01-01T00:00:00Z')).data).toEqual([])
    expect((await list(api, '?created_to=2000-01-01T00:00:00Z')).data).toEqual([])
  })

  for (const [param, value] of [
    ['created_from', 'yesterday'],
    ['created_from', '2026-01-01T00:00:00'],
    ['created_to', '2026-13-01T00:00:00Z'],
    ['created_to', '1700000000'],
  ] as const) {
    it(`refuses ${param}=${value} with invalid_timestamp`, async () => {
      const { api } = await freshAccount(t)
      const res = await api.get(`/v1/events?${param}=${encodeURIComponent(value)}`)
      expect(res.status).toBe(422)
      expect(errorOf(res)).toMatchObject({ type: 'validation_error', code: 'invalid_timestamp', param })
    })
  }

  it('pages with a cursor through every event exactly once', async () => {
    const { api } = await freshAccount(t)
    for (let i = 0; i < 7; i++) await createOperator(api)
    const everything = (await list(api)).data.map((e) => e.id)
    expect(everything).toHaveLength(7)
    expect(await listAll(api, {}, 2)).toEqual(everything)
    expect(await listAll(api, {}, 3)).toEqual(everything)
    expect(await listAll(api, {}, 7)).toEqual(everything)
    const firstPage = await list(api, '?limit=7')
    expect(firstPage).toMatchObject({ has_more: false, next_cursor: null })
    const page = await list(api, '?limit=3')
    expect(page.has_more).toBe(true)
    expect(page.next_cursor).toEqual(expect.any(String))

    // Events made while paging are newer than the cursor: they never shift the pages being read.
    const second = await list(api, `?limit=3&cursor=${encodeURIComponent(page.next_cursor ?? '')}`)
    await createOperator(api)
    const secondAgain = await list(api, `?limit=3&cursor=${encodeURIComponent(page.next_cursor ?? '')}`)
    expect(secondAgain.data.map((e) => e.id)).toEqual(second.data.map((e) => e.id))
    expect(second.data.map((e) => e.id)).toEqual(everything.slice(3, 6))
  })

  it('pages a filtered list', async () => {
    const { api } = await freshAccount(t)
    const operators = []
    for (let i = 0; i < 5; i++) operators.push(await createOperator(api))
    for (const op of operators) {
      expect((await api.patch(`/v1/operators/${op.id}`, { name: uniq('n') })).status).toBe(200)
    }
    const updated = await listAll(api, { type: 'operator.updated' }, 2)
    expect(updated).toHaveLength(5)
    const all = (await list(api)).data
    expect(updated).toEqual(all.filter((e) => e.type === 'operator.updated').map((e) => e.id))
  })

  it('refuses malformed cursors, cursors of another account and out-of-range limits', async () => {
    const { api } = await freshAccount(t)
    for (let i = 0; i < 3; i++) await createOperator(api)
    const page = await list(api, '?limit=1')
    const cursor = page.next_cursor ?? ''
    expect(cursor).not.toBe('')
    const bad = await api.get(`/v1/events?cursor=${encodeURIComponent(`${cursor}x`)}`)
    expect(bad.status).toBe(400)
    expect(errorOf(bad)).toMatchObject({ type: 'bad_request', code: 'invalid_cursor' })
    const other = await freshAccount(t)
    const foreign = await other.api.get(`/v1/events?cursor=${encodeURIComponent(cursor)}`)
    expect(foreign.status).toBe(400)
    expect(errorOf(foreign).code).toBe('invalid_cursor')
    for (const limit of ['0', '201', '1.5']) {
      const res = await api.get(`/v1/events?limit=${limit}`)
      expect(res.status).toBe(422)
      expect(errorOf(res).param).toBe('limit')
    }
  })

  it('never shows another mode’s or another account’s events', async () => {
    const account = uniq('acct')
    const testCtx = await freshAccount(t, 'test', account)
    const liveCtx = await freshAccount(t, 'live', account)
    const otherCtx = await freshAccount(t, 'test')
    const testOp = await createOperator(testCtx.api)
    const liveOp = await createOperator(liveCtx.api)
    const otherOp = await createOperator(otherCtx.api)

    const testEvents = (await list(testCtx.api)).data
    const liveEvents = (await list(liveCtx.api)).data
    const otherEvents = (await list(otherCtx.api)).data
    expect(testEvents.map((e) => e.data.object.id)).toEqual([testOp.id])
    expect(liveEvents.map((e) => e.data.object.id)).toEqual([liveOp.id])
    expect(otherEvents.map((e) => e.data.object.id)).toEqual([otherOp.id])
    expect(testEvents[0]?.livemode).toBe(false)
    expect(liveEvents[0]?.livemode).toBe(true)

    const testEvent = testEvents[0] as Envelope
    const liveEvent = liveEvents[0] as Envelope
    for (const [api, id] of [
      [liveCtx.api, testEvent.id],
      [testCtx.api, liveEvent.id],
      [otherCtx.api, testEvent.id],
      [otherCtx.api, liveEvent.id],
    ] as const) {
      const res = await api.get(`/v1/events/${id}`)
      expect(res.status).toBe(404)
      expect(errorOf(res).type).toBe('not_found')
    }
    // A cursor of the test list is not a cursor of the live list.
    for (let i = 0; i < 2; i++) await createOperator(testCtx.api)
    const cursor = (await list(testCtx.api, '?limit=1')).next_cursor ?? ''
    const crossMode = await liveCtx.api.get(`/v1/events?cursor=${encodeURIComponent(cursor)}`)
    expect(crossMode.status).toBe(400)
    expect(errorOf(crossMode).code).toBe('invalid_cursor')
  })

  it('needs the events:read scope (events:write implies it)', async () => {
    const account = uniq('acct')
    const full = t.client((await t.key({ account })).secret)
    await createOperator(full)
    const id = (await list(full)).data[0]?.id ?? ''
    const reader = t.client((await t.key({ account, scopes: ['events:read'] })).secret)
    const writer = t.client((await t.key({ account, scopes: ['events:write'] })).secret)
    const without = t.client((await t.key({ account, scopes: ['operators:write', 'webhooks:write'] })).secret)

    for (const api of [reader, writer]) {
      expect((await api.get('/v1/events')).status).toBe(200)
      expect((await api.get(`/v1/events/${id}`)).status).toBe(200)
    }
    for (const res of [await without.get('/v1/events'), await without.get(`/v1/events/${id}`)]) {
      expect(res.status).toBe(403)
      expect(errorOf(res).type).toBe('insufficient_scope')
    }
    const anonymous = await t.client(undefined).get('/v1/events')
    expect(anonymous.status).toBe(401)
    expect(errorOf(anonymous).type).toBe('authentication_error')
  })
})
