import type { Database } from '../../src/db/schema.js'
import type { Db } from '../../src/db/types.js'

/**
 * How many rows `table` holds, on either database (PostgreSQL answers a count as a string). Plain
 * Kysely and no vitest, so the benches count with it too (bench/retention.ts).
 */
export async function rowCount(db: Db, table: keyof Database): Promise<number> {
  const counted = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(counted.n)
}
