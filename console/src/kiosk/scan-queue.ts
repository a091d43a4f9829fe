/**
 * The offline scan queue as the page sees it (`useScanQueue`). It owns: how many scans wait (the status
 * line's count), the scans the service refused and dropped (wrong PINs apart), the last refusal of the
 * whole queue as the status line says it, one flush at a time, and the back-off after a refusal of the
 * whole queue. It does not own the queue's storage (`storage.ts`), the flush's batches (`sync.ts`), the
 * pairing or the device (`pairing.ts`: the key is handed to each call), nor the sending of a new scan
 * (`Kiosk.tsx`).
 */
import { useCallback, useRef, useState } from 'preact/hooks'
import type { ServiceClock } from './clock.js'
import { formatterAt, type Place, SCAN_TIME } from './screens.js'
import { enqueue, type QueuedScan, queueLength } from './storage.js'
import { type BatchRefusal, flushQueue } from './sync.js'
import { scans } from './words.js'

/**
 * After the service refused the queue as a whole (a 403, a 429, …), the automatic flushes wait this
 * long, doubled at each refusal up to the most: sending the same refused batch every 30 s changes
 * nothing, and a site lead reading the status line needs the kiosk to keep the scans, say why, and
 * try again on its own. A `Retry-After` is taken as said. A reload tries at once.
 */
const REFUSAL_BACKOFF_MS = { first: 60_000, most: 15 * 60_000 }

export interface ScanQueue {
  /** How many scans wait, as last counted. */
  queued: number
  /** The status line's notes: the scans refused and dropped, the last refusal of the whole queue. */
  notes: string[]
  /** Counts the waiting scans again. */
  count: () => Promise<void>
  /** Sends the waiting scans, unless waiting after a refusal; a flush under way is joined. */
  flush: (key: string) => Promise<void>
  /**
   * Older scans go first: when any wait, they are flushed; true when some still wait, so a new scan
   * must be kept behind them (sent past them, it would reach the service out of order).
   */
  flushFirst: (key: string) => Promise<boolean>
  /** Keeps a scan for a later flush, and counts it. */
  keep: (scan: QueuedScan) => Promise<void>
}

/**
 * The queue for the page's life. `place` writes the status line's next try; `onUnpaired` is called
 * when a flush finds the key refused (401), and should not change from one render to the next.
 */
export function useScanQueue(clock: ServiceClock, place: Place, onUnpaired: () => void): ScanQueue {
  const [queued, setQueued] = useState(0)
  const [refused, setRefused] = useState({ scans: 0, wrongPins: 0 })
  /** The last refusal of the whole queue, as the status line says it, until a batch goes through. */
  const [syncRefusal, setSyncRefusal] = useState<string>()
  const flushing = useRef<Promise<void>>()
  /** After a refusal of the whole queue: no automatic flush before `until` (`performance.now()`). */
  const backoff = useRef({ until: 0, delayMs: 0 })
  /** For the callbacks below, which must not change (and restart the page's effects) with the place. */
  const placeNow = useRef(place)
  placeNow.current = place

  const count = useCallback(async () => setQueued(await queueLength()), [])

  /** The queue was refused as a whole: kept, said on the status line, tried again later. */
  const waitAfter = useCallback(
    (refusal: BatchRefusal) => {
      const delayMs =
        refusal.retryAfterSeconds !== undefined
          ? refusal.retryAfterSeconds * 1000
          : Math.min(backoff.current.delayMs * 2 || REFUSAL_BACKOFF_MS.first, REFUSAL_BACKOFF_MS.most)
      backoff.current = { until: performance.now() + delayMs, delayMs }
      const at = formatterAt(placeNow.current, SCAN_TIME).format(clock.now() + delayMs)
      setSyncRefusal(
        `The service refused the waiting scans (HTTP ${refusal.status}): ${refusal.message} They are kept; next try at ${at}.`,
      )
    },
    [clock],
  )

  /** One flush at a time: a reconnect during the 30 s tick's flush joins it. */
  const flush = useCallback(
    (key: string) => {
      if (performance.now() < backoff.current.until) return Promise.resolve()
      flushing.current ??= (async () => {
        try {
          const outcome = await flushQueue(key, clock)
          if (outcome.refused > 0) {
            setRefused((n) => ({
              scans: n.scans + outcome.refused,
              wrongPins: n.wrongPins + outcome.wrongPins,
            }))
          }
          if (outcome.unpaired) onUnpaired()
          if (outcome.refusal) waitAfter(outcome.refusal)
          else if (outcome.sent + outcome.refused > 0) {
            backoff.current = { until: 0, delayMs: 0 }
            setSyncRefusal(undefined)
          }
        } finally {
          flushing.current = undefined
          await count()
        }
      })()
      return flushing.current
    },
    [clock, count, onUnpaired, waitAfter],
  )

  const flushFirst = useCallback(
    async (key: string) => {
      if ((await queueLength()) > 0) await flush(key)
      return (await queueLength()) > 0
    },
    [flush],
  )

  const keep = useCallback(
    async (scan: QueuedScan) => {
      await enqueue(scan)
      await count()
    },
    [count],
  )

  const notes: string[] = []
  if (refused.scans > 0) {
    notes.push(
      `${scans(refused.scans)} refused by the service and dropped${
        refused.wrongPins > 0 ? ` (${refused.wrongPins} for a wrong PIN)` : ''
      }.`,
    )
  }
  if (syncRefusal) notes.push(syncRefusal)
  return { queued, notes, count, flush, flushFirst, keep }
}
