import { type SelectQueryBuilder, sql } from 'kysely'

/**
 * The tail of every list query paged by id (http/pagination.ts's `KeysetFetch`): the rows below
 * `beforeId` (all when undefined), newest first, at most `take`. Applied with `$call`, after the
 * list's own filters: `.$call(newestFirst(beforeId, take)).execute()`. Every owned table's primary
 * key is `id`, so the key is named, not passed.
 */
export function newestFirst(beforeId: string | undefined, take: number) {
  return <DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>) =>
    query
      .$if(beforeId !== undefined, (q) => q.where(sql.ref('id'), '<', beforeId ?? ''))
      .orderBy(sql.ref('id'), 'desc')
      .limit(take)
}

/**
 * A list's `created[gte]` / `created[lt]` filter (epoch milliseconds, either end optional) on the
 * table's `created_at`.
 */
export function createdWithin(range: { createdFrom?: number | undefined; createdTo?: number | undefined }) {
  return <DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>) =>
    query
      .$if(range.createdFrom !== undefined, (q) =>
        q.where(sql.ref('created_at'), '>=', range.createdFrom ?? 0),
      )
      .$if(range.createdTo !== undefined, (q) => q.where(sql.ref('created_at'), '<', range.createdTo ?? 0))
}
