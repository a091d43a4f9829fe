import type { AuthContext } from '../../core/identity.js'
import type { Executor } from '../../db/types.js'
import type { Account } from './schemas.js'

/** The caller's own account (a key's account_id references it), in the caller's mode. */
export async function findOwnAccount(db: Executor, auth: AuthContext): Promise<Account> {
  const row = await db
    .selectFrom('accounts')
    .select(['id', 'name'])
    .where('id', '=', auth.accountId)
    .executeTakeFirstOrThrow()
  return { object: 'account', id: row.id, name: row.name, livemode: auth.livemode }
}
