import { afterAll, beforeAll } from 'vitest'
import { type Clock, installClock } from '../../src/lib/clock.js'
import { waitUntil } from './assertions.js'

interface Timer {
  at: number
  order: number
  callback: () => void
}

/**
 * A clock that moves only when the test says so: `now()` stands still, and a scheduled callback runs
 * when `advance`/`set` carries the clock past its time (in time order; ties in the order they were
 * scheduled). It starts at the real time of its creation, so rows and signatures it stamps look
 * current to anything outside the process, unless a start is given.
 */
export class TestClock implements Clock {
  private current: number
  private timers: Timer[] = []
  private scheduled = 0

  constructor(start: number = Date.now()) {
    this.current = start
  }

  now(): number {
    return this.current
  }

  schedule(callback: () => void, ms: number): () => void {
    const timer: Timer = { at: this.current + Math.max(0, ms), order: this.scheduled++, callback }
    this.timers.push(timer)
    return () => {
      this.timers = this.timers.filter((t) => t !== timer)
    }
  }

  /** Moves the clock `ms` forward, running every callback that falls due on the way. */
  advance(ms: number): void {
    this.set(this.current + ms)
  }

  /**
   * Moves the clock to `to`, running due callbacks in order, each at its own time (a callback that
   * schedules another within the step sees it run too). Time never goes back.
   */
  set(to: number): void {
    if (to < this.current) throw new Error(`a TestClock does not go back (${to} < ${this.current})`)
    for (;;) {
      const next = this.nextDue(to)
      if (!next) break
      this.timers = this.timers.filter((t) => t !== next)
      this.current = next.at
      next.callback()
    }
    this.current = to
  }

  /** How many callbacks wait for a later time: a test checks a loop is parked before it steps. */
  get pending(): number {
    return this.timers.length
  }

  private nextDue(to: number): Timer | undefined {
    let next: Timer | undefined
    for (const timer of this.timers) {
      if (timer.at > to) continue
      if (!next || timer.at < next.at || (timer.at === next.at && timer.order < next.order)) next = timer
    }
    return next
  }
}

/**
 * Waits until `waits` callbacks wait on `clock`: each of the background loops that keep that many
 * waits (one each while parked, none while in the middle of a pass) has finished its pass and parked,
 * so nothing more happens until the clock moves or a commit wakes one. A pass that a clock step set
 * off ends its wait at once (inside `set`), so after a step this waits for those passes to be done.
 */
export function parked(clock: TestClock, waits: number): Promise<number> {
  return waitUntil(
    () => clock.pending,
    (pending) => pending === waits,
  )
}

/**
 * Installs a TestClock as the process's clock for this test file (before its other `beforeAll`
 * hooks, so call it before building the app) and puts the system's back after it.
 */
export function useTestClock(start?: number): TestClock {
  const clock = new TestClock(start)
  let restore: (() => void) | undefined
  beforeAll(() => {
    restore = installClock(clock)
  })
  afterAll(() => restore?.())
  return clock
}

/** Runs `work` with the process's clock standing at `at`, then puts the previous clock back. */
export async function atTime<T>(at: number, work: () => Promise<T>): Promise<T> {
  const restore = installClock(new TestClock(at))
  try {
    return await work()
  } finally {
    restore()
  }
}
