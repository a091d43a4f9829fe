import type { AuthContext } from '../core/identity.js'
import type { Flag } from './schema.js'

/**
 * The account-and-mode predicate every owned row is read with: `.where((eb) => eb.and(ownedBy(auth)))`.
 * No query of an owned table goes without it.
 */
export function ownedBy(auth: AuthContext): { account_id: string; livemode: Flag } {
  return { account_id: auth.accountId, livemode: auth.livemode ? 1 : 0 }
}

/** The same account in the other mode: where a `cross_mode_reference` is looked for. */
export function otherModeOf(auth: AuthContext): { account_id: string; livemode: Flag } {
  return { account_id: auth.accountId, livemode: auth.livemode ? 0 : 1 }
}
