import { AttendanceApiError } from '../../packages/client/src/client.js'
import { useLoad } from './hooks.js'

/**
 * Objects of one resource by id, each fetched once per sign-in: sessions name only their
 * `location_id` and `operator_id`, and the console shows names.
 */
export class Directory<T> {
  private readonly byId = new Map<string, Promise<T | undefined>>()

  constructor(private readonly retrieve: (id: string) => Promise<T>) {}

  /** Undefined when the object was deleted or the key may not read it; other failures are retried next time. */
  get(id: string): Promise<T | undefined> {
    let found = this.byId.get(id)
    if (!found) {
      found = this.retrieve(id).catch((error: unknown) => {
        if (error instanceof AttendanceApiError && (error.status === 404 || error.status === 403))
          return undefined
        this.byId.delete(id)
        throw error
      })
      this.byId.set(id, found)
    }
    return found
  }
}

export interface Known<T> {
  /** Undefined for no id, a deleted object, one the key may not read, or a failed read. */
  value: T | undefined
  /** Whether the answer is in: what depends on it (a time zone) waits rather than shows a guess. */
  ready: boolean
}

export function useKnown<T>(directory: Directory<T>, id: string | null): Known<T> {
  const loaded = useLoad(async () => (id === null ? undefined : directory.get(id)), [directory, id])
  return { value: loaded.value, ready: !loaded.loading }
}
