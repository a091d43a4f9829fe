import type { Executor } from '../../db/types.js'

/** The names of these people (by primary key; an id that names nobody is absent). */
export async function findUserNames(db: Executor, ids: readonly string[]) {
  return db.selectFrom('users').select(['id', 'name']).where('id', 'in', ids).execute()
}
