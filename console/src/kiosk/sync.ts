import { KioskApiError, sendBatch } from './api.js'
import type { ServiceClock } from './clock.js'
import { oldestQueued, removeQueued } from './storage.js'

/** The most scans `POST /v1/scans/batch` takes at once. */
export const BATCH_SIZE = 500

/** How often the queue is flushed besides on load and on reconnect. */
export const FLUSH_INTERVAL_MS = 30_000

export interface FlushOutcome {
  /** Scans the service acknowledged (recorded, or already recorded with that `client_scan_id`). */
  sent: number
  /** Scans refused with a 4xx of their own: removed, since sending them again changes nothing. */
  refused: number
  /** The key was refused (401): the device was unpaired; the queue stays as it was. */
  unpaired: boolean
}

/**
 * Sends the queue oldest first, at most 500 a batch, until it is empty or the service does not take
 * a batch (no answer, or an answer for the whole batch): what was not acknowledged stays for the next
 * flush. An item the service failed on itself (`api_error`) stays queued too.
 */
export async function flushQueue(key: string, clock: ServiceClock): Promise<FlushOutcome> {
  const outcome: FlushOutcome = { sent: 0, refused: 0, unpaired: false }
  for (;;) {
    const items = await oldestQueued(BATCH_SIZE)
    if (items.length === 0) return outcome
    let answer: Awaited<ReturnType<typeof sendBatch>>
    try {
      // The scans were stamped on the service's clock as the kiosk knows it: so is `sent_at`.
      answer = await sendBatch(key, items, new Date(clock.now()).toISOString())
    } catch (error) {
      if (error instanceof KioskApiError && error.status === 401) outcome.unpaired = true
      return outcome
    }
    const done: number[] = []
    items.forEach((item, i) => {
      const result = answer.data[i]
      if (!result || item.seq === undefined) return
      if ('object' in result) outcome.sent++
      else if (result.type !== 'api_error') outcome.refused++
      else return
      done.push(item.seq)
    })
    await removeQueued(done)
    // Something stayed: the next flush tries again, rather than this one sending it in a loop.
    if (done.length < items.length) return outcome
  }
}
