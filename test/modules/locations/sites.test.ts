import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type Location } from '../../helpers/assertions.js'
import { createPerson, signIn } from '../../helpers/people.js'
import { expectAnsweredAsMissing, sitesWorld, walkList } from '../../helpers/sites.js'

/**
 * Locations for a principal held to sites (decisions.md, "Sites"): it reads its own locations only;
 * making, changing and deleting locations is the whole account's business.
 */
describe('locations of a principal held to sites', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it('lists and reads its locations only; another answers as a missing id', async () => {
    const w = await sitesWorld(t)
    const more: string[] = []
    for (let i = 0; i < 4; i++) {
      const res = await w.owner.post<Location>('/v1/locations', { name: `Site ${i}`, timezone: 'UTC' })
      more.push(res.body.id)
    }
    const list = await walkList(w.restricted, '/v1/locations', 1)
    expect(list.ids).toEqual([w.here.id])
    expect(list.pages).toEqual([1])
    expect((await w.restricted.get<Location>(`/v1/locations/${w.here.id}`)).body).toEqual(w.here)
    for (const id of [w.there.id, ...more]) {
      await expectAnsweredAsMissing(
        w.restricted,
        { method: 'GET', path: (l) => `/v1/locations/${l}` },
        id,
        w.owner,
      )
    }
    const byName = await w.restricted.get<{ data: Location[] }>(
      `/v1/locations?name=${encodeURIComponent(w.there.name)}`,
    )
    expect(byName.body.data).toEqual([])
    expect((await walkList(w.owner, '/v1/locations', 50)).ids).toHaveLength(6)
  })

  it('makes, changes and deletes no location, not even its own: 403 location_restricted', async () => {
    const w = await sitesWorld(t)
    for (const res of [
      await w.restricted.post('/v1/locations', { name: 'Annex', timezone: 'UTC' }),
      await w.restricted.patch(`/v1/locations/${w.here.id}`, { name: 'Renamed' }),
      await w.restricted.delete(`/v1/locations/${w.here.id}`),
    ]) {
      expectError(res, 403, 'insufficient_scope', 'location_restricted')
    }
    expect((await w.owner.get<Location>(`/v1/locations/${w.here.id}`)).body).toEqual(w.here)
  })

  it("a person held to sites sees its membership's locations of the mode it works in, none of the other", async () => {
    const w = await sitesWorld(t, 'test')
    const person = await createPerson(t, { account: w.account, role: 'viewer', locationIds: [w.here.id] })
    const browser = await signIn(t, person)
    const test = await browser.client(person.accountId, 'test').get<{ data: Location[] }>('/v1/locations')
    expect(test.status).toBe(200)
    expect(test.body.data.map((l) => l.id)).toEqual([w.here.id])
    // Its list names a test location only: in live mode it sees none.
    const live = t.client((await t.key({ account: w.account, mode: 'live' })).secret)
    expect((await live.post('/v1/locations', { name: 'Live site', timezone: 'UTC' })).status).toBe(201)
    const inLive = await browser.client(person.accountId, 'live').get<{ data: Location[] }>('/v1/locations')
    expect(inLive.status).toBe(200)
    expect(inLive.body.data).toEqual([])
  })
})
