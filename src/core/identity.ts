/** Who is calling: every query of a request is scoped by `accountId` and `livemode`. */
export interface AuthContext {
  keyId: string
  accountId: string
  livemode: boolean
  /** A device key's device (its id): such a caller scans at that device and reads it, no more. */
  deviceId?: string
}
