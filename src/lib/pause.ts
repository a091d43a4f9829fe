import { type Clock, clock } from './clock.js'

/**
 * A wait that someone else can cut short. An end() while nobody waits is kept for the next wait, so
 * a wake-up that arrives while its loop is busy is not lost. It waits in the process clock's time
 * (lib/clock.ts): a loop's schedule is the service's time; a pause that only paces work for the
 * machine's sake passes `systemClock`.
 */
export class Pause {
  private ended = false
  private endWait: (() => void) | undefined

  constructor(private readonly time: Clock = clock) {}

  wait(ms: number): Promise<void> {
    if (this.ended) {
      this.ended = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const cancel = this.time.schedule(() => this.end(), ms)
      this.endWait = () => {
        cancel()
        this.endWait = undefined
        resolve()
      }
    })
  }

  end(): void {
    if (this.endWait) this.endWait()
    else this.ended = true
  }
}
