import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Kysely, sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { SQLite } from '../../../src/db/sqlite/addon.js'
import { ServiceSqliteDialect } from '../../../src/db/sqlite/driver.js'
import { dialect } from '../../helpers/database.js'

interface Db {
  items: { id: number; body: string; parent: number | null }
}

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

function newFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-group-'))
  dirs.push(dir)
  return path.join(dir, 'db.sqlite')
}

/** A connection of this process to `file`, as the service opens one (busy_timeout aside). */
function connect(file: string, maxTransactions: number, busyTimeoutMs = 5000) {
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`)
  const dialect = new ServiceSqliteDialect({ database: sqlite, groupCommit: { maxTransactions } })
  return { db: new Kysely<Db>({ dialect }), stats: dialect.groupCommits }
}

async function open(maxTransactions = 16) {
  const file = newFile()
  const { db, stats } = connect(file, maxTransactions)
  await sql`create table items (id integer primary key, body text not null unique,
    parent integer references items (id) deferrable initially deferred)`.execute(db)
  // Another connection sees only what is committed.
  const reader = new SQLite(file, { readonly: true })
  const committed = () =>
    (reader.prepare('select id from items order by id').all() as Array<{ id: number }>).map((r) => r.id)
  const close = async () => {
    reader.close()
    await db.destroy()
  }
  return { db, stats, committed, close, file }
}

const insert = (db: Kysely<Db>, id: number, body = `item ${id}`, parent: number | null = null) =>
  db.insertInto('items').values({ id, body, parent }).execute()

/** Group commit is SQLite's (driver-level): these run once, in the SQLite project. */
describe.skipIf(dialect !== 'sqlite')('group commit (SQLite)', () => {
  it('commits transactions queued together in fewer COMMITs, each answered only once committed', async () => {
    const { db, stats, committed, close } = await open()
    const seenCommitted: boolean[] = []
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        db
          .transaction()
          .execute(async (trx) => {
            await insert(trx, i + 1)
            await trx
              .selectFrom('items')
              .select('id')
              .where('id', '=', i + 1)
              .execute()
          })
          .then(() => seenCommitted.push(committed().includes(i + 1))),
      ),
    )
    expect(seenCommitted).toHaveLength(40)
    expect(seenCommitted.every(Boolean)).toBe(true)
    expect(stats.transactions).toBe(40)
    expect(stats.commits).toBeLessThan(20)
    expect(committed()).toHaveLength(40)
    await close()
  })

  it('a failing transaction in a group leaves the others alone', async () => {
    const { db, committed, close } = await open()
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        db.transaction().execute(async (trx) => {
          await insert(trx, i + 1)
          if (i === 4) throw new Error('refused after writing')
          // A unique violation: the statement fails, its transaction is rolled back.
          if (i === 7) await insert(trx, 100 + i, 'item 1')
        }),
      ),
    )
    expect(outcomes.map((o) => o.status)).toEqual(
      Array.from({ length: 12 }, (_, i) => (i === 4 || i === 7 ? 'rejected' : 'fulfilled')),
    )
    expect(committed()).toEqual([1, 2, 3, 4, 6, 7, 9, 10, 11, 12])
    await close()
  })

  it('a statement outside a transaction first commits the group: it never reads uncommitted work', async () => {
    const { db, committed, close } = await open()
    const writes = Array.from({ length: 8 }, (_, i) => db.transaction().execute((trx) => insert(trx, i + 1)))
    const read = db.selectFrom('items').select('id').execute()
    const [rows] = await Promise.all([read, ...writes])
    const seen = (rows as Array<{ id: number }>).map((r) => r.id)
    expect(seen.length).toBeGreaterThan(0)
    for (const id of seen) expect(committed()).toContain(id)
    await close()
  })

  it('a COMMIT that fails fails every transaction of its group, and the connection goes on', async () => {
    const { db, committed, close } = await open()
    // A deferred foreign key is checked at COMMIT: the whole group's COMMIT fails.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        db.transaction().execute((trx) => insert(trx, i + 1, `item ${i + 1}`, i === 2 ? 999 : null)),
      ),
    )
    const failed = outcomes.filter((o) => o.status === 'rejected')
    expect(failed.length).toBeGreaterThan(0)
    for (const f of failed) expect(String((f as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/)
    const kept = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i + 1] : []))
    expect(committed()).toEqual(kept)
    await db.transaction().execute((trx) => insert(trx, 50))
    expect(committed()).toEqual([...kept, 50])
    await close()
  })

  it('a transaction rolled back in a group is answered after its COMMIT, and fails with it', async () => {
    const { db, committed, close } = await open()
    const outcomes = await Promise.allSettled([
      // A deferred foreign key is checked at COMMIT: the group's COMMIT fails.
      db.transaction().execute((trx) => insert(trx, 1, 'item 1', 999)),
      // A refusal that rests on the row above, which is never committed: it must not be answered
      // as if that row existed.
      db.transaction().execute(async (trx) => {
        const seen = await trx.selectFrom('items').select('id').execute()
        throw new Error(`refused: ${seen.length} item(s) in the way`)
      }),
    ])
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected')
      expect(String((outcome as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/)
    }
    expect(committed()).toEqual([])
    // A refusal in a group that commits is answered with its own error, once the group is committed.
    const [kept, refused] = await Promise.allSettled([
      db.transaction().execute((trx) => insert(trx, 2)),
      db.transaction().execute(async (trx) => {
        await insert(trx, 3, 'item 2')
      }),
    ])
    expect(kept?.status).toBe('fulfilled')
    expect(String((refused as PromiseRejectedResult).reason)).toMatch(/UNIQUE/)
    expect(committed()).toEqual([2])
    await close()
  })

  it('with maxTransactions 1 every transaction commits alone', async () => {
    const { db, stats, close } = await open(1)
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => db.transaction().execute((trx) => insert(trx, i + 1))),
    )
    expect(stats.commits).toBe(0) // groups are not used at all
    await close()
  })

  it('two connections of one process to one file write in turn, waiting in the event loop', async () => {
    const { db, committed, close, file } = await open()
    // A group holds the write lock until the event loop's next turn; the second connection (not
    // grouped, as a test's own handle) must not wait for it in busy_timeout, which would stop the
    // loop that commits the group: before the file's lock, each such write stalled 5 s and failed.
    const other = connect(file, 1).db
    try {
      const started = Date.now()
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 ? db.transaction().execute((trx) => insert(trx, i + 1)) : insert(other, i + 1),
        ),
      )
      expect(Date.now() - started).toBeLessThan(2000)
      expect(committed()).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    } finally {
      await other.destroy()
      await close()
    }
  })

  it("a connection waits for the process's other one as long as busy_timeout, then fails as SQLite would", async () => {
    const { db, committed, close, file } = await open()
    const other = connect(file, 16, 300).db
    const held = await db.startTransaction().execute()
    try {
      await insert(held, 1)
      const started = Date.now()
      let ticks = 0
      const timer = setInterval(() => ticks++, 20)
      const refused = await insert(other, 2).then(
        () => undefined,
        (error: unknown) => error,
      )
      clearInterval(timer)
      expect(refused).toMatchObject({ code: 'SQLITE_BUSY' })
      expect(Date.now() - started).toBeGreaterThanOrEqual(290)
      // The event loop ran meanwhile.
      expect(ticks).toBeGreaterThan(5)
      // Once the other commits, it may write.
      const waiting = other.transaction().execute((trx) => insert(trx, 3))
      await held.commit().execute()
      await waiting
      expect(committed()).toEqual([1, 3])
    } finally {
      await other.destroy()
      await close()
    }
  })
})
