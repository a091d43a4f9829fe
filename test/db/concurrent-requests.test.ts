import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GroupCommitStats } from '../../src/db/sqlite/driver.js'
import { type ApiResponse, buildTestApp, type TestApp } from '../helpers/app.js'
import { expectError, type Operator, type Session } from '../helpers/assertions.js'
import { dialect } from '../helpers/database.js'
import { eventsOf } from '../helpers/fixtures.js'
import { created, world } from '../helpers/world.js'

/**
 * Requests that arrive together: on SQLite their transactions share one real transaction (group
 * commit: each a savepoint, one COMMIT on the event loop's next turn), on PostgreSQL they run side
 * by side. Either way a request that fails must leave the others' answers, rows and events as if it
 * had not been sent, and leave nothing of its own (but a stored refusal of an Idempotency-Key).
 */
describe('a failing request among concurrent ones', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  /**
   * Runs `requests` at once. On SQLite they must have made one group: a single COMMIT carried every
   * transaction that succeeded, so the group was open from the burst's first BEGIN to its end, and
   * the failing transactions, begun meanwhile, ran in it (each in a savepoint, rolled back alone).
   */
  async function together<T>(
    requests: Array<() => Promise<ApiResponse<T>>>,
    storedRefusals = 0,
  ): Promise<ApiResponse<T>[]> {
    const before = snapshot(t.groupCommits)
    const answers = await Promise.all(requests.map((request) => request()))
    if (dialect === 'sqlite') {
      const after = snapshot(t.groupCommits)
      expect(after.commits - before.commits).toBe(1)
      expect(after.transactions - before.transactions).toBe(
        answers.filter((a) => a.status === 201).length + storedRefusals,
      )
    }
    return answers
  }

  /** What the account's events say about each object: the event types, by object id. */
  async function eventsByObject(accountId: string, since: string) {
    const byObject = new Map<string, string[]>()
    for (const event of await eventsOf(t, accountId, false, since)) {
      const id = (event.data.object as { id: string }).id
      byObject.set(id, [...(byObject.get(id) ?? []), event.type])
    }
    return byObject
  }

  async function lastEventId(accountId: string): Promise<string> {
    return (await eventsOf(t, accountId)).at(-1)?.id ?? ''
  }

  it('a unique violation: the others are created with their events, the duplicate leaves nothing', async () => {
    const w = await world(t)
    const taken = await w.operator({ ident: 'TAKEN' })
    const since = await lastEventId(w.accountId)
    const idents = ['N-1', 'N-2', 'TAKEN', 'N-3', 'N-4', 'N-5']
    const answers = await together(
      idents.map((ident) => () => w.root.post<Operator>('/v1/operators', { ident })),
    )
    expectError(answers[2] as ApiResponse, 409, 'conflict', 'duplicate_ident', 'ident')
    const made = answers.filter((_, i) => i !== 2)
    expect(made.map((a) => a.status)).toEqual([201, 201, 201, 201, 201])

    const rows = await t.db
      .selectFrom('operators')
      .select(['id', 'ident'])
      .where('account_id', '=', w.accountId)
      .execute()
    expect(new Map(rows.map((r) => [r.ident, r.id]))).toEqual(
      new Map([['TAKEN', taken.id], ...made.map((a): [string, string] => [a.body.ident, a.body.id])]),
    )
    expect(await eventsByObject(w.accountId, since)).toEqual(
      new Map(made.map((a) => [a.body.id, ['operator.created']])),
    )
  })

  it('overlapping sessions: the others are created, the overlapping ones refused with nothing written', async () => {
    const w = await world(t)
    const [ann, bob, cid, dan] = [
      await w.operator(),
      await w.operator(),
      await w.operator(),
      await w.operator(),
    ]
    await w.session(ann, '2026-03-02T08:00:00Z', '2026-03-02T16:00:00Z')
    const since = await lastEventId(w.accountId)
    const body = (operator: Operator, from: string, to: string) => ({
      operator_id: operator.id,
      device_id: 'GATE',
      check_in: { time: `2026-03-02T${from}:00Z` },
      check_out: { time: `2026-03-02T${to}:00Z` },
    })
    const bodies = [
      body(bob, '08:00', '12:00'),
      // Overlaps the session Ann has had since before.
      body(ann, '15:00', '18:00'),
      body(cid, '08:00', '12:00'),
      // Two sessions of Dan that overlap each other, in the same burst: one of them wins.
      body(dan, '08:00', '12:00'),
      body(dan, '11:00', '13:00'),
      body(bob, '13:00', '17:00'),
    ]
    const answers = await together(bodies.map((b) => () => w.root.post<Session>('/v1/sessions', b)))
    const statuses = answers.map((a) => a.status)
    expect([statuses[0], statuses[1], statuses[2], statuses[5]]).toEqual([201, 409, 201, 201])
    expect([statuses[3], statuses[4]].sort()).toEqual([201, 409])
    for (const refused of answers.filter((a) => a.status !== 201)) {
      expectError(refused as ApiResponse, 409, 'conflict', 'overlapping_session')
    }
    const made = answers.filter((a) => a.status === 201).map((a) => a.body)

    const rows = await t.db
      .selectFrom('sessions')
      .select(['id', 'operator_id', 'check_in_at'])
      .where('account_id', '=', w.accountId)
      .orderBy('id')
      .execute()
    expect(rows.filter((r) => r.operator_id === ann.id)).toHaveLength(1)
    expect(rows.filter((r) => r.operator_id !== ann.id).map((r) => r.id)).toEqual(
      made.map((s) => s.id).sort(),
    )
    const revisions = await t.db
      .selectFrom('session_revisions')
      .select('session_id')
      .where(
        'session_id',
        'in',
        made.map((s) => s.id),
      )
      .execute()
    expect(revisions).toHaveLength(made.length)
    expect(await eventsByObject(w.accountId, since)).toEqual(
      new Map(made.map((s) => [s.id, ['session.completed', 'session.flagged']])),
    )
  })

  it('a keyed create refused: its stored refusal is kept, its writes are not, the others are intact', async () => {
    const w = await world(t)
    await w.operator({ ident: 'TAKEN' })
    const since = await lastEventId(w.accountId)
    const idents = ['K-1', 'TAKEN', 'K-2', 'K-3']
    const keyOf = (ident: string) => ({ 'idempotency-key': `group-${w.accountId}-${ident}` })
    // The refusal commits too: its stored answer is a member of the group.
    const answers = await together(
      idents.map((ident) => () => w.root.post<Operator>('/v1/operators', { ident }, keyOf(ident))),
      1,
    )
    expect(answers.map((a) => a.status)).toEqual([201, 409, 201, 201])
    const made = answers.filter((a) => a.status === 201).map((a) => a.body)

    // The refusal was committed with its key (on SQLite inside the group, its create's writes
    // undone to the idempotency savepoint): the same request is answered the same, from the key.
    const replay = await w.root.post('/v1/operators', { ident: 'TAKEN' }, keyOf('TAKEN'))
    expectError(replay, 409, 'conflict', 'duplicate_ident')
    expect(replay.headers['idempotent-replayed']).toBe('true')
    for (const [i, ident] of idents.entries()) {
      const again = await w.root.post<Operator>('/v1/operators', { ident }, keyOf(ident))
      expect(again.status).toBe(answers[i]?.status)
      if (again.status === 201) expect(again.body).toEqual(answers[i]?.body)
    }

    const operators = await t.db
      .selectFrom('operators')
      .select('ident')
      .where('account_id', '=', w.accountId)
      .execute()
    expect(operators.map((o) => o.ident).sort()).toEqual(['K-1', 'K-2', 'K-3', 'TAKEN'])
    expect(await eventsByObject(w.accountId, since)).toEqual(
      new Map(made.map((o) => [o.id, ['operator.created']])),
    )
  })
})

/**
 * Two apps on one database, as two API processes would be. On SQLite both are connections of this
 * one process: while one's group holds the file's write lock until the event loop's next turn, the
 * other must wait for it in the event loop (the driver's FileWriteLock), not in SQLite's
 * busy_timeout, which would stop the loop and with it the COMMIT it waits for (each such request
 * stalled 5 s, then failed with SQLITE_BUSY).
 */
describe('two apps on one database', () => {
  let first: TestApp
  let second: TestApp

  beforeAll(async () => {
    first = await buildTestApp()
    second = await buildTestApp({}, { database: first.database })
  })
  afterAll(async () => {
    await second.app.close()
    await first.close()
  })

  it('creates through both at once: every one answered at once, a duplicate refused, nothing lost', async () => {
    const w = await world(first)
    await w.operator({ ident: 'TAKEN' })
    const apis = [w.root, second.client(w.admin.secret)]
    const idents = Array.from({ length: 16 }, (_, i) => (i === 9 ? 'TAKEN' : `T-${i}`))
    const answers = await Promise.all(
      idents.map((ident, i) => (apis[i % 2] ?? w.root).post<Operator>('/v1/operators', { ident })),
    )
    // A request that waited in busy_timeout would have stopped the event loop, and with it the
    // COMMIT it waited for: it would fail with SQLITE_BUSY once the timeout ran out, not answer 201.
    expect(answers.map((a) => a.status)).toEqual(idents.map((_, i) => (i === 9 ? 409 : 201)))
    const rows = await second.db
      .selectFrom('operators')
      .select('ident')
      .where('account_id', '=', w.accountId)
      .execute()
    expect(rows.map((r) => r.ident).sort()).toEqual([...new Set(idents)].sort())
    const created = (await eventsOf(first, w.accountId)).filter((e) => e.type === 'operator.created')
    expect(created).toHaveLength(rows.length)
  })

  it('a transaction kept open on one: the other waits for its end, and the event loop goes on', async () => {
    const w = await world(first)
    const held = await first.db.startTransaction().execute()
    try {
      await held
        .insertInto('settings')
        .values({ name: `held-${w.accountId}`, value: 'x' })
        .execute()
      const api = second.client(w.admin.secret)
      let answered = false
      const waiting = api.post('/v1/operators', { ident: 'WAITS' }).finally(() => {
        answered = true
      })
      // The event loop goes on meanwhile: the other app answers a read.
      expect((await api.get('/v1/operators?limit=1')).status).toBe(200)
      // On SQLite the create waits for the file's write lock, which the open transaction holds, so
      // it cannot have been answered yet. (On PostgreSQL it touches no row the transaction holds.)
      if (dialect === 'sqlite') expect(answered).toBe(false)
      await held.commit().execute()
      // The other app answers once the transaction ends (here: commits).
      await created(waiting)
    } catch (error) {
      await held.rollback().execute()
      throw error
    }
  })
})

const snapshot = (stats: GroupCommitStats | undefined) => ({
  commits: stats?.commits ?? 0,
  transactions: stats?.transactions ?? 0,
})
