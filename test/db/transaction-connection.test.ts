import { beforeAll, describe, expect, it } from 'vitest'
import { connectionOf, savepoint } from '../../src/db/transaction-connection.js'
import type { Db, Trx } from '../../src/db/types.js'
import { useMigratedDatabase } from '../helpers/database.js'
import { insertOperatorRow } from '../helpers/fixtures.js'

/** A transaction's connection, found once, and savepoints set on it: on the database under test. */
describe('transaction connection', () => {
  const database = useMigratedDatabase()
  let db: Db
  beforeAll(() => {
    db = database.db
  })

  const insertOperator = (trx: Trx, ident: string) =>
    insertOperatorRow(trx, { id: `op_tc_${ident}`, account_id: 'acct_transaction_connection', ident })
  const idents = async () =>
    (
      await db
        .selectFrom('operators')
        .select('ident')
        .where('account_id', '=', 'acct_transaction_connection')
        .orderBy('ident')
        .execute()
    ).map((row) => row.ident)

  it('finds one connection per transaction, the same at every ask', async () => {
    await db.transaction().execute(async (trx) => {
      const first = await connectionOf(trx)
      expect(await connectionOf(trx)).toBe(first)
    })
  })

  it('a savepoint rolled back undoes what came after it and keeps what came before, which commits', async () => {
    await db.transaction().execute(async (trx) => {
      await insertOperator(trx, 'before')
      const point = await savepoint(trx, 'before_second')
      await insertOperator(trx, 'after')
      await point.rollback()
      await insertOperator(trx, 'again')
    })
    expect(await idents()).toEqual(['again', 'before'])
  })

  it('refuses a savepoint name that is not plain lower-case letters and underscores', async () => {
    await db.transaction().execute(async (trx) => {
      await expect(savepoint(trx, 'x"; drop table operators; --')).rejects.toThrow(/savepoint name/)
    })
  })
})
