import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { Location, Operator } from '../../packages/client/src/types.js'
import type { Api } from './api.js'
import type { Directory } from './directory.js'
import type { Mode } from './session-key.js'

export interface SignedIn {
  api: Api
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
