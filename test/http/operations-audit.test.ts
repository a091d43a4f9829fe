import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRetention } from '../../src/app.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { expectError, type Scan } from '../helpers/assertions.js'
import { eventsOf } from '../helpers/fixtures.js'
import { world } from '../helpers/world.js'

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

/**
 * decisions.md, "Operating it": the retention window is the service's EVENT_RETENTION_DAYS, not a
 * constant. test/modules/events/retention.test.ts checks what a pass deletes at the default (30
 * days); here the pass the service itself builds (createRetention, as `cli worker` and the inline
 * worker do) runs with the lowest window allowed, 15 days, and each side of it is read over HTTP.
 */
describe('retention at EVENT_RETENTION_DAYS=15 (decisions.md)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ eventRetentionDays: 15 })
  })
  afterAll(() => t?.close())

  it('deletes relayed events older than 15 days (then 404), keeps younger ones and every record', async () => {
    const w = await world(t)
    const [older, younger] = [await w.operator(), await w.operator()]
    const scan = await w.scan(older, new Date(Date.now() - HOUR_MS).toISOString())
    const created = (await eventsOf(t, w.accountId)).filter((e) => e.type === 'operator.created')
    const eventOf = (id: string) => created.find((e) => e.data.object.id === id)?.id ?? ''
    const [gone, kept] = [eventOf(older.id), eventOf(younger.id)]
    // As a relay would have left them (no worker runs here), 15 days old give or take an hour; the
    // records as old as the older event.
    const ageEvent = (id: string, ageMs: number) =>
      t.db
        .updateTable('events')
        .set({ created_at: Date.now() - ageMs, dispatched_at: Date.now() - ageMs })
        .where('id', '=', id)
        .execute()
    await ageEvent(gone, 15 * DAY_MS + HOUR_MS)
    await ageEvent(kept, 15 * DAY_MS - HOUR_MS)
    for (const table of ['operators', 'scans', 'sessions', 'session_revisions'] as const) {
      await t.db
        .updateTable(table)
        .set({ created_at: Date.now() - 15 * DAY_MS - HOUR_MS })
        .where('account_id', '=', w.accountId)
        .execute()
    }

    const pass = await createRetention(t.config, t.db, t.app.log).purge()
    expect(pass.events).toBe(1)
    expectError(await w.root.get(`/v1/events/${gone}`), 404, 'not_found', 'resource_missing', 'id')
    expect((await w.root.get(`/v1/events/${kept}`)).status).toBe(200)
    expect((await w.root.get(`/v1/operators/${older.id}`)).status).toBe(200)
    expect((await w.root.get<Scan>(`/v1/scans/${scan.id}`)).body.id).toBe(scan.id)
    expect((await w.root.get(`/v1/sessions/${scan.session_id}`)).status).toBe(200)
  })
})
