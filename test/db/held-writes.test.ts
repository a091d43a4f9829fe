import { sql } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import { compiledInsert } from '../../src/db/compiled.js'
import { holdWrites } from '../../src/db/held-writes.js'
import type { Db, Executor } from '../../src/db/types.js'
import { EVENT_COLUMNS } from '../../src/modules/events/outbox.js'
import { dialect, useMigratedDatabase } from '../helpers/database.js'
import { roundTripsOf, statementsDuring } from './pg-statements.js'

/** Held writes (db/held-writes.ts): PostgreSQL sends them with the next statement; SQLite at once. */
describe('held writes', () => {
  const database = useMigratedDatabase()
  let db: Db
  beforeAll(() => {
    db = database.db
  })

  const ACCOUNT = 'acct_held_writes'
  /** A primary key refusing a row, on either dialect. */
  const DUPLICATE_KEY = /^(23505|SQLITE_CONSTRAINT_PRIMARYKEY)$/
  const insertEvent = compiledInsert('events', EVENT_COLUMNS)
  const event = (id: string) => ({
    id,
    account_id: ACCOUNT,
    livemode: 0 as const,
    type: 'test.held',
    created_at: 1,
    payload: '{}',
    dispatched_at: null,
  })
  const storedIds = async (executor: Executor = db) =>
    (
      await executor
        .selectFrom('events')
        .select('id')
        .where('account_id', '=', ACCOUNT)
        .orderBy('id')
        .execute()
    ).map((row) => row.id)

  it('a statement that reads a held write’s table sees the write: the write is sent first', async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        await holdWrites(trx)
        await insertEvent.run(trx, event('evt_held_read_1'))
        expect(await storedIds(trx)).toContain('evt_held_read_1')
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    expect(await storedIds()).not.toContain('evt_held_read_1')
  })

  it.runIf(dialect === 'postgres')(
    'writes held one after the other go with the next statement of another table, and commit with it',
    async () => {
      let answer: unknown
      const sent = await statementsDuring(() =>
        db.transaction().execute(async (trx) => {
          await holdWrites(trx)
          await insertEvent.run(trx, event('evt_held_carried_1'))
          await insertEvent.run(trx, event('evt_held_carried_2'))
          // A `$1` inside quotes is text, not a parameter: left as it is when the others are renumbered.
          const { rows } = await sql<{
            text: string
            value: string
          }>`select '$1' as text, ${'carried'}::text as value`.execute(trx)
          answer = rows[0]
        }),
      )
      expect(sent.map(({ sql }) => sql.slice(0, 36))).toEqual([
        'begin',
        'with "held_0" as (insert into "event',
        'commit',
      ])
      expect(answer).toEqual({ text: '$1', value: 'carried' })
      expect(await storedIds()).toEqual(expect.arrayContaining(['evt_held_carried_1', 'evt_held_carried_2']))
    },
  )

  it.runIf(dialect === 'postgres')(
    'writes still held at the commit go as one statement, the COMMIT behind it; BEGIN alone before writes',
    async () => {
      const sent = await statementsDuring(() =>
        db.transaction().execute(async (trx) => {
          await holdWrites(trx)
          await insertEvent.run(trx, event('evt_held_commit_1'))
          await insertEvent.run(trx, event('evt_held_commit_2'))
        }),
      )
      expect(sent.map(({ sql, behind }) => [sql.slice(0, 36), behind])).toEqual([
        ['begin', false],
        ['with "held_0" as (insert into "event', false],
        ['commit', true],
      ])
      expect(await storedIds()).toEqual(expect.arrayContaining(['evt_held_commit_1', 'evt_held_commit_2']))
    },
  )

  it.runIf(dialect === 'postgres')(
    'BEGIN goes behind nothing but a read, and a transaction that sent nothing sends no BEGIN or COMMIT',
    async () => {
      const read = await statementsDuring(() =>
        db.transaction().execute((trx) => trx.selectFrom('events').select('id').limit(1).execute()),
      )
      expect(read.map(({ sql, behind }) => [sql.slice(0, 20), behind])).toEqual([
        ['begin', false],
        ['select "id" from "ev', true],
        ['commit', false],
      ])
      expect(roundTripsOf(read)).toBe(2)

      const write = await statementsDuring(() =>
        db.transaction().execute((trx) => insertEvent.run(trx, event('evt_begin_then_write'))),
      )
      expect(write.map(({ sql, behind }) => [sql.slice(0, 20), behind])).toEqual([
        ['begin', false],
        ['insert into "events"', false],
        ['commit', false],
      ])

      expect(await statementsDuring(() => db.transaction().execute(async () => 'nothing'))).toEqual([])
      await expect(
        statementsDuring(() =>
          db.transaction().execute(async () => {
            throw new Error('refused before any statement')
          }),
        ),
      ).rejects.toThrow('refused before any statement')
    },
  )

  it('a transaction rolled back leaves nothing of its held writes', async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        await holdWrites(trx)
        await insertEvent.run(trx, event('evt_held_rollback_1'))
        throw new Error('refused')
      }),
    ).rejects.toThrow('refused')
    expect(await storedIds()).not.toContain('evt_held_rollback_1')
  })

  it('a held write that fails fails its transaction, and nothing the transaction wrote commits', async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        await holdWrites(trx)
        await insertEvent.run(trx, event('evt_held_failing_1'))
        await insertEvent.run(trx, event('evt_held_failing_2'))
        // The same id again: the primary key refuses it (on PostgreSQL, when the writes are sent).
        await insertEvent.run(trx, event('evt_held_failing_1'))
      }),
    ).rejects.toMatchObject({ code: DUPLICATE_KEY })
    const stored = await storedIds()
    expect(stored).not.toContain('evt_held_failing_1')
    expect(stored).not.toContain('evt_held_failing_2')
  })

  it('writes of a transaction that does not hold them run when asked', async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        await insertEvent.run(trx, event('evt_not_held_1'))
        const refused = await insertEvent.run(trx, event('evt_not_held_1')).then(
          () => 'ran',
          (error: { code?: string }) => error.code,
        )
        expect(refused).toMatch(DUPLICATE_KEY)
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
  })
})
