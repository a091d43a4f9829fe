import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Trx } from '../../db/types.js'
import { countUnsettledSessions } from './settlement-repository.js'

/*
 * Whether the sessions of a span of work dates are settled, as a pay period's close requires. Pay
 * periods call it; it imports only its repository and the neutral layers, never the sessions
 * service or lifecycle.ts (which import pay periods: that would be a cycle).
 */

/**
 * 409 `pending_reviews`, with the counts, while a session (not deleted) whose work date is in
 * [start, end] awaits review, is still open, or is completed without a check-out and not rejected.
 */
export async function assertSessionsSettled(
  trx: Trx,
  auth: AuthContext,
  start: string,
  end: string,
): Promise<void> {
  const unsettled = await countUnsettledSessions(trx, auth, start, end)
  if (unsettled.pending > 0 || unsettled.open > 0 || unsettled.withoutCheckOut > 0) {
    throw errors.pendingReviews(unsettled)
  }
}
