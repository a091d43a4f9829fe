import type { AuthContext } from '../core/identity.js'
import { type Flag, toFlag } from './schema.js'

/** An account and mode: what every owned row belongs to. */
export interface Owner {
  account_id: string
  livemode: Flag
}

/**
 * The account-and-mode predicate every owned row is read with: `.where((eb) => eb.and(ownedBy(auth)))`.
 * No query of an owned table goes without it.
 */
export function ownedBy(auth: AuthContext): Owner {
  return { account_id: auth.accountId, livemode: toFlag(auth.livemode) }
}

/** The same account in the other mode: where a `cross_mode_reference` is looked for. */
export function otherModeOf(auth: AuthContext): Owner {
  return { account_id: auth.accountId, livemode: toFlag(!auth.livemode) }
}
