import { sql } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../../src/db/types.js'
import { dialect, useMigratedDatabase } from '../helpers/database.js'
import { statementsDuring } from './pg-statements.js'

// Named prepared statements exist on PostgreSQL only (src/db/postgres-prepared.ts).
describe.runIf(dialect === 'postgres')('named prepared statements on PostgreSQL', () => {
  const database = useMigratedDatabase()
  let db: Db
  beforeAll(() => {
    db = database.db
  })

  /** The statements prepared on the connection `run` is given, by their text. */
  async function preparedOn(connection: Db): Promise<string[]> {
    const { rows } = await sql<{ statement: string }>`
      select statement from pg_prepared_statements order by statement`.execute(connection)
    return rows.map((row) => row.statement)
  }

  it('prepares a statement with parameters once on a connection and runs it again by name', async () => {
    await db.connection().execute(async (connection) => {
      for (const ident of ['A-1', 'A-2', 'A-3']) {
        await connection.selectFrom('operators').select('id').where('ident', '=', ident).execute()
      }
      const lookUp = 'select "id" from "operators" where "ident" = $1'
      expect((await preparedOn(connection)).filter((statement) => statement === lookUp)).toEqual([lookUp])
    })
  })

  it('writes a LIMIT into the statement, so that PostgreSQL keeps its generic plan after the first runs', async () => {
    await db.connection().execute(async (connection) => {
      const page = () =>
        connection
          .selectFrom('sessions')
          .selectAll()
          .where('account_id', '=', 'acct_prepared')
          .where('livemode', '=', 0)
          .where('deleted_at', 'is', null)
          .where('id', '<', '~')
          .orderBy('id', 'desc')
          .limit(51)
      expect(page().compile().sql).toMatch(/ limit 51$/)
      for (let run = 0; run < 8; run++) await page().execute()
      const { rows } = await sql<{ generic_plans: number; custom_plans: number }>`
        select generic_plans, custom_plans from pg_prepared_statements
        where statement = ${page().compile().sql}`.execute(connection)
      // PostgreSQL plans the first five runs with their values, then compares: the generic plan won.
      expect(rows).toEqual([{ generic_plans: 3, custom_plans: 5 }])
    })
  })

  it('sends what has no parameters as it is, unprepared', async () => {
    await db.connection().execute(async (connection) => {
      await sql`select 1 as one`.execute(connection)
      expect(
        (await preparedOn(connection)).filter((statement) => statement.includes('select 1 as one')),
      ).toEqual([])
    })
  })

  it('runs the same SQL and results as before: the statements sent are the texts Kysely compiled', async () => {
    const sent = await statementsDuring(() =>
      db.selectFrom('operators').select('id').where('ident', '=', 'B-1').execute(),
    )
    expect(sent.map((s) => s.sql)).toEqual(['select "id" from "operators" where "ident" = $1'])
  })

  it('after a migration changes a prepared statement’s result, fails it once on that connection, then prepares it afresh', async () => {
    await sql`create table prepared_probe (id text primary key)`.execute(db)
    await sql`insert into prepared_probe values ('one')`.execute(db)
    await db.connection().execute(async (connection) => {
      const probe = () =>
        sql<Record<string, unknown>>`select * from prepared_probe where id = ${'one'}`.execute(connection)
      expect((await probe()).rows).toEqual([{ id: 'one' }])
      // What an expanding migration of a newer release does while this process runs.
      await sql`alter table prepared_probe add column note text`.execute(connection)
      await expect(probe()).rejects.toMatchObject({ code: '0A000' })
      expect((await probe()).rows).toEqual([{ id: 'one', note: null }])
      expect((await probe()).rows).toEqual([{ id: 'one', note: null }])
    })
  })
})
