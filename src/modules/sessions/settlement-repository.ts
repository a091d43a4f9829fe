import { sql } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { ownedBy } from '../../db/scope.js'
import type { Trx } from '../../db/types.js'

/**
 * Sessions (not deleted) whose work date is in [start, end] and that await review, are still open,
 * or are completed without a check-out and not rejected (closed for an over-long shift: pending, or
 * approved before approving one was refused). A session may be in two counts: pending and without
 * a check-out.
 */
export async function countUnsettledSessions(trx: Trx, auth: AuthContext, start: string, end: string) {
  const withoutCheckOut = sql<boolean>`status = 'completed' and check_out_at is null and review_status != 'rejected'`
  const row = await trx
    .selectFrom('sessions')
    .select([
      sql<number | string>`sum(case when review_status = 'pending' then 1 else 0 end)`.as('pending'),
      sql<number | string>`sum(case when status = 'open' then 1 else 0 end)`.as('open'),
      sql<number | string>`sum(case when ${withoutCheckOut} then 1 else 0 end)`.as('without_check_out'),
    ])
    .where((eb) => eb.and(ownedBy(auth)))
    .where('deleted_at', 'is', null)
    .where('work_date', '>=', start)
    .where('work_date', '<=', end)
    // An open session has no check-out either (and cannot be rejected): the second term holds it.
    .where((eb) =>
      eb.or([
        eb('review_status', '=', 'pending'),
        eb.and([eb('check_out_at', 'is', null), eb('review_status', '!=', 'rejected')]),
      ]),
    )
    .executeTakeFirst()
  return {
    pending: Number(row?.pending ?? 0),
    open: Number(row?.open ?? 0),
    withoutCheckOut: Number(row?.without_check_out ?? 0),
  }
}
