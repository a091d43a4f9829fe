import { afterEach, describe, expect, it } from 'vitest'
import { installClock } from '../../src/lib/clock.js'
import { Repeating } from '../../src/lib/repeating.js'
import { waitUntil } from '../helpers/assertions.js'
import { parked, TestClock } from '../helpers/clock.js'

describe('Repeating: the background chores’ loop, on the process clock', () => {
  let restore: (() => void) | undefined
  afterEach(() => restore?.())
  const useClock = () => {
    const time = new TestClock(0)
    restore = installClock(time)
    return time
  }

  it('passes at once, then each time the interval has passed after the last pass, until stopped', async () => {
    const time = useClock()
    const passes: number[] = []
    const loop = new Repeating(
      async () => {
        passes.push(time.now())
        return 'again'
      },
      1_000,
      (error) => {
        throw error
      },
    )
    loop.start()
    loop.start()
    await parked(time, 1)
    expect(passes).toEqual([0])
    time.advance(999)
    expect(passes).toEqual([0])
    time.advance(1)
    await parked(time, 1)
    expect(passes).toEqual([0, 1_000])
    // Stopped while it waits: at once, with the clock standing still, and nothing left scheduled.
    await loop.stop()
    expect(time.pending).toBe(0)
    time.advance(10_000)
    expect(passes).toEqual([0, 1_000])
  })

  it('gives a failed pass to onError and goes on; a pass that says done ends the loop', async () => {
    const time = useClock()
    const errors: unknown[] = []
    let pass = 0
    const loop = new Repeating(
      async () => {
        pass += 1
        if (pass === 1) throw new Error('first pass failed')
        return pass === 3 ? 'done' : 'again'
      },
      50,
      (error) => errors.push(error),
    )
    loop.start()
    await parked(time, 1)
    expect(errors.map((e) => (e as Error).message)).toEqual(['first pass failed'])
    time.advance(50)
    await parked(time, 1)
    time.advance(50)
    // The third pass says done: the loop ends by itself, with no wait left scheduled.
    await waitUntil(
      () => pass,
      (count) => count === 3,
    )
    // A turn of the event loop: a loop that went on would have scheduled its next wait by now.
    await new Promise((resolve) => setImmediate(resolve))
    expect(time.pending).toBe(0)
    time.advance(1_000)
    expect(pass).toBe(3)
    expect(errors).toHaveLength(1)
    await loop.stop()
  })
})
