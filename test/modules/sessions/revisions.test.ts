import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, ISO_MS, type List, type Session, uniq } from '../../helpers/assertions.js'
import { CREATED, EDITED, sessionHelpers } from './helpers.js'

describe('sessions over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { world, createSession, newEvents, newEventTypes, revisionsOf } = sessionHelpers(() => t)

  describe('revisions and deletion', () => {
    it('keeps every revision (created, updated, deleted) with the key and the snapshots, after the delete too', async () => {
      const w = await world()
      const otherKey = await t.key({ account: w.name })
      const other = t.client(otherKey.secret)
      const session = await createSession(w)
      const first = (await w.api.patch<Session>(`/v1/sessions/${session.id}`, { break_minutes: 30 })).body
      const second = (await other.patch<Session>(`/v1/sessions/${session.id}`, { notes: 'checked' })).body

      const res = await other.delete(`/v1/sessions/${session.id}`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ object: 'session', id: session.id, deleted: true })

      expectError(await w.api.get(`/v1/sessions/${session.id}`), 404, 'not_found')
      const revisions = await revisionsOf(w.api, session.id)
      expect(revisions.has_more).toBe(false)
      expect(revisions.next_cursor).toBeNull()
      expect(revisions.data.map((r) => [r.action, r.key_id])).toEqual([
        ['deleted', otherKey.id],
        ['updated', otherKey.id],
        ['updated', w.key.id],
        ['created', w.key.id],
      ])
      const [deleted, updated2, updated1, creation] = revisions.data
      for (const revision of revisions.data) {
        expect(revision.object).toBe('session_revision')
        expect(revision.id).toMatch(/^rev_[0-9A-Z]{26}$/)
        expect(revision.session_id).toBe(session.id)
        expect(revision.livemode).toBe(false)
        expect(revision.created).toMatch(ISO_MS)
      }
      expect([creation?.before, creation?.after]).toEqual([null, session])
      expect([updated1?.before, updated1?.after]).toEqual([session, first])
      expect([updated2?.before, updated2?.after]).toEqual([first, second])
      expect([deleted?.before, deleted?.after]).toEqual([second, null])

      const page = await revisionsOf(w.api, session.id, '?limit=3')
      expect(page.data).toEqual(revisions.data.slice(0, 3))
      expect(page.has_more).toBe(true)
      const rest = await revisionsOf(
        w.api,
        session.id,
        `?limit=3&cursor=${encodeURIComponent(page.next_cursor ?? '')}`,
      )
      expect(rest.data).toEqual(revisions.data.slice(3))

      const events = await newEvents(w)
      expect(events.map((e) => e.type)).toEqual([...CREATED, ...EDITED, ...EDITED, 'session.deleted'])
      expect(events[6]?.data.object).toEqual(second)
    })

    it('soft-deletes: gone from GET, PATCH, DELETE and the list, the row kept with deleted_at', async () => {
      const w = await world()
      const kept = await createSession(w)
      const session = await createSession(w, {
        check_in: { time: '2026-03-03T08:00:00Z' },
        check_out: { time: '2026-03-03T09:00:00Z' },
      })
      const before = Date.now()
      expect((await w.api.delete(`/v1/sessions/${session.id}`)).status).toBe(200)

      expectError(await w.api.get(`/v1/sessions/${session.id}`), 404, 'not_found')
      expectError(await w.api.patch(`/v1/sessions/${session.id}`, { notes: 'x' }), 404, 'not_found')
      expectError(await w.api.delete(`/v1/sessions/${session.id}`), 404, 'not_found')
      expect((await w.api.get<List<Session>>('/v1/sessions')).body.data).toEqual([kept])

      const row = await t.db
        .selectFrom('sessions')
        .selectAll()
        .where('id', '=', session.id)
        .executeTakeFirst()
      expect(row).toBeDefined()
      expect(Number(row?.deleted_at)).toBeGreaterThanOrEqual(before)
      expect(await newEventTypes(w)).toEqual([...CREATED, ...CREATED, 'session.deleted'])
      expect((await revisionsOf(w.api, session.id)).data.map((r) => r.action)).toEqual(['deleted', 'created'])
    })

    it("answers 404 on delete and revisions for an unknown id, another account's session and the other mode's", async () => {
      const w = await world()
      const session = await createSession(w)
      const stranger = t.client((await t.key({ account: uniq('acct') })).secret)
      const live = t.client((await t.key({ account: w.name, mode: 'live' })).secret)
      expectError(await w.api.delete('/v1/sessions/ses_nope'), 404, 'not_found')
      expectError(await stranger.delete(`/v1/sessions/${session.id}`), 404, 'not_found')
      expectError(await live.delete(`/v1/sessions/${session.id}`), 404, 'not_found')
      expectError(await w.api.get('/v1/sessions/ses_nope/revisions'), 404, 'not_found')
      expectError(await stranger.get(`/v1/sessions/${session.id}/revisions`), 404, 'not_found')
      expectError(await live.get(`/v1/sessions/${session.id}/revisions`), 404, 'not_found')
      expect((await w.api.get(`/v1/sessions/${session.id}`)).body).toEqual(session)
      expect(await newEventTypes(w)).toEqual(CREATED)
    })
  })
})
