import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/connection.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { createTestDatabase, dialect } from '../helpers/database.js'

// Other sessions' DDL in other schemas of the same database exists on PostgreSQL only.
describe.runIf(dialect === 'postgres')('migrateToLatest on a shared PostgreSQL database', () => {
  it('succeeds while other sessions create and drop schemas beside it', async () => {
    const base = process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
    const churn = new pg.Client({ connectionString: base })
    await churn.connect()
    let churning = true
    // Another application (or test file) creating and dropping its schemas, far more often than
    // any real one does.
    const other = (async () => {
      for (let i = 0; churning; i++) {
        const schema = `churn_${process.pid}_${i}`
        await churn.query(`create schema ${schema}; create table ${schema}.t (id serial primary key, v text)`)
        await churn.query(`drop schema ${schema} cascade`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    })()
    try {
      for (let run = 0; run < 15; run++) {
        const database = await createTestDatabase()
        const { db } = openDatabase(database.url)
        try {
          expect((await migrateToLatest(db)).length).toBeGreaterThan(0)
        } finally {
          await db.destroy()
          await database.drop()
        }
      }
    } finally {
      churning = false
      await other
      await churn.end()
    }
  }, 120_000)
})
