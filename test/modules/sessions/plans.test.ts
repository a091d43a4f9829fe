import { describe, expect, it } from 'vitest'
import type { AuthContext } from '../../../src/core/identity.js'
import {
  filteredSessionsQuery,
  type SessionFilters,
  type SessionPageStart,
} from '../../../src/modules/sessions/repository.js'
import { dialect, useMigratedDatabase } from '../../helpers/database.js'

const auth: AuthContext = {
  principalId: 'key_plan',
  locationIds: null,
  accountId: 'acct_plan',
  livemode: false,
}

/**
 * The indexes a filtered session list reads on SQLite, which plans without statistics (the service
 * never runs ANALYZE), so the plan follows from the SQL and the indexes alone.
 */
describe.skipIf(dialect !== 'sqlite')('session list plans on SQLite', () => {
  const database = useMigratedDatabase()

  const plan = async (
    filters: SessionFilters,
    start: SessionPageStart = { order: 'created', beforeId: undefined },
  ) => {
    const { db } = database
    const query = filteredSessionsQuery(db, auth, filters, start, 51).compile()
    const rows = await db.executeQuery<{ detail: string }>({
      ...query,
      sql: `explain query plan ${query.sql}`,
    })
    return rows.rows.map((row) => row.detail).join('\n')
  }

  it('reads open sessions through their partial index, newest first, without a sort', async () => {
    const open = await plan({ status: 'open' })
    expect(open).toMatch(/USING INDEX sessions_open \(account_id=\? AND livemode=\?\)/)
    expect(open).not.toMatch(/TEMP B-TREE/)
  })

  it('reads completed sessions newest first through the list index', async () => {
    const completed = await plan({ status: 'completed' })
    expect(completed).toMatch(/USING INDEX sessions_scope \(account_id=\? AND livemode=\?\)/)
    expect(completed).not.toMatch(/TEMP B-TREE/)
  })

  // The service filters an operator's sessions by both its id and its ident (listSessions).
  const operator = { operator_id: 'op_1', operator_ident: 'W-1' }

  it("reads an operator's sessions newest first through the operator's index, without a sort", async () => {
    for (const beforeId of [undefined, 'ses_2']) {
      const read = await plan(operator, { order: 'created', beforeId })
      expect(read).toMatch(
        /USING INDEX sessions_operator_id \(account_id=\? AND livemode=\? AND operator_id=\?/,
      )
      expect(read).not.toMatch(/TEMP B-TREE/)
    }
  })

  it('reads by work date through an index in work-date order, sorting only the ties of one date by id', async () => {
    const after = ['2026-11-13', 'ses_2'] as [string, string]
    for (const [filters, index] of [
      [
        { review_status: 'pending' },
        /USING INDEX sessions_review \(account_id=\? AND livemode=\? AND review_status=\? AND work_date>\?\)/,
      ],
      [{}, /USING INDEX sessions_work_date \(account_id=\? AND livemode=\? AND work_date>\?\)/],
      [
        operator,
        /USING INDEX sessions_timesheet \(account_id=\? AND livemode=\? AND operator_ident=\? AND work_date>\?\)/,
      ],
    ] as const) {
      const read = await plan(filters, { order: 'work_date', after })
      expect(read).toMatch(index)
      expect(read).toMatch(/USE TEMP B-TREE FOR LAST TERM OF ORDER BY/)
      expect(read).not.toMatch(/TEMP B-TREE FOR ORDER BY/)
    }
  })
})
