import { type ApiError, errors } from '../../core/errors.js'
import { type AuthContext, seesLocation } from '../../core/identity.js'
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
  /**
   * Where the object is, for objects that happen at a location (a device's, a location itself):
   * one at a location the principal does not see is unknown to it, as if it did not exist.
   */
  locationOf?: (row: Row) => string | null
}

/**
 * Resolves a reference to the caller's object, as the spec's reference table says: 422 `unknown_*`,
 * `ambiguous_*` when it names several, `cross_mode_reference` when it exists only in the other mode
 * of this account (another account's objects are simply unknown).
 */
export async function resolveReference<Row>(auth: AuthContext, reference: Reference<Row>): Promise<Row> {
  const { param, value, locationOf } = reference
  // A principal held to sites sees only what is at its locations, in either mode: what is elsewhere
  // is neither named nor counted (a name shared with a location it cannot see is not ambiguous).
  const lookup = async (owner: Owner) => {
    const rows = await reference.lookup(owner)
    return locationOf === undefined ? rows : rows.filter((row) => seesLocation(auth, locationOf(row)))
  }
  const [first, second] = await lookup(ownedBy(auth))
  if (first && second && reference.ambiguous) throw reference.ambiguous(param, value)
  if (first) {
    reference.check?.(first)
    return first
  }
  if ((await lookup(otherModeOf(auth))).length > 0) {
    throw errors.crossModeReference(param, reference.resource, value)
  }
  throw reference.unknown(param, value)
}
