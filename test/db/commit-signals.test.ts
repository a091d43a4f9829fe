import net, { type AddressInfo } from 'node:net'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import {
  type CommitWatch,
  type SignalLog,
  signalOnCommit,
  watchCommits,
} from '../../src/db/commit-signals.js'
import { openDatabase } from '../../src/db/connection.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { Db } from '../../src/db/types.js'
import { installClock } from '../../src/lib/clock.js'
import { uniq, waitUntil } from '../helpers/assertions.js'
import { parked, TestClock } from '../helpers/clock.js'
import { createTestDatabase, dialect, type TestDatabase } from '../helpers/database.js'

/**
 * Commit signals (src/db/commit-signals.ts) on real databases: when a watch is called, how often,
 * and, on PostgreSQL, across handles by NOTIFY/LISTEN, including after the LISTEN connection is
 * killed.
 */

const handles: Db[] = []
const databases: TestDatabase[] = []
const watches: CommitWatch[] = []
afterAll(async () => {
  await Promise.all(watches.splice(0).map((watch) => watch.close()))
  await Promise.all(handles.splice(0).map((db) => db.destroy()))
  for (const database of databases.splice(0)) await database.drop()
})

async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase()
  databases.push(database)
  return database
}

async function open(url: string): Promise<Db> {
  const { db } = openDatabase(url)
  handles.push(db)
  await migrateToLatest(db)
  return db
}

const quietLog: SignalLog = { info: () => {}, error: () => {} }

/**
 * A watch of `events` that counts its calls. On PostgreSQL, once it listens (it looks once when
 * it starts listening, for the commits it could not hear before), counted from zero.
 */
async function counter(db: Db, log: SignalLog = quietLog) {
  // `marks`: calls for webhook_deliveries, on the same LISTEN connection (a test's marker commits).
  const counted = { calls: 0, marks: 0 }
  const watch = watchCommits(
    db,
    { events: () => (counted.calls += 1), webhook_deliveries: () => (counted.marks += 1) },
    log,
  )
  watches.push(watch)
  if (dialect === 'postgres') {
    await until('the LISTEN connection', () => watch.acrossProcesses)
    counted.calls = 0
  }
  return Object.assign(counted, { watch })
}

/** Waits until `condition` holds (what it waits for is in the caller's words, `_what`). */
async function until(_what: string, condition: () => boolean | Promise<boolean>) {
  await waitUntil(condition, Boolean)
}

/** A row of `settings`, written by a transaction that signals `events`. */
async function writeAndSignal(db: Db, name: string, times = 1) {
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < times; i++) await signalOnCommit(trx, 'events')
    await trx.insertInto('settings').values({ name, value: 'x' }).execute()
    // A signal sent too early (before the commit) is an in-process call: a turn of the event loop lets
    // it run now, where the test sees it. PostgreSQL itself delivers a NOTIFY only at the commit.
    await new Promise((resolve) => setImmediate(resolve))
  })
}

describe(`commit signals (${dialect})`, () => {
  it('a watch is called once per transaction, after its commit: a read it starts finds the rows', async () => {
    const db = await open((await freshDatabase()).url)
    const reads: Array<Promise<string | undefined>> = []
    const name = uniq('setting')
    let listening = false
    const watch = watchCommits(
      db,
      {
        events: () =>
          listening &&
          reads.push(
            db
              .selectFrom('settings')
              .select('value')
              .where('name', '=', name)
              .executeTakeFirst()
              .then((row) => row?.value),
          ),
      },
      quietLog,
    )
    watches.push(watch)
    if (dialect === 'postgres') await until('the LISTEN connection', () => watch.acrossProcesses)
    listening = true
    await writeAndSignal(db, name, 3)
    expect(reads).toHaveLength(1)
    expect(await Promise.all(reads)).toEqual(['x'])
  })

  it('a rolled-back transaction signals nothing; a later commit signals again', async () => {
    const db = await open((await freshDatabase()).url)
    const count = await counter(db)
    await expect(
      db.transaction().execute(async (trx) => {
        await signalOnCommit(trx, 'events')
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    // A watch through the committing handle is called at the commit itself (the test above), and a
    // rolled-back transaction sends PostgreSQL no NOTIFY: a call would have been counted by now.
    expect(count.calls).toBe(0)
    await writeAndSignal(db, uniq('setting'))
    expect(count.calls).toBe(1)
  })

  it('a controlled transaction signals at its commit, from inside a savepoint too', async () => {
    const db = await open((await freshDatabase()).url)
    const count = await counter(db)
    const trx = await db.startTransaction().execute()
    const inner = await trx.savepoint('inner').execute()
    await signalOnCommit(inner, 'events')
    await inner.releaseSavepoint('inner').execute()
    expect(count.calls).toBe(0)
    await trx.commit().execute()
    expect(count.calls).toBe(1)
  })

  it('only the tables a watch waits for call it', async () => {
    const { url } = await freshDatabase()
    const db = await open(url)
    const calls: string[] = []
    const watch = watchCommits(db, { events: () => calls.push('events') }, quietLog)
    watches.push(watch)
    if (dialect === 'postgres') {
      // Once it listens, it is called once to look for the commits it could not hear before.
      await until('the LISTEN connection', () => watch.acrossProcesses)
      calls.length = 0
    }
    await db.transaction().execute((trx) => signalOnCommit(trx, 'webhook_deliveries'))
    expect(calls).toEqual([])
    // Then a commit it waits for. On SQLite a watch is called at the commit of its own handle, so the
    // check above was already final. On PostgreSQL it comes from another handle, heard by NOTIFY: a
    // listener gets notifications in commit order, so once it is heard, the first would have been too.
    const writer = dialect === 'postgres' ? await open(url) : db
    await writeAndSignal(writer, uniq('setting'))
    await until('the later commit heard', () => calls.length > 0)
    expect(calls).toEqual(['events'])
  })

  it.runIf(dialect === 'sqlite')(
    'SQLite: another handle on the same file hears nothing (no channel between processes)',
    async () => {
      const { url } = await freshDatabase()
      const writer = await open(url)
      const other = await counter(await open(url))
      await writeAndSignal(writer, uniq('setting'))
      // No channel between handles (acrossProcesses false): nothing can reach it later either.
      expect(other.watch.acrossProcesses).toBe(false)
      expect(other.calls).toBe(0)
    },
  )

  it.runIf(dialect === 'postgres')(
    "PostgreSQL: another handle hears the commit by NOTIFY once it listens; the writer's own watch is called once, and another schema's handle not at all",
    async () => {
      const { url } = await freshDatabase()
      const writer = await open(url)
      const own = await counter(writer)
      const other = await counter(await open(url))
      const elsewhereUrl = (await freshDatabase()).url
      const elsewhere = await counter(await open(elsewhereUrl))
      await writeAndSignal(writer, uniq('setting'))
      await until('the other handle hears it', () => other.calls === 1)
      // The writer's own NOTIFY reaches its own LISTEN connection too, and must not be counted again;
      // the other schema's watch must not hear it at all. Then a marker commit of a third handle on
      // each schema, heard by NOTIFY: a connection gets notifications in commit order, so once each
      // watch has heard its marker, it has had everything the first commit sent it.
      for (const third of [await open(url), await open(elsewhereUrl)])
        await third.transaction().execute((trx) => signalOnCommit(trx, 'webhook_deliveries'))
      await until('the markers heard', () => own.marks === 1 && elsewhere.marks === 1)
      expect([own.calls, other.calls, elsewhere.calls]).toEqual([1, 1, 0])
    },
  )

  it.runIf(dialect === 'postgres')(
    'PostgreSQL: a watch that cannot reach the database says so once, retries with a growing backoff on the clock, and a close ends the wait at once',
    async () => {
      // A port that accepts and hangs up at once: each connection attempt is counted.
      let attempts = 0
      const refuser = net.createServer((socket) => {
        attempts += 1
        socket.destroy()
      })
      await new Promise<void>((resolve) => refuser.listen(0, '127.0.0.1', resolve))
      const unreachable = new URL((await freshDatabase()).url)
      unreachable.port = String((refuser.address() as AddressInfo).port)
      const { db } = openDatabase(unreachable.toString())
      handles.push(db)
      const errors: string[] = []
      const time = new TestClock()
      const restoreClock = installClock(time)
      try {
        const watch = watchCommits(
          db,
          { events: () => {} },
          {
            info: () => {},
            error: (_obj, msg) => {
              errors.push(msg ?? '')
            },
          },
        )
        await parked(time, 1)
        expect(attempts).toBe(1)
        expect(errors).toEqual(['commit signals: cannot LISTEN, polling meanwhile'])
        // The backoff doubles from 100 ms: nothing before it is over, an attempt once it is.
        for (const backoffMs of [100, 200, 400]) {
          const before = attempts
          time.advance(backoffMs - 1)
          expect(time.pending).toBe(1)
          time.advance(1)
          await parked(time, 1)
          expect(attempts).toBe(before + 1)
        }
        expect(errors).toHaveLength(1)
        expect(watch.acrossProcesses).toBe(false)
        // Closed during a backoff: the clock stands still, so close() returns only if it ends the
        // wait itself, and no attempt is left scheduled.
        await watch.close()
        expect(time.pending).toBe(0)
        time.advance(60_000)
        expect(attempts).toBe(4)
      } finally {
        restoreClock()
        await new Promise((resolve) => refuser.close(resolve))
      }
    },
  )

  it.runIf(dialect === 'postgres')(
    'PostgreSQL: a LISTEN connection that is killed is opened again, and signals are heard after it',
    async () => {
      const { url } = await freshDatabase()
      const application = uniq('signals-test')
      const listening = new URL(url)
      listening.searchParams.set('application_name', application)
      const writer = await open(url)
      const errors: unknown[] = []
      const infos: string[] = []
      const watcher = await counter(await open(listening.toString()), {
        info: (_obj, msg) => {
          infos.push(msg ?? '')
        },
        error: (obj) => {
          errors.push(obj)
        },
      })
      const admin = new pg.Client({ connectionString: url })
      await admin.connect()
      const listenerPids = async () =>
        (
          await admin.query<{ pid: number }>(
            `select pid from pg_stat_activity where application_name = $1 and query ilike 'listen%'`,
            [application],
          )
        ).rows.map((r) => r.pid)
      try {
        await until('the LISTEN connection', async () => (await listenerPids()).length === 1)
        const [first] = await listenerPids()
        await admin.query('select pg_terminate_backend($1)', [first])
        await until('the loss noticed', () => errors.length > 0)
        await until(
          'a new LISTEN connection',
          async () => (await listenerPids()).some((pid) => pid !== first) && watcher.watch.acrossProcesses,
        )
        expect(infos).toContain('commit signals: listening again')
        const before = watcher.calls
        await writeAndSignal(writer, uniq('setting'))
        await until('the commit heard on the new connection', () => watcher.calls > before)
      } finally {
        await admin.end()
      }
    },
  )
})
