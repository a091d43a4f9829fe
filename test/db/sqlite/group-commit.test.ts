import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Kysely, sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { SQLite } from '../../../src/db/sqlite/addon.js'
import { ServiceSqliteDialect, type ServiceSqliteDriver } from '../../../src/db/sqlite/driver.js'
import { dialect } from '../../helpers/database.js'

interface Db {
  items: { id: number; body: string; parent: number | null }
}

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

async function open(maxTransactions = 16) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-group-'))
  dirs.push(dir)
  const file = path.join(dir, 'db.sqlite')
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('foreign_keys = ON')
  let driver: ServiceSqliteDriver | undefined
  const dialect = new ServiceSqliteDialect({ database: sqlite, groupCommit: { maxTransactions } })
  const create = dialect.createDriver.bind(dialect)
  dialect.createDriver = () => {
    driver = create() as ServiceSqliteDriver
    return driver
  }
  const db = new Kysely<Db>({ dialect })
  await sql`create table items (id integer primary key, body text not null unique,
    parent integer references items (id) deferrable initially deferred)`.execute(db)
  if (!driver) throw new Error('no driver')
  const stats = driver.groupCommits
  // Another connection sees only what is committed.
  const reader = new SQLite(file, { readonly: true })
  const committed = () =>
    (reader.prepare('select id from items order by id').all() as Array<{ id: number }>).map((r) => r.id)
  const close = async () => {
    reader.close()
    await db.destroy()
  }
  return { db, stats, committed, close }
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

  it('with maxTransactions 1 every transaction commits alone', async () => {
    const { db, stats, close } = await open(1)
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => db.transaction().execute((trx) => insert(trx, i + 1))),
    )
    expect(stats.commits).toBe(0) // groups are not used at all
    await close()
  })
})
