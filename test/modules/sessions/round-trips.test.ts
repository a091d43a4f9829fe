import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { roundTripsOf, type Sent, statementsDuring } from '../../db/pg-statements.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { dialect } from '../../helpers/database.js'
import { onDay, sessionHelpers } from './helpers.js'

/** The pattern of a statement, and whether it goes behind the one before (no round trip of its own). */
type Expected = [sql: RegExp, behind?: 'behind']

/**
 * A create's statements on PostgreSQL (docs/performance.md, "What makes a create cost what it
 * does", says why each remains). A change that adds one, splits one, or sends one alone that went
 * behind another fails here with the statements it sent.
 */
const CREATE_STATEMENTS: Expected[] = [
  // BEGIN goes with the first read.
  [/^begin$/],
  // The operator, read under the per-operator lock every change of their sessions takes.
  [/^select \* from "operators" .* for update$/, 'behind'],
  // The device, and its location's time zone (the work date), in one statement.
  [/^select "d"\.\*, "l"\."timezone" as "location_timezone" from "devices" as "d" left join "locations" /],
  // No overlap with the operator's other sessions: after the operator's lock, in a statement of its own.
  [/^select "id", "location_id" from "sessions" .* union all select "id", "location_id" from "sessions" /],
  // The pay-period lock, shared, then the closed-period read after it (a statement's snapshot is
  // taken when it starts: a read in the statement that waits for the lock would miss a close).
  [/^select pg_advisory_xact_lock_shared\(/],
  [/^select \* from "pay_periods" /],
  // The session, its first revision and its two events: one statement (db/held-writes.ts), and the
  // COMMIT behind it.
  [
    /^with "held_0" as \(insert into "sessions" .*\), "held_1" as \(insert into "session_revisions" .*\) insert into "events" .*\), \(/,
  ],
  [/^commit$/, 'behind'],
]

/**
 * With an `Idempotency-Key`: the claim first, committed on its own; the answer stored by the
 * statement that carries the writes, whose count the COMMIT waits for (a claim taken over meanwhile
 * fails the create).
 */
const KEYED_CREATE_STATEMENTS: Expected[] = [
  [/^insert into "idempotency_keys" .* on conflict .* do nothing$/],
  ...CREATE_STATEMENTS.slice(0, 6),
  [
    /^with "held_0" as \(insert into "sessions" .*\), "held_1" as \(insert into "session_revisions" .*\), "held_2" as \(insert into "events" .*\) update "idempotency_keys" set /,
  ],
  [/^commit$/],
]

function expectStatements(sent: Sent[], expected: Expected[]) {
  const unexpected = sent.filter(
    ({ sql, behind }, i) => !expected[i]?.[0].test(sql) || behind !== (expected[i]?.[1] === 'behind'),
  )
  const listing = sent.map(({ sql, behind }) => `${behind ? '(behind) ' : ''}${sql}`).join('\n')
  expect({ count: sent.length, unexpected }, listing).toEqual({ count: expected.length, unexpected: [] })
}

describe.runIf(dialect === 'postgres')('round trips of a create on PostgreSQL', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { world, bodyFor } = sessionHelpers(() => t)

  it('POST /v1/sessions: 8 statements in 6 round trips, 9 in 8 with an Idempotency-Key', async () => {
    const w = await world()
    const plain = await statementsDuring(async () => {
      const res = await w.api.post('/v1/sessions', bodyFor(w, onDay(3)))
      expect(res.status).toBe(201)
    })
    expectStatements(plain, CREATE_STATEMENTS)
    expect(roundTripsOf(plain)).toBe(6)

    const keyed = await statementsDuring(async () => {
      const res = await w.api.post('/v1/sessions', bodyFor(w, onDay(4)), { 'idempotency-key': 'rt-1' })
      expect(res.status).toBe(201)
    })
    expectStatements(keyed, KEYED_CREATE_STATEMENTS)
    expect(roundTripsOf(keyed)).toBe(8)
    const stored = await t.db
      .selectFrom('idempotency_keys')
      .select(['status', 'response_status'])
      // Stored under the principal (a key's id), as every Idempotency-Key is.
      .where('key', '=', `${w.key.id}:rt-1`)
      .executeTakeFirstOrThrow()
    expect(stored).toEqual({ status: 'done', response_status: 201 })
  })

  it('an API key is read from the database once, then from the cache', async () => {
    const key = await t.key({ account: 'acme-rt' })
    const api = t.client(key.secret)
    const keyLookups = async () =>
      (await statementsDuring(() => api.get('/v1/sessions'))).filter(({ sql }) => sql.includes('"api_keys"'))
    expect(await keyLookups()).toHaveLength(1)
    expect(await keyLookups()).toHaveLength(0)
  })
})
