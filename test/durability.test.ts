import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../src/db/connection.js'
import { waitUntil } from './helpers/assertions.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { killAll, START_MS } from './helpers/process.js'
import { firstKey, listeningUrl, startServerProcess } from './helpers/server-process.js'

const CONNECTIONS = 20
const OPERATORS = 50
const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
/**
 * The bound on reaching 400 answered creates. The whole test took 8–16 s alone, 22–58 s beside two
 * busy loops on 2 cores; this bounds a failure only (the kill comes as soon as the 400 are answered).
 */
const LOAD_MS = 120_000
/** The start, the setup requests, the load, the kill and the checks. */
const TEST_MS = START_MS + 30_000 + LOAD_MS + 10_000 + 30_000

/**
 * SIGKILL under the load of `npm run bench:http` (20 connections of creates, every other one with
 * an Idempotency-Key, the inline worker on): every create that was answered 201 is in the database
 * afterwards, with its revision and both events. A process crash loses nothing acknowledged, group
 * commit and background checkpoints included.
 */
describe('a server killed under load', () => {
  const databases: TestDatabase[] = []
  afterAll(async () => {
    await killAll()
    for (const database of databases) await database.drop()
  })

  it('keeps every acknowledged create, its revision and its events', { timeout: TEST_MS }, async () => {
    const database = await createTestDatabase()
    databases.push(database)
    const server = startServerProcess({
      DATABASE_URL: database.url,
      WORKER: 'inline',
      RATE_LIMIT_MAX: '1000000',
    })
    const { child } = server
    const base = await listeningUrl(child)
    const secret = firstKey(server)
    const post = async (path: string, body: unknown, key?: string) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${secret}`,
          'content-type': 'application/json',
          ...(key ? { 'idempotency-key': key } : {}),
        },
        body: JSON.stringify(body),
      })
      return { status: res.status, body: (await res.json()) as { id: string } }
    }
    const location = await post('/v1/locations', { name: 'Plant', timezone: 'UTC' })
    await post('/v1/devices', { code: 'GATE-1', location_id: location.body.id })
    for (let n = 0; n < OPERATORS; n++) await post('/v1/operators', { ident: `op-${n}` })

    const acknowledged: string[] = []
    let next = 0
    let killed = false
    const connection = async () => {
      while (!killed) {
        const i = next++
        const checkIn = Date.UTC(2001, 0, 1) + Math.floor(i / OPERATORS) * DAY_MS + 8 * HOUR_MS
        try {
          const res = await post(
            '/v1/sessions',
            {
              operator_ident: `op-${i % OPERATORS}`,
              device_id: 'GATE-1',
              check_in: { time: new Date(checkIn).toISOString() },
              check_out: { time: new Date(checkIn + 8 * HOUR_MS).toISOString() },
              break_minutes: 30,
            },
            i % 2 === 0 ? `kill-${i}` : undefined,
          )
          if (res.status === 201) acknowledged.push(res.body.id)
          else if (!killed) throw new Error(`unexpected ${res.status} ${JSON.stringify(res.body)}`)
        } catch (error) {
          if (!killed) throw error
        }
      }
    }
    const load = Promise.all(Array.from({ length: CONNECTIONS }, connection))
    // Kill once a good number of creates are answered, while requests are in flight.
    await waitUntil(
      () => acknowledged.length,
      (n) => n >= 400,
      { timeoutMs: LOAD_MS },
    )
    killed = true
    child.kill('SIGKILL')
    expect((await child.waitForExit(10_000)).signal).toBe('SIGKILL')
    await load
    expect(acknowledged.length).toBeGreaterThanOrEqual(400)

    const { db } = openDatabase(database.url)
    try {
      const sessions = new Set((await db.selectFrom('sessions').select('id').execute()).map((row) => row.id))
      const revisions = new Set(
        (await db.selectFrom('session_revisions').select('session_id').execute()).map(
          (row) => row.session_id,
        ),
      )
      const events = new Map<string, string[]>()
      for (const row of await db.selectFrom('events').select(['type', 'payload']).execute()) {
        const id = (JSON.parse(row.payload) as { data: { object: { id: string } } }).data.object.id
        events.set(id, [...(events.get(id) ?? []), row.type])
      }
      const lost = acknowledged.filter((id) => !sessions.has(id))
      expect(lost, `${lost.length} acknowledged creates lost`).toEqual([])
      for (const id of acknowledged) {
        expect(revisions.has(id), `revision of ${id}`).toBe(true)
        expect(events.get(id)?.sort(), `events of ${id}`).toEqual(['session.completed', 'session.flagged'])
      }
    } finally {
      await db.destroy()
    }
  })
})
