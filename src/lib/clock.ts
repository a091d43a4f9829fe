/**
 * The service's one source of time: "now" (what is stored and compared: `created_at`, expiries,
 * leases, lockouts, retry schedules, retention windows) and the waits of its background loops (the
 * webhook worker's polls, the sweep, retention, the idempotency purge). Nothing else in `src/` reads
 * `Date.now()` or schedules work in time of its own.
 *
 * One clock per process, installed at the composition root: production keeps the system's; a test
 * installs a clock it moves by hand (test/helpers/clock.ts), so a test about time steps the clock
 * instead of sleeping, and what the service does is the same on a fast machine and a slow one. A
 * process-wide clock rather than one threaded through every service function: "now" is read in
 * some forty places, most of them several calls below a route, and a parameter on each would be
 * noise on every signature for a value that never differs within a process.
 *
 * Real time still governs what is about the machine rather than the service's rules: I/O timeouts
 * (a webhook's request, a connection), the SQLite driver's group commit and checkpoints, a socket's
 * lingering close. Those use Node's timers directly.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number
  /**
   * Calls `callback` once `ms` of this clock's time have passed. The returned function cancels it.
   * The waiting keeps the process alive unless `unref` is set (a periodic chore that must not).
   */
  schedule(callback: () => void, ms: number, options?: { unref?: boolean }): () => void
}

export const systemClock: Clock = {
  now: () => Date.now(),
  schedule(callback, ms, options) {
    const timer = setTimeout(callback, ms)
    if (options?.unref) timer.unref()
    return () => clearTimeout(timer)
  },
}

let installed: Clock = systemClock

/** The process's clock: always the one installed now, so a clock installed later is seen at once. */
export const clock: Clock = {
  now: () => installed.now(),
  schedule: (callback, ms, options) => installed.schedule(callback, ms, options),
}

/** Installs `next` as the process's clock; the returned function puts the previous one back. */
export function installClock(next: Clock): () => void {
  const previous = installed
  installed = next
  return () => {
    installed = previous
  }
}
