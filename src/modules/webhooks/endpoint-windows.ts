/**
 * One endpoint gets at most this many concurrent requests, however well it answers, so no
 * receiver is flooded.
 */
export const DEFAULT_MAX_PER_ENDPOINT = 16
/**
 * The window of an endpoint the worker has no verdict on yet (it has not answered, or not
 * lately): a receiver that hangs from the start holds this many slots, not `maxPerEndpoint`.
 */
export const INITIAL_ENDPOINT_WINDOW = 4
/**
 * Windows remembered for endpoints with nothing in hand. Beyond it the oldest are forgotten (that
 * endpoint starts again from the initial window), so memory stays bounded however many endpoints
 * there are, and so does the claim's list of per-endpoint caps.
 */
export const MAX_REMEMBERED_WINDOWS = 500

/** What a claim may take of each endpoint: nothing of some, at most a cap of others. */
export interface ClaimLimits {
  skipEndpoints: string[]
  /** Only the endpoints whose cap is not the initial window (the claim's default). */
  endpointCaps: Map<string, number>
}

/**
 * The per-endpoint concurrency windows of one worker: how many attempts each endpoint may have in
 * flight, adapted to how it answers (additive increase, multiplicative decrease, as TCP does): one
 * more after each 2xx up to `maxPerEndpoint`, halved (at least 1) after each failure or timeout,
 * and INITIAL_ENDPOINT_WINDOW before any verdict. Claims take of each endpoint only what its window
 * can start now and skip endpoints with no room, so failing, hanging or throttling receivers hold
 * a slot or two each, the worker's room stays free for the endpoints that answer, and a fresh
 * delivery to a healthy endpoint is never queued behind the retries of failing ones.
 */
export class EndpointWindows {
  /** The window before any verdict. */
  readonly initial: number
  /** Adapted windows by endpoint (absent: `initial`), least recently adapted first. */
  private readonly windows = new Map<string, number>()

  constructor(
    private readonly maxPerEndpoint: number,
    /** The endpoint's deliveries the worker holds now (being attempted or waiting for room). */
    private readonly held: (endpointId: string) => number,
  ) {
    this.initial = Math.min(INITIAL_ENDPOINT_WINDOW, maxPerEndpoint)
  }

  of(endpointId: string): number {
    return this.windows.get(endpointId) ?? this.initial
  }

  /** What the endpoint's window can take now beyond what the worker already holds of it. */
  free(endpointId: string): number {
    return this.of(endpointId) - this.held(endpointId)
  }

  /** The next claim's limits, over the endpoints held now and those with an adapted window. */
  claimLimits(heldEndpoints: Iterable<string>): ClaimLimits {
    const skipEndpoints: string[] = []
    const endpointCaps = new Map<string, number>()
    for (const id of new Set([...heldEndpoints, ...this.windows.keys()])) {
      const free = this.free(id)
      if (free <= 0) skipEndpoints.push(id)
      else if (free !== this.initial) endpointCaps.set(id, free)
    }
    return { skipEndpoints, endpointCaps }
  }

  /** Widens the endpoint's window by one after a 2xx, halves it after anything else. */
  adapt(endpointId: string, succeeded: boolean): void {
    const current = this.of(endpointId)
    const next = succeeded ? Math.min(this.maxPerEndpoint, current + 1) : Math.max(1, Math.floor(current / 2))
    // Delete first, so the map's order is least recently adapted first: the order to forget in.
    this.windows.delete(endpointId)
    this.windows.set(endpointId, next)
    if (this.windows.size <= MAX_REMEMBERED_WINDOWS) return
    for (const id of this.windows.keys()) {
      if (this.windows.size <= MAX_REMEMBERED_WINDOWS) break
      if (this.held(id) === 0) this.windows.delete(id)
    }
  }
}
