import { beforeAll, describe, expect, it } from 'vitest'
import { compiled, compiledInsertRows, statementChecks } from '../../src/db/compiled.js'
import type { Db, Trx } from '../../src/db/types.js'
import { useMigratedDatabase } from '../helpers/database.js'

/** compiled(): built once per dialect, run with new parameters, on the database under test. */
describe('compiled queries', () => {
  const database = useMigratedDatabase()
  let db: Db
  beforeAll(() => {
    db = database.db
  })

  let builds = 0
  const insert = compiled((db, p: { id: string; ident: string; name: string | null; at: number }) => {
    builds++
    return db.insertInto('operators').values({
      id: p.id,
      account_id: 'acct_compiled',
      livemode: 0,
      ident: p.ident,
      name: p.name,
      employee_id: null,
      is_active: 1,
      created_at: p.at,
      updated_at: p.at,
    })
  })
  const byIdent = compiled((db, p: { ident: string }) =>
    db
      .selectFrom('operators')
      .select(['id', 'ident', 'name', 'is_active'])
      .where('account_id', '=', 'acct_compiled')
      .where('ident', '=', p.ident)
      .limit(1),
  )
  const page = compiled((db, p: { before: string; take: number }) =>
    db
      .selectFrom('operators')
      .select('id')
      .where('account_id', '=', 'acct_compiled')
      .where('id', '<', p.before)
      .orderBy('id', 'desc')
      .limit(p.take),
  )
  const rename = compiled((db, p: { from: string; to: string }) =>
    db
      .updateTable('operators')
      .set({ name: p.to })
      .where('name', '=', p.from)
      .where('account_id', '=', 'acct_compiled'),
  )

  it('builds each query once and runs it with each call’s parameters', async () => {
    for (let n = 1; n <= 5; n++) {
      await insert.run(db, { id: `op_c${n}`, ident: `C-${n}`, name: n % 2 ? 'odd' : null, at: n })
    }
    // Once with stand-ins, once more from the first run's values to confirm the template.
    expect(builds).toBe(2)
    expect(await byIdent.first(db, { ident: 'C-3' })).toEqual({
      id: 'op_c3',
      ident: 'C-3',
      name: 'odd',
      is_active: 1,
    })
    expect(await byIdent.first(db, { ident: 'C-4' })).toEqual({
      id: 'op_c4',
      ident: 'C-4',
      name: null,
      is_active: 1,
    })
    expect(await byIdent.first(db, { ident: 'nobody' })).toBeUndefined()
    expect((await page.rows(db, { before: 'op_c4', take: 2 })).map((r) => r.id)).toEqual(['op_c3', 'op_c2'])
    expect((await page.rows(db, { before: '~', take: 10 })).map((r) => r.id)).toHaveLength(5)
  })

  it('reports rows changed, and runs inside a transaction', async () => {
    const result = await rename.run(db, { from: 'odd', to: 'uneven' })
    expect(result.numAffectedRows).toBe(3n)
    await expect(
      db.transaction().execute(async (trx) => {
        await rename.run(trx, { from: 'uneven', to: 'gone' })
        expect(await byIdent.first(trx, { ident: 'C-1' })).toMatchObject({ name: 'gone' })
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    expect(await byIdent.first(db, { ident: 'C-1' })).toMatchObject({ name: 'uneven' })
  })

  it('runs in a savepoint of a transaction, and refuses a transaction that is over', async () => {
    let ended: Trx | undefined
    await db.transaction().execute(async (trx) => {
      await rename.run(trx, { from: 'uneven', to: 'kept' })
      ended = trx
    })
    const controlled = await db.startTransaction().execute()
    const inner = await controlled.savepoint('inner').execute()
    await rename.run(inner, { from: 'kept', to: 'undone' })
    expect(await byIdent.first(inner, { ident: 'C-1' })).toMatchObject({ name: 'undone' })
    await inner.rollbackToSavepoint('inner').execute()
    expect(await byIdent.first(controlled, { ident: 'C-1' })).toMatchObject({ name: 'kept' })
    await controlled.commit().execute()
    // A transaction kept past its end (a bug in a caller) must not write outside it.
    if (!ended) throw new Error('the transaction did not run')
    await expect(rename.run(ended, { from: 'kept', to: 'stray' })).rejects.toThrow()
    await expect(rename.run(controlled, { from: 'kept', to: 'stray' })).rejects.toThrow()
    expect(await byIdent.first(db, { ident: 'C-1' })).toMatchObject({ name: 'kept' })
  })

  // SQLite prepares a statement again at every run when its LIMIT is bound (src/db/sqlite/driver.ts).
  it('writes a LIMIT into the SQL on both dialects, for compiled and built queries', async () => {
    const compiledPage = page.compile(db, { before: '~', take: 7 })
    const built = db.selectFrom('operators').select('id').where('ident', '=', 'C-1').limit(3).compile()
    expect(compiledPage.sql).toMatch(/ limit 7$/)
    expect(compiledPage.parameters).toEqual(['acct_compiled', '~'])
    expect(built.sql).toMatch(/ limit 3$/)
    expect(built.parameters).toEqual(['C-1'])
    // Each limit gets its own statement, and each answers with its own page size.
    for (const take of [1, 3, 1, 5]) {
      expect(await page.rows(db, { before: '~', take })).toHaveLength(take)
    }
  })

  it('inserts a list of rows in one statement, and takes exactly as many as it was built for', async () => {
    const columns = {
      id: true,
      account_id: true,
      livemode: true,
      ident: true,
      name: true,
      employee_id: true,
      is_active: true,
      created_at: true,
      updated_at: true,
      pay_rule_id: true,
      pin_hash: true,
      pin_failures: true,
      pin_locked_until: true,
      home_location_id: true,
      start_date: true,
      end_date: true,
    } as const
    const insertThree = compiledInsertRows('operators', columns, 3)
    const row = (n: number) => ({
      id: `op_r${n}`,
      account_id: 'acct_compiled',
      livemode: 0 as const,
      ident: `R-${n}`,
      name: null,
      employee_id: `E-${n}`,
      is_active: 1 as const,
      created_at: n,
      updated_at: n,
      pay_rule_id: null,
      pin_hash: null,
      pin_failures: 0,
      pin_locked_until: null,
      home_location_id: null,
      start_date: null,
      end_date: null,
    })
    const query = insertThree.compile(db, [row(1), row(2), row(3)])
    expect(query.parameters).toHaveLength(48)
    expect(query.parameters.slice(16, 32)).toEqual(Object.values(row(2)))
    const result = await insertThree.run(db, [row(1), row(2), row(3)])
    expect(result.numAffectedRows).toBe(3n)
    for (const n of [1, 2, 3]) {
      expect(await byIdent.first(db, { ident: `R-${n}` })).toEqual({
        id: `op_r${n}`,
        ident: `R-${n}`,
        name: null,
        is_active: 1,
      })
    }
    await expect(insertThree.run(db, [row(4), row(5)])).rejects.toThrow(/2 rows given for 3/)
    const missing = { ...row(8), employee_id: undefined } as unknown as ReturnType<typeof row>
    await expect(insertThree.run(db, [row(6), row(7), missing])).rejects.toThrow(
      /parameter 2\.employee_id is undefined/,
    )
    expect(await byIdent.first(db, { ident: 'R-4' })).toBeUndefined()
    expect(await byIdent.first(db, { ident: 'R-6' })).toBeUndefined()
  })

  it('refuses a template that its first run’s values build otherwise: a $if on a value', async () => {
    // A stand-in is always truthy: the template keeps the filter that `active: false` leaves out.
    const frozen = compiled((db, p: { ident: string; active: boolean }) =>
      db
        .selectFrom('operators')
        .select('id')
        .where('ident', '=', p.ident)
        .$if(p.active, (q) => q.where('is_active', '=', 1)),
    )
    await expect(frozen.rows(db, { ident: 'C-1', active: false })).rejects.toThrow(
      /its shape depends on a value/,
    )
    const check = statementChecks().at(-1)
    expect(check?.mismatch).toMatch(/"is_active" = \S+ with .* but its values build .* "ident" = \S+ with/)
    expect(check?.confirmed.size).toBe(0)
    // Arithmetic on a stand-in makes a constant of it: the values differ, the SQL does not.
    const shifted = compiled((db, p: { at: number }) =>
      db
        .selectFrom('operators')
        .select('id')
        .where('created_at', '>', p.at + 1),
    )
    await expect(shifted.rows(db, { at: 1 })).rejects.toThrow(/its shape depends on a value/)
  })

  it('refuses an undefined parameter instead of running other SQL', async () => {
    await expect(byIdent.first(db, { ident: undefined as unknown as string })).rejects.toThrow(
      /parameter ident is undefined/,
    )
  })
})
