import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Kysely, sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../src/db/connection.js'
import { SQLite } from '../../../src/db/sqlite/addon.js'
import { ServiceSqliteDialect, type ServiceSqliteDriver } from '../../../src/db/sqlite/driver.js'
import { waitUntil } from '../../helpers/assertions.js'
import { dialect } from '../../helpers/database.js'

interface Db {
  items: { id: number; body: string }
}

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-checkpoint-'))
  dirs.push(dir)
  return path.join(dir, 'db.sqlite')
}

async function open(file: string, options: { intervalMs: number; restartPages: number }) {
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  let driver: ServiceSqliteDriver | undefined
  const dialect = new ServiceSqliteDialect({ database: sqlite, checkpoint: { file, ...options } })
  const create = dialect.createDriver.bind(dialect)
  dialect.createDriver = () => {
    driver = create() as ServiceSqliteDriver
    return driver
  }
  const db = new Kysely<Db>({ dialect })
  await sql`create table items (id integer primary key, body text not null)`.execute(db)
  if (!driver) throw new Error('no driver')
  const stats = () => {
    const stats = driver?.checkpoints
    if (!stats) throw new Error('no checkpointer')
    return stats
  }
  return { db, sqlite, stats }
}

/** Waits until `condition` holds (what it waits for is in the caller's words, `_what`). */
const waitFor = (_what: string, condition: () => boolean) => waitUntil(condition, Boolean)

/** Background checkpoints run on SQLite files only: these tests run once, in the SQLite project. */
describe.skipIf(dialect !== 'sqlite')('background checkpoints (SQLite)', () => {
  it('the service opens a file with automatic checkpoints off; :memory: keeps SQLite’s own', async () => {
    const file = tempFile()
    const { db } = openDatabase(`sqlite:${file}`)
    const setting = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)
    expect(setting.rows).toEqual([{ wal_autocheckpoint: 0 }])
    await db.destroy()

    const memory = openDatabase('sqlite::memory:').db
    const own = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(memory)
    expect(own.rows).toEqual([{ wal_autocheckpoint: 1000 }])
    await memory.destroy()
  })

  it('copies committed pages into the database file in the background, not in the COMMIT', async () => {
    const file = tempFile()
    const { db, stats } = await open(file, { intervalMs: 20, restartPages: 1_000_000 })
    for (let id = 1; id <= 200; id++)
      await db
        .insertInto('items')
        .values({ id, body: 'x'.repeat(500) })
        .execute()
    const passes = stats().passes
    await waitFor('a background pass', () => stats().passes > passes)
    await waitFor(
      'the WAL copied back',
      () => stats().walPages > 0 && stats().checkpointedPages === stats().walPages,
    )
    // Another connection reading the database file alone (the WAL ignored) sees every row.
    const copy = `${file}.copy`
    fs.copyFileSync(file, copy)
    const reader = new SQLite(copy, { readonly: true })
    expect(reader.prepare('select count(*) as n from items').get()).toEqual({ n: 200 })
    reader.close()
    await db.destroy()
  })

  it('keeps the WAL bounded under writes that never pause, the checkpoints all in the thread', async () => {
    const file = tempFile()
    const { db, sqlite, stats } = await open(file, { intervalMs: 10, restartPages: 64 })
    // What the service's own connection prepares: the finish must not be one of them (it holds
    // the connection's writes while the thread checkpoints, and runs nothing on it).
    const prepared: string[] = []
    const prepare = sqlite.prepare.bind(sqlite)
    sqlite.prepare = ((source: string) => {
      prepared.push(source)
      return prepare(source)
    }) as typeof sqlite.prepare
    let maxPages = 0
    const until = Date.now() + 1500
    let id = 0
    while (Date.now() < until) {
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 5; i++)
          await trx
            .insertInto('items')
            .values({ id: ++id, body: 'y'.repeat(300) })
            .execute()
      })
      maxPages = Math.max(maxPages, stats().walPages)
      // Yield now and then, as a server does between requests.
      if (id % 50 === 0) await new Promise((resolve) => setImmediate(resolve))
    }
    expect(stats().finishes).toBeGreaterThan(0)
    expect(prepared.length).toBeGreaterThan(0)
    expect(prepared.filter((source) => /checkpoint/i.test(source))).toEqual([])
    // Far below what 1.5 s of writes fill without restarts (thousands of pages).
    // Each commit appends at least one page to the WAL, so without restarts it would hold at least
    // one page a commit (about two, measured: 33,814 pages after 16,208 commits). Measured with
    // restarts: 436 pages after 6,180 commits on a quiet machine, 998 after 1,889 in a loaded CI
    // run, whose thread got little CPU. An absolute bound (2,000 pages) failed one such run.
    const commits = id / 5
    expect(maxPages).toBeLessThan(commits)
    const rows = await db.selectFrom('items').select(sql<number>`count(*)`.as('n')).executeTakeFirst()
    expect(Number(rows?.n)).toBe(id)
    await db.destroy()
  })

  it('stops its thread on close: the last connection removes the WAL', async () => {
    const file = tempFile()
    const { db, stats } = await open(file, { intervalMs: 10, restartPages: 64 })
    await db.insertInto('items').values({ id: 1, body: 'z' }).execute()
    await waitFor('a background pass', () => stats().passes > 0)
    await db.destroy()
    expect(fs.existsSync(`${file}-wal`)).toBe(false)
    const reopened = new SQLite(file, { readonly: true })
    expect(reopened.prepare('select body from items').all()).toEqual([{ body: 'z' }])
    reopened.close()
  })
})
