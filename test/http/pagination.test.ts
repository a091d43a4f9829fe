import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiClient, buildTestApp, type TestApp } from '../helpers/app.js'
import { expectError, type List, type Operator, uniq } from '../helpers/assertions.js'

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

describe('cursor pagination over operators', () => {
  let t: TestApp
  let api: ApiClient
  let accountName: string
  /** Ids of the 230 operators created in beforeAll, newest first. */
  let createdNewestFirst: string[]

  beforeAll(async () => {
    t = await buildTestApp()
    accountName = uniq('acct')
    api = t.client((await t.key({ account: accountName })).secret)
    const ids: string[] = []
    // Sequential, so creation order is known; every fifth is inactive and every third has an employee_id.
    for (let i = 0; i < 230; i++) {
      const res = await api.post<Operator>('/v1/operators', {
        ident: `W-${String(i).padStart(3, '0')}`,
        ...(i % 3 === 0 ? { employee_id: 'E-3' } : {}),
      })
      expect(res.status).toBe(201)
      ids.push(res.body.id)
    }
    for (let i = 0; i < 230; i += 5) {
      expect((await api.delete(`/v1/operators/${ids[i]}`)).status).toBe(200)
    }
    createdNewestFirst = ids.reverse()
  }, 120_000)
  afterAll(() => t.close())

  async function page(query: string, client = api): Promise<List<Operator>> {
    const res = await client.get<List<Operator>>(`/v1/operators${query ? `?${query}` : ''}`)
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['data', 'has_more', 'next_cursor', 'object'])
    expect(res.body.object).toBe('list')
    if (res.body.has_more) expect(typeof res.body.next_cursor).toBe('string')
    else expect(res.body.next_cursor).toBeNull()
    return res.body
  }

  async function pageAll(query: string, between?: (pageNumber: number) => Promise<void>) {
    const pages: List<Operator>[] = []
    let cursor: string | null = null
    do {
      const q: string = [query, cursor ? `cursor=${encodeURIComponent(cursor)}` : '']
        .filter(Boolean)
        .join('&')
      const current = await page(q)
      pages.push(current)
      cursor = current.next_cursor
      if (between) await between(pages.length)
    } while (cursor !== null)
    return pages
  }

  it('pages 230 operators 50 at a time: 5 pages, newest first, no repeats, no gaps', async () => {
    const pages = await pageAll('limit=50')
    expect(pages.map((p) => p.data.length)).toEqual([50, 50, 50, 50, 30])
    expect(pages.map((p) => p.has_more)).toEqual([true, true, true, true, false])
    expect(pages.at(-1)?.next_cursor).toBeNull()
    const ids = pages.flatMap((p) => p.data.map((o) => o.id))
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual(createdNewestFirst)
    // Newest first also by the id's own order (ids sort by creation time).
    expect([...ids].sort().reverse()).toEqual(ids)
  })

  it('gives has_more false and a null cursor when the last page is exactly full', async () => {
    const pages = await pageAll('limit=115')
    expect(pages.map((p) => p.data.length)).toEqual([115, 115])
    expect(pages.map((p) => p.has_more)).toEqual([true, false])
    expect(pages[1]?.next_cursor).toBeNull()
    expect(pages.flatMap((p) => p.data.map((o) => o.id))).toEqual(createdNewestFirst)
  })

  it('pages a filtered list without repeats or gaps', async () => {
    const expected = createdNewestFirst.filter((_, i) => {
      const created = 229 - i
      return created % 5 !== 0 && created % 3 === 0
    })
    const pages = await pageAll('limit=7&is_active=true&employee_id=E-3')
    const ids = pages.flatMap((p) => p.data.map((o) => o.id))
    expect(ids).toEqual(expected)
    for (const p of pages)
      for (const o of p.data) expect(o).toMatchObject({ is_active: true, employee_id: 'E-3' })
  })

  it('defaults limit to 50 and allows up to 200', async () => {
    const first = await page('')
    expect(first.data.map((o) => o.id)).toEqual(createdNewestFirst.slice(0, 50))
    expect(first.has_more).toBe(true)
    const max = await page('limit=200')
    expect(max.data.map((o) => o.id)).toEqual(createdNewestFirst.slice(0, 200))
    expect(max.has_more).toBe(true)
    const rest = await page(`limit=200&cursor=${encodeURIComponent(max.next_cursor ?? '')}`)
    expect(rest.data.map((o) => o.id)).toEqual(createdNewestFirst.slice(200))
    expect(rest.has_more).toBe(false)
    const one = await page('limit=1')
    expect(one.data.map((o) => o.id)).toEqual(createdNewestFirst.slice(0, 1))
  })

  it('refuses limit outside 1..200 or not an integer with 422 param limit', async () => {
    for (const limit of ['0', '201', '-1', '1.5', 'ten', '', '1e3']) {
      const res = await api.get(`/v1/operators?limit=${encodeURIComponent(limit)}`)
      expectError(res, 422, 'validation_error', undefined, 'limit')
    }
  })

  it('accepts a cursor of the operators list with another filter set', async () => {
    const first = await page('limit=50')
    const cursor = encodeURIComponent(first.next_cursor ?? '')
    const lastSeen = first.data.at(-1)?.id ?? ''
    const filtered = await page(`limit=200&is_active=false&cursor=${cursor}`)
    const expected = createdNewestFirst.filter((id, i) => id < lastSeen && (229 - i) % 5 === 0)
    expect(expected.length).toBeGreaterThan(0)
    expect(filtered.data.map((o) => o.id)).toEqual(expected)
    expect(filtered.has_more).toBe(false)
  })

  it("refuses a cursor of another account's key, or of the other mode, with 400 invalid_cursor", async () => {
    const first = await page('limit=10')
    const cursor = encodeURIComponent(first.next_cursor ?? '')
    const stranger = t.client((await t.key({ account: uniq('acct') })).secret)
    await stranger.post('/v1/operators', { ident: 'mine' })
    expectError(await stranger.get(`/v1/operators?cursor=${cursor}`), 400, 'bad_request', 'invalid_cursor')
    const live = t.client((await t.key({ account: accountName, mode: 'live' })).secret)
    expectError(await live.get(`/v1/operators?cursor=${cursor}`), 400, 'bad_request', 'invalid_cursor')
    // Another key of the same account and mode may use it.
    const sibling = t.client((await t.key({ account: accountName })).secret)
    const res = await sibling.get<List<Operator>>(`/v1/operators?limit=10&cursor=${cursor}`)
    expect(res.status).toBe(200)
    expect(res.body.data.map((o) => o.id)).toEqual(createdNewestFirst.slice(10, 20))
  })

  it('refuses a cursor with any one character changed with 400 invalid_cursor', async () => {
    const cursor = (await page('limit=10')).next_cursor ?? ''
    expect(cursor.length).toBeGreaterThan(10)
    const variants = new Set<string>()
    for (let i = 0; i < cursor.length; i++) {
      const char = cursor[i] ?? ''
      const at = BASE64URL.indexOf(char)
      // The next base64url letter (differs in the lowest bit) and a far one; a dot for other characters.
      const substitutes =
        at < 0 ? ['A'] : [BASE64URL[(at + 1) % 64] ?? 'A', BASE64URL[(at + 32) % 64] ?? 'A', '.']
      for (const sub of substitutes) variants.add(cursor.slice(0, i) + sub + cursor.slice(i + 1))
    }
    variants.delete(cursor)
    const accepted: string[] = []
    for (const variant of variants) {
      const res = await api.get(`/v1/operators?cursor=${encodeURIComponent(variant)}`)
      if (res.status === 200) accepted.push(variant)
      else expectError(res, 400, 'bad_request', 'invalid_cursor')
    }
    expect(accepted).toEqual([])
  })

  it('refuses malformed cursors with 400 invalid_cursor', async () => {
    const cursor = (await page('limit=10')).next_cursor ?? ''
    for (const bad of [
      'x',
      'abc.def',
      `${cursor}.x`,
      cursor.split('.')[0] ?? '',
      `.${cursor}`,
      '....',
      '%%%',
    ]) {
      const res = await api.get(`/v1/operators?cursor=${encodeURIComponent(bad)}`)
      expectError(res, 400, 'bad_request', 'invalid_cursor')
    }
  })

  it('returns each row that existed when paging began exactly once while new rows are inserted', async () => {
    const inserted: string[] = []
    const insert = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await api.post<Operator>('/v1/operators', { ident: uniq('NEW') })
        expect(res.status).toBe(201)
        inserted.push(res.body.id)
      }
    }
    const before = await allIds()
    expect(before).toEqual(createdNewestFirst)
    const pages = await pageAll('limit=50', async (n) => {
      if (n === 1 || n === 2) await insert(3)
    })
    expect(inserted).toHaveLength(6)
    const ids = pages.flatMap((p) => p.data.map((o) => o.id))
    expect(ids).toEqual(before)
    for (const id of inserted) expect(ids).not.toContain(id)
    // The new rows are there for whoever starts paging now, newest first.
    const fresh = await page('limit=6')
    expect(fresh.data.map((o) => o.id)).toEqual([...inserted].reverse())
  })

  async function allIds(): Promise<string[]> {
    return (await pageAll('limit=200')).flatMap((p) => p.data.map((o) => o.id))
  }
})
