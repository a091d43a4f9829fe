import type { Location } from '../../packages/client/src/client.js'
import { useSignedIn } from './context.js'
import { useKnown } from './directory.js'

export interface KnownLocation {
  /** Undefined for no location, a deleted one, or one the key may not read. */
  location: Location | undefined
  /** Whether `location` is known yet: times wait for it, rather than showing UTC first. */
  ready: boolean
  /** The zone a session's times are shown in: its location's, else UTC. */
  timeZone: string
}

export function useLocation(id: string | null): KnownLocation {
  const { locations } = useSignedIn()
  const known = useKnown(locations, id)
  return { location: known.value, ready: known.ready, timeZone: known.value?.timezone ?? 'UTC' }
}

/** A location's name where the API gives its id; the id itself when the name cannot be read. */
export function LocationName({ id }: { id: string }) {
  const { location } = useLocation(id)
  return <>{location?.name ?? id}</>
}
