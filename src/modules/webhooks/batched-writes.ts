/** Items written in one transaction at most. */
export const MAX_BATCH_ITEMS = 500

/**
 * Writes of many small items (the worker's successful attempts) in batches: items added while a
 * write is in progress wait for it and then go into the next write together, so many concurrent
 * successes cost one to a few transactions (one commit, one WAL flush each) instead of one per
 * attempt, while each is still recorded as soon as the database can take it: a slow receiver does
 * not hold back the others' records. A write that fails rejects every item of its batch (those
 * deliveries are re-sent once their lease runs out, as after a crash).
 */
export class BatchedWrites<T> {
  private pending: Array<{ item: T; resolve: () => void; reject: (error: unknown) => void }> = []
  private writing = false

  constructor(private readonly write: (items: T[]) => Promise<void>) {}

  /** Resolves once the item's batch is written; rejects with the error of a failed write. */
  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject })
      if (!this.writing) void this.drain()
    })
  }

  private async drain(): Promise<void> {
    this.writing = true
    // Let the other responses read in this same turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve))
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, MAX_BATCH_ITEMS)
      try {
        await this.write(batch.map((b) => b.item))
        for (const b of batch) b.resolve()
      } catch (error) {
        for (const b of batch) b.reject(error)
      }
    }
    this.writing = false
  }
}
