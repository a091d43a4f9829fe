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

/** The session's location, or undefined while loading, without one, or unreadable. */
export function useLocation(id: string | null): Location | undefined {
  const { locations } = useSignedIn()
  return useLoad(async () => (id === null ? undefined : locations.get(id)), [locations, id]).value
}
