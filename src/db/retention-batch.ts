import { expressionBuilder, type SelectQueryBuilder } from 'kysely'
import { supportsRowLocks } from './connection.js'
import type { Trx } from './types.js'

/** A row's place in (created_at, id) order: where a retention walk's next batch starts. */
export interface RetentionKey {
  created_at: number
  id: string
}

/** Which batch: rows created before `before`, after `after` (none for the first), `limit` at most. */
export interface RetentionBatch {
  before: number
  after: RetentionKey | undefined
  limit: number
}

/** The columns every table a retention walk deletes from has (the walk's order and its keys). */
const keys = expressionBuilder<{ walked: RetentionKey }, 'walked'>()

/**
 * Retention's next batch of a table: of the rows `rows` selects (the caller's table, its key columns
 * and the rows it may delete), the next `limit` created before `before`, in (created_at, id) order
 * after `after` (the last row of the previous batch), along the table's created_at index. On
 * PostgreSQL the rows are locked, skipping those another transaction holds, so several workers'
 * retention passes share the rows rather than wait on (or deadlock over) each other's; SQLite's write
 * transactions run one at a time and need no lock.
 */
export function lockRetentionBatch<DB, TB extends keyof DB, O extends RetentionKey>(
  trx: Trx,
  rows: SelectQueryBuilder<DB, TB, O>,
  batch: RetentionBatch,
): Promise<O[]> {
  const { before, after, limit } = batch
  return rows
    .where(keys('created_at', '<', before))
    .$if(after !== undefined, (q) =>
      q.where(
        keys(keys.refTuple('created_at', 'id'), '>', keys.tuple(after?.created_at ?? 0, after?.id ?? '')),
      ),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .$if(supportsRowLocks(trx), (q) => q.forUpdate().skipLocked())
    .execute()
}
