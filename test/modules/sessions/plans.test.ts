import { describe, expect, it } from 'vitest'
import type { AuthContext } from '../../../src/core/identity.js'
import { filteredSessionsQuery, type SessionFilters } from '../../../src/modules/sessions/repository.js'
import { dialect, useMigratedDatabase } from '../../helpers/database.js'

const auth: AuthContext = { keyId: 'key_plan', accountId: 'acct_plan', livemode: false }

/**
 * The indexes a filtered session list reads on SQLite, which plans without statistics (the service
 * never runs ANALYZE), so the plan follows from the SQL and the indexes alone.
 */
describe.skipIf(dialect !== 'sqlite')('session list plans on SQLite', () => {
  const database = useMigratedDatabase()

  const plan = async (filters: SessionFilters) => {
    const { db } = database
    const query = filteredSessionsQuery(db, auth, filters, undefined, 51).compile()
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
})
