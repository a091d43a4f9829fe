import { KioskApiError, sendBatch } from './api.js'
import type { ServiceClock } from './clock.js'
import { oldestQueued, removeQueued } from './storage.js'

/** The most scans `POST /v1/scans/batch` takes at once. */
export const BATCH_SIZE = 500

/** How often the queue is flushed besides on load and on reconnect. */
export const FLUSH_INTERVAL_MS = 30_000

/**
 * A whole batch refused for what is in it: the body (400: a field the service does not take), its
 * size (413), or its content (422). One scan in it is the cause, so the batch is halved until that
 * scan is alone, and then it is refused on its own, like an item's 4xx: one bad scan (a badge reader's
 * 70-character garbage typed in offline) never holds back a day of good ones.
 */
const REFUSED_FOR_ITS_CONTENT = new Set([400, 413, 422])

/** The service would not take the queue at all (a 403, a 429, …): nothing was sent or dropped. */
export interface BatchRefusal {
  status: number
  message: string
  retryAfterSeconds?: number
}

export interface FlushOutcome {
  /** Scans the service acknowledged (recorded, or already recorded with that `client_scan_id`). */
  sent: number
  /** Scans refused with a 4xx of their own: removed, since sending them again changes nothing. */
  refused: number
  /** Of `refused`, those refused for a wrong PIN (`invalid_pin`), said apart on the status line. */
  wrongPins: number
  /** The key was refused (401): the device was unpaired; the queue stays as it was. */
  unpaired: boolean
  /** Any other refusal of a whole batch: the queue stays, and the page says so and waits. */
  refusal?: BatchRefusal
}

/**
 * Sends the queue oldest first, at most 500 a batch, until it is empty or the service does not take
 * a batch: no answer (or a 5xx) keeps what is left for the next flush; a 401 or another refusal of the
 * whole batch keeps it too, and is told in the outcome. An item the service failed on itself
 * (`api_error`) stays queued too.
 */
export async function flushQueue(key: string, clock: ServiceClock): Promise<FlushOutcome> {
  const outcome: FlushOutcome = { sent: 0, refused: 0, wrongPins: 0, unpaired: false }
  let size = BATCH_SIZE
  for (;;) {
    const items = await oldestQueued(size)
    if (items.length === 0) return outcome
    let answer: Awaited<ReturnType<typeof sendBatch>>
    try {
      // The scans were stamped on the service's clock as the kiosk knows it: so is `sent_at`.
      answer = await sendBatch(key, items, new Date(clock.now()).toISOString())
    } catch (error) {
      if (!(error instanceof KioskApiError) || error.status >= 500) return outcome
      if (error.status === 401) {
        outcome.unpaired = true
      } else if (REFUSED_FOR_ITS_CONTENT.has(error.status)) {
        const [alone] = items
        if (items.length > 1) size = Math.ceil(items.length / 2)
        else if (alone?.seq !== undefined) {
          await removeQueued([alone.seq])
          outcome.refused++
          size = BATCH_SIZE
        }
        continue
      } else {
        outcome.refusal = {
          status: error.status,
          message: error.body.message,
          retryAfterSeconds: error.retryAfterSeconds,
        }
      }
      return outcome
    }
    const done: number[] = []
    items.forEach((item, i) => {
      const result = answer.data[i]
      if (!result || item.seq === undefined) return
      if ('object' in result) outcome.sent++
      else if (result.type !== 'api_error') {
        outcome.refused++
        if (result.code === 'invalid_pin') outcome.wrongPins++
      } else return
      done.push(item.seq)
    })
    await removeQueued(done)
    // Something stayed: the next flush tries again, rather than this one sending it in a loop.
    if (done.length < items.length) return outcome
    size = BATCH_SIZE
  }
}
