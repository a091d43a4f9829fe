/**
 * Who is calling: every query of a request is scoped by `accountId` and `livemode`, and, for a
 * principal held to sites, by `locationIds`.
 */
export interface AuthContext {
  /**
   * The principal: an API key's id (`key_`), a device key's, or the signed-in person's (`usr_`).
   * What a revision's `key_id`, a review's `reviewed_by` and an idempotency key's scope record.
   */
  principalId: string
  accountId: string
  livemode: boolean
  /** A device key's device (its id): such a caller scans at that device and reads it, no more. */
  deviceId?: string
  /**
   * The locations the principal is held to (a membership's or a key's `location_ids`); null: every
   * location. Never empty.
   */
  locationIds: readonly string[] | null
  /** A signed-in person's worker record in this account: what they may not approve (`self_approval`). */
  operatorId?: string | null
}

/** Whether the principal may see what happens at `locationId` (null: no location, seen only by an unrestricted one). */
export function seesLocation(auth: Pick<AuthContext, 'locationIds'>, locationId: string | null): boolean {
  if (auth.locationIds === null) return true
  return locationId !== null && auth.locationIds.includes(locationId)
}
