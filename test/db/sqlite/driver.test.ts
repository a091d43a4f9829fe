import { Kysely, sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { SQLite } from '../../../src/db/sqlite/addon.js'
import { ServiceSqliteDialect, type ServiceSqliteDriver } from '../../../src/db/sqlite/driver.js'
import { dialect } from '../../helpers/database.js'

interface Db {
  items: { id: number; name: string }
}

/** The driver does not depend on the database under test: it runs once, in the SQLite project. */
describe.skipIf(dialect !== 'sqlite')('the SQLite driver', () => {
  const opened: Kysely<Db>[] = []
  afterEach(async () => {
    for (const db of opened.splice(0)) await db.destroy()
  })

  async function open(statementCacheSize?: number) {
    const sqlite = new SQLite(':memory:')
    let driver: ServiceSqliteDriver | undefined
    const dialect = new ServiceSqliteDialect({ database: sqlite, statementCacheSize })
    const create = dialect.createDriver.bind(dialect)
    dialect.createDriver = () => {
      driver = create() as ServiceSqliteDriver
      return driver
    }
    const db = new Kysely<Db>({ dialect })
    opened.push(db)
    await sql`create table items (id integer primary key, name text not null)`.execute(db)
    if (!driver) throw new Error('no driver')
    return { db, sqlite, cache: driver.statements }
  }

  describe('through Kysely', () => {
    it('runs the same query with new parameters on the cached statement', async () => {
      const { db, cache } = await open()
      for (let id = 1; id <= 20; id++)
        await db
          .insertInto('items')
          .values({ id, name: `item ${id}` })
          .execute()
      const misses = cache.misses
      for (let id = 1; id <= 20; id++) {
        const row = await db.selectFrom('items').selectAll().where('id', '=', id).executeTakeFirst()
        expect(row).toEqual({ id, name: `item ${id}` })
      }
      // One new statement for the 20 selects.
      expect(cache.misses - misses).toBe(1)
      const updated = await db.updateTable('items').set({ name: 'x' }).where('id', '<=', 5).executeTakeFirst()
      expect(updated.numUpdatedRows).toBe(5n)
    })

    it('commits, rolls back and uses savepoints, with BEGIN IMMEDIATE', async () => {
      const { db, sqlite } = await open()
      await db.transaction().execute(async (trx) => {
        // BEGIN IMMEDIATE holds the write lock from the start.
        expect(sqlite.inTransaction).toBe(true)
        await trx.insertInto('items').values({ id: 1, name: 'kept' }).execute()
      })
      await expect(
        db.transaction().execute(async (trx) => {
          await trx.insertInto('items').values({ id: 2, name: 'rolled back' }).execute()
          throw new Error('no')
        }),
      ).rejects.toThrow('no')
      const trx = await db.startTransaction().execute()
      await trx.insertInto('items').values({ id: 3, name: 'outer' }).execute()
      const inner = await trx.savepoint('inner "one"').execute()
      await inner.insertInto('items').values({ id: 4, name: 'inner' }).execute()
      await inner.rollbackToSavepoint('inner "one"').execute()
      const second = await trx.savepoint('second').execute()
      await second.insertInto('items').values({ id: 5, name: 'second' }).execute()
      await second.releaseSavepoint('second').execute()
      await trx.commit().execute()
      const ids = await db.selectFrom('items').select('id').orderBy('id').execute()
      expect(ids.map((r) => r.id)).toEqual([1, 3, 5])
    })

    it('streams a query on a statement of its own, leaving the cached one alone', async () => {
      const { db } = await open()
      for (let id = 1; id <= 5; id++)
        await db
          .insertInto('items')
          .values({ id, name: `n${id}` })
          .execute()
      const query = db.selectFrom('items').select('id').orderBy('id')
      await query.execute() // cached
      const streamed: number[] = []
      // A stream left half-way leaves its statement mid-iteration: it must not be the cached one.
      for await (const row of query.stream()) {
        streamed.push(row.id)
        if (row.id === 2) break
      }
      expect(streamed).toEqual([1, 2])
      expect((await query.execute()).map((r) => r.id)).toEqual([1, 2, 3, 4, 5])
    })

    it('sees a schema change made after a statement was cached', async () => {
      const { db } = await open()
      await db.insertInto('items').values({ id: 1, name: 'a' }).execute()
      const all = () => db.selectFrom('items').selectAll().execute()
      expect(await all()).toEqual([{ id: 1, name: 'a' }])
      await sql`alter table items add column extra text not null default 'x'`.execute(db)
      expect(await all()).toEqual([{ id: 1, name: 'a', extra: 'x' }])
    })

    it('stays bounded under many distinct statements', async () => {
      const { db, cache } = await open(8)
      for (let n = 1; n <= 50; n++) {
        const ids = Array.from({ length: n }, (_, i) => i)
        await db.selectFrom('items').select('id').where('id', 'in', ids).execute()
      }
      expect(cache.size).toBe(8)
    })
  })
})
