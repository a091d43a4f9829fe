import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { dialect } from '../../helpers/database.js'
import { onDay, sessionHelpers } from './helpers.js'

/**
 * The statements the process sends to PostgreSQL while `run` runs, in order, as their SQL. Watched
 * on `pg`'s client, below Kysely and the service: each is one round trip. The commit's NOTIFY
 * (db/postgres-signals.ts) is left out: it is sent after the commit on a pooled connection of its
 * own, not awaited by the request, and shared by the commits made while one is in flight.
 */
async function statementsDuring(run: () => Promise<unknown>): Promise<string[]> {
  const query = vi.spyOn(pg.Client.prototype, 'query')
  try {
    await run()
    return query.mock.calls.map(([text]) => String(text)).filter((text) => !text.includes('pg_notify('))
  } finally {
    query.mockRestore()
  }
}

/**
 * A create's round trips on PostgreSQL, one pattern each (docs/performance.md, "What makes a
 * create cost what it does", says why each remains). A change that adds one, or splits one, fails
 * here with the statements it sent.
 */
const CREATE_ROUND_TRIPS = [
  /^begin$/,
  // The operator, read under the per-operator lock every change of their sessions takes.
  /^select \* from "operators" .* for update$/,
  // The device, and its location's time zone (the work date), in one statement.
  /^select "d"\.\*, "l"\."timezone" as "location_timezone" from "devices" as "d" left join "locations" /,
  // No overlap with the operator's other sessions: after the operator's lock, in a statement of its own.
  /^select "id" from "sessions" .* union all select "id" from "sessions" /,
  // The pay-period lock, shared, then the closed-period read after it (a statement's snapshot is
  // taken when it starts: a read in the statement that waits for the lock would miss a close).
  /^select pg_advisory_xact_lock_shared\(/,
  /^select \* from "pay_periods" /,
  // The session, its first revision and its two events: one statement (db/held-writes.ts).
  /^with "held_0" as \(insert into "sessions" .*\), "held_1" as \(insert into "session_revisions" .*\) insert into "events" .*\), \(/,
  /^commit$/,
]

/** With an `Idempotency-Key`: the claim first, committed on its own; the answer stored with the writes. */
const KEYED_CREATE_ROUND_TRIPS = [
  /^insert into "idempotency_keys" .* on conflict .* do nothing$/,
  ...CREATE_ROUND_TRIPS.slice(0, 6),
  /^with "held_0" as \(insert into "sessions" .*\), "held_1" as \(insert into "session_revisions" .*\), "held_2" as \(insert into "events" .*\) update "idempotency_keys" set /,
  /^commit$/,
]

function expectStatements(statements: string[], patterns: RegExp[]) {
  const unmatched = statements.filter((sql, i) => !patterns[i]?.test(sql))
  expect({ count: statements.length, unmatched }, statements.join('\n')).toEqual({
    count: patterns.length,
    unmatched: [],
  })
}

describe.runIf(dialect === 'postgres')('round trips of a create on PostgreSQL', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { world, bodyFor } = sessionHelpers(() => t)

  it('POST /v1/sessions: 8 round trips, 9 with an Idempotency-Key, and the key looked up once', async () => {
    const w = await world()
    const plain = await statementsDuring(async () => {
      const res = await w.api.post('/v1/sessions', bodyFor(w, onDay(3)))
      expect(res.status).toBe(201)
    })
    expectStatements(plain, CREATE_ROUND_TRIPS)

    const keyed = await statementsDuring(async () => {
      const res = await w.api.post('/v1/sessions', bodyFor(w, onDay(4)), { 'idempotency-key': 'rt-1' })
      expect(res.status).toBe(201)
    })
    expectStatements(keyed, KEYED_CREATE_ROUND_TRIPS)
    const stored = await t.db
      .selectFrom('idempotency_keys')
      .select(['status', 'response_status'])
      .where('key', '=', 'rt-1')
      .executeTakeFirstOrThrow()
    expect(stored).toEqual({ status: 'done', response_status: 201 })
  })

  it('an API key is read from the database once, then from the cache', async () => {
    const key = await t.key({ account: 'acme-rt' })
    const api = t.client(key.secret)
    const keyLookups = async () =>
      (await statementsDuring(() => api.get('/v1/sessions'))).filter((sql) => sql.includes('"api_keys"'))
    expect(await keyLookups()).toHaveLength(1)
    expect(await keyLookups()).toHaveLength(0)
  })
})
