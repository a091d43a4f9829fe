import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'
import { createKey, listKeys, setKeyLabel } from '../../../src/modules/keys/service.js'
import { ForgottenCheckOutSweep, SERVICE_KEY_ID } from '../../../src/modules/sessions/sweep.js'
import { startApp } from '../../../src/runtime.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import type { List, Session, SessionRevision } from '../../helpers/assertions.js'
import { atTime } from '../../helpers/clock.js'
import { createTestDatabase } from '../../helpers/database.js'
import { ok, world } from '../../helpers/world.js'

const HOUR = 60 * 60 * 1000

describe('API key labels', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it("a session's revisions carry the label its key has now (key_label): null without one, and for the service's own changes", async () => {
    const w = await world(t)
    await setKeyLabel(t.db, w.admin.id, "Dana's console")
    const bot = await createKey(t.db, { account: w.account, mode: 'test', label: 'Payroll bot' })
    expect(bot.label).toBe('Payroll bot')
    const op = await w.operator()

    // Checked in by Dana's key an hour ago; the service closes it 16 hours on; the bot completes
    // it; the unlabelled key approves it.
    const checkedInAt = Date.now() - HOUR
    const scan = await w.scan(op, new Date(checkedInAt).toISOString())
    const sweep = new ForgottenCheckOutSweep(t.db, { intervalMs: 60_000 }, { error: () => undefined })
    expect(await atTime(checkedInAt + 17 * HOUR, () => sweep.sweep())).toBe(1)
    await ok(
      t.client(bot.secret).patch(`/v1/sessions/${scan.session_id}`, {
        check_out: { time: new Date(checkedInAt + 30 * 60_000).toISOString() },
      }),
    )
    expect(await ok(w.api.post<Session>(`/v1/sessions/${scan.session_id}/approve`))).toMatchObject({
      review_status: 'approved',
    })

    const history = async () =>
      (await ok(w.api.get<List<SessionRevision>>(`/v1/sessions/${scan.session_id}/revisions`))).data.map(
        (r) => [r.action, r.key_id, r.key_label],
      )
    expect(await history()).toEqual([
      ['approved', w.key.id, null],
      ['updated', bot.id, 'Payroll bot'],
      ['closed', SERVICE_KEY_ID, null],
      ['checked_in', w.admin.id, "Dana's console"],
    ])
    // The label as it is now: renamed, then cleared.
    await setKeyLabel(t.db, w.admin.id, 'Dana (site lead)')
    await setKeyLabel(t.db, bot.id, null)
    expect((await history()).map((entry) => entry[2])).toEqual([null, null, null, 'Dana (site lead)'])
    // Pages (one revision each) carry it too.
    const first = await ok(
      w.api.get<List<SessionRevision>>(`/v1/sessions/${scan.session_id}/revisions?limit=1`),
    )
    const rest = await ok(
      w.api.get<List<SessionRevision>>(
        `/v1/sessions/${scan.session_id}/revisions?limit=3&cursor=${encodeURIComponent(first.next_cursor ?? '')}`,
      ),
    )
    expect(rest.data.map((r) => r.key_label)).toEqual([null, null, 'Dana (site lead)'])
  })

  it('the key made at first start is labelled "first key"', async () => {
    const database = await createTestDatabase()
    const { app, firstKey } = await startApp({
      ...loadConfig({}),
      databaseUrl: database.url,
      logLevel: 'silent',
      worker: 'off',
    })
    try {
      expect(firstKey).toMatchObject({ mode: 'test', label: 'first key' })
      const keys = await listKeys(app.db)
      expect(keys.map((k) => [k.id, k.account, k.label])).toEqual([[firstKey?.id, 'default', 'first key']])
    } finally {
      await app.close()
      await database.drop()
    }
  })
})
