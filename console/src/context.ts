import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type {
  AttendanceClient,
  AuthSession,
  Location,
  Mode,
  Operator,
  Role,
} from '../../packages/client/src/client.js'
import type { Can } from './access.js'
import type { Directory } from './directory.js'

export type SessionAccount = AuthSession['accounts'][number]

/** Who the console works for: an integrator's pasted key, or a signed-in person in one of their accounts. */
export type Who =
  | { kind: 'key' }
  | {
      kind: 'person'
      user: AuthSession['user']
      /** The account the console shows, and the person's role in it. */
      account: SessionAccount
      role: Role
      /** Every account the person is active in (a menu when there are several). */
      accounts: readonly SessionAccount[]
      chooseMode: (mode: Mode) => void
      chooseAccount: (accountId: string) => void
    }

export interface SignedIn {
  api: AttendanceClient
  mode: Mode
  who: Who
  /** Whether to offer what needs `scope` (access.ts). */
  can: Can
  locations: Directory<Location>
  operators: Directory<Operator>
  signOut: () => void
}

export const SignedInContext = createContext<SignedIn | undefined>(undefined)

/** The signed-in API, mode and principal; pages are only rendered once signed in. */
export function useSignedIn(): SignedIn {
  const signedIn = useContext(SignedInContext)
  if (!signedIn) throw new Error('useSignedIn outside a signed-in page')
  return signedIn
}
