import { randomBytes } from 'node:crypto'
import type { Db } from './types.js'

/**
 * A random secret kept in the database, made on first use: every process sharing the database
 * signs with the same one and it survives restarts, with nothing to configure.
 */
export async function loadSecret(db: Db, name: string): Promise<Buffer> {
  await db
    .insertInto('settings')
    .values({ name, value: randomBytes(32).toString('base64') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
  const row = await db
    .selectFrom('settings')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow()
  return Buffer.from(row.value, 'base64')
}
