import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../src/db/connection.js'
import type { Db } from '../../../src/db/types.js'
import { ForgottenCheckOutSweep, SERVICE_KEY_ID } from '../../../src/modules/sessions/sweep.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { type Session, waitUntil } from '../../helpers/assertions.js'
import { useTestClock } from '../../helpers/clock.js'
import { dialect } from '../../helpers/database.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { type Scan, sessionHelpers, type World } from './helpers.js'

const HOUR = 60 * 60 * 1000
const SIXTEEN_HOURS = 16 * HOUR
const silent = { error: () => undefined }

describe('the sweep of forgotten check-outs', () => {
  const clock = useTestClock()
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { world, revisionsOf } = sessionHelpers(() => t)

  async function checkIn(w: World, operatorId: string, at: number): Promise<Scan> {
    const res = await w.api.post<Scan>('/v1/scans', {
      device_id: w.device.code,
      operator_id: operatorId,
      time: new Date(at).toISOString(),
    })
    expect(res.body.result).toBe('checked_in')
    return res.body
  }

  async function flaggedEvents(w: World, sessionId: string) {
    return (await eventsOf(t, w.key.account_id)).filter(
      (e) => e.type === 'session.flagged' && e.data.object.id === sessionId,
    )
  }

  it('closes an open session once it is older than 16 hours on its clock, once, emitting one session.flagged', async () => {
    const w = await world()
    const checkedInAt = clock.now() - HOUR
    const scan = await checkIn(w, w.operator.id, checkedInAt)
    clock.set(checkedInAt + SIXTEEN_HOURS)
    const sweep = new ForgottenCheckOutSweep(t.db, { intervalMs: 60_000 }, silent)

    // Exactly 16 hours is not older than 16 hours.
    await sweep.sweep()
    expect((await w.api.get<Session>(`/v1/sessions/${scan.session_id}`)).body.status).toBe('open')

    clock.advance(1)
    await sweep.sweep()
    const closed = (await w.api.get<Session>(`/v1/sessions/${scan.session_id}`)).body
    expect(closed).toMatchObject({
      status: 'completed',
      check_out: null,
      total_hours: null,
      is_flagged: true,
      flag_reason: 'max_shift_exceeded',
    })
    clock.advance(HOUR)
    await sweep.sweep()
    const flagged = await flaggedEvents(w, closed.id)
    expect(flagged).toHaveLength(1)
    expect(flagged[0]?.data.previous_attributes).toEqual({
      status: 'open',
      is_flagged: false,
      flag_reason: null,
    })
    const [revision] = (await revisionsOf(w.api, closed.id)).data
    expect(revision).toMatchObject({ action: 'closed', key_id: SERVICE_KEY_ID })
  })

  it('several sweeps at once (as several workers would) close each session exactly once', async () => {
    const w = await world()
    const checkedInAt = clock.now() - 2 * HOUR
    const sessionIds: string[] = []
    for (let i = 0; i < 6; i++) {
      const operator = (await w.api.post<{ id: string }>('/v1/operators', { ident: `S-${i}` })).body
      sessionIds.push((await checkIn(w, operator.id, checkedInAt + i * 1000)).session_id ?? '')
    }
    // On PostgreSQL each sweep has a pool of its own, as a worker process would. better-sqlite3
    // waits for a lock synchronously, so handles of one process on one file would block each other's
    // event loop: on SQLite the sweeps share the app's handle, whose transactions run one at a time.
    const handles: Db[] =
      dialect === 'postgres' ? Array.from({ length: 4 }, () => openDatabase(t.database.url).db) : []
    const sweepers = handles.length > 0 ? handles : Array.from({ length: 4 }, () => t.db)
    try {
      clock.set(checkedInAt + SIXTEEN_HOURS + HOUR)
      const counts = await Promise.all(
        sweepers.map((db) => new ForgottenCheckOutSweep(db, { intervalMs: 60_000 }, silent).sweep()),
      )
      expect(counts.reduce((a, b) => a + b, 0)).toBe(6)
    } finally {
      await Promise.all(handles.map((db) => db.destroy()))
    }
    for (const id of sessionIds) {
      expect((await w.api.get<Session>(`/v1/sessions/${id}`)).body.flag_reason).toBe('max_shift_exceeded')
      expect(await flaggedEvents(w, id)).toHaveLength(1)
    }
  })

  it('over HTTP: with WORKER=inline, a scan-in dated 17 hours ago is closed by the service itself at its next pass', async () => {
    const inline = await buildTestApp(
      { worker: 'inline', sessionSweepIntervalMs: 60_000 },
      { database: t.database },
    )
    try {
      const w = await world()
      const api = inline.client(w.key.secret)
      const scan = await api.post<Scan>('/v1/scans', {
        device_id: w.device.code,
        operator_id: w.operator.id,
        time: new Date(clock.now() - 17 * HOUR).toISOString(),
      })
      expect(scan.body.result).toBe('checked_in')
      const read = async () => (await api.get<Session>(`/v1/sessions/${scan.body.session_id}`)).body
      // The sweep's first pass ran at start-up, before the scan; the next one is a minute on.
      expect((await read()).status).toBe('open')
      clock.advance(60_000)
      const session = await waitUntil(read, (s) => s.status !== 'open')
      expect(session).toMatchObject({
        status: 'completed',
        flag_reason: 'max_shift_exceeded',
        check_out: null,
      })
      // The closure and its event commit together.
      expect(await flaggedEvents(w, session.id)).toHaveLength(1)
    } finally {
      // Only this app: the database belongs to `t`, which drops it.
      await inline.app.close()
    }
  })
})
