import type { Location } from '../../packages/client/src/types.js'
import { type Api, ApiError, pathOf } from './api.js'
import { useSignedIn } from './context.js'
import { useLoad } from './hooks.js'

/**
 * Locations by id, each fetched once per sign-in: sessions name only their `location_id`, and
 * their times are shown in the location's time zone.
 */
export class LocationDirectory {
  private readonly byId = new Map<string, Promise<Location | undefined>>()

  constructor(private readonly api: Api) {}

  /** Undefined when the location was deleted or the key may not read locations. */
  get(id: string): Promise<Location | undefined> {
    let location = this.byId.get(id)
    if (!location) {
      location = this.api.get<Location>(pathOf('/v1/locations', id)).catch((error: unknown) => {
        if (error instanceof ApiError && (error.status === 404 || error.status === 403)) return undefined
        this.byId.delete(id)
        throw error
      })
      this.byId.set(id, location)
    }
    return location
  }
}

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
  const loaded = useLoad(async () => (id === null ? undefined : locations.get(id)), [locations, id])
  return {
    location: loaded.value,
    ready: !loaded.loading,
    timeZone: loaded.value?.timezone ?? 'UTC',
  }
}
