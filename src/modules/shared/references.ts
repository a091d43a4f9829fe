import { type ApiError, errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { type Owner, otherModeOf, ownedBy } from '../../db/scope.js'

/** One reference of a request body to another object: `operator_id`, `device_id` (a code), `location_name`. */
export interface Reference<Row> {
  /** As `cross_mode_reference` messages name it: `operator`. */
  resource: string
  param: string
  value: string
  /** The rows of an account and mode that the reference names (two are enough to be ambiguous). */
  lookup: (owner: Owner) => Promise<Row[]>
  unknown: (param: string, value: string) => ApiError
  /** For references that need not be unique (a location's name). */
  ambiguous?: (param: string, value: string) => ApiError
  /** Throws when another param of the request names a different object (`operator_ident` beside `operator_id`). */
  check?: (row: Row) => void
}

/**
 * Resolves a reference to the caller's object, as the spec's reference table says: 422 `unknown_*`,
 * `ambiguous_*` when it names several, `cross_mode_reference` when it exists only in the other mode
 * of this account (another account's objects are simply unknown).
 */
export async function resolveReference<Row>(auth: AuthContext, reference: Reference<Row>): Promise<Row> {
  const { param, value } = reference
  const [first, second] = await reference.lookup(ownedBy(auth))
  if (first && second && reference.ambiguous) throw reference.ambiguous(param, value)
  if (first) {
    reference.check?.(first)
    return first
  }
  if ((await reference.lookup(otherModeOf(auth))).length > 0) {
    throw errors.crossModeReference(param, reference.resource, value)
  }
  throw reference.unknown(param, value)
}
