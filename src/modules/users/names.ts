import type { Executor } from '../../db/types.js'
import { findUserNames } from './names-repository.js'

/**
 * People's names as they are now, by id (`usr_…`; an id that names nobody is absent): what a
 * revision's, a review's or a pay-period close's `actor` shows of a person. One statement for any
 * number of ids.
 */
export async function userNames(db: Executor, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  return new Map((await findUserNames(db, ids)).map((row) => [row.id, row.name]))
}
