/** Who is calling: every query of a request is scoped by `accountId` and `livemode`. */
export interface AuthContext {
  keyId: string
  accountId: string
  livemode: boolean
}
