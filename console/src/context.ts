import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { AttendanceClient, Location, Mode, Operator } from '../../packages/client/src/client.js'
import type { Directory } from './directory.js'

export interface SignedIn {
  api: AttendanceClient
  mode: Mode
  locations: Directory<Location>
  operators: Directory<Operator>
  signOut: () => void
}

export const SignedInContext = createContext<SignedIn | undefined>(undefined)

/** The signed-in key's API and mode; pages are only rendered once signed in. */
export function useSignedIn(): SignedIn {
  const signedIn = useContext(SignedInContext)
  if (!signedIn) throw new Error('useSignedIn outside a signed-in page')
  return signedIn
}
