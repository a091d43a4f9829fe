import { Pause } from './pause.js'

/**
 * A background chore done again and again: a pass at once, then the next once `intervalMs` of the
 * process clock have passed after it, until the chore says it is done or `stop()` is called. The one
 * start/stop/pause loop of the sweep of forgotten check-outs, event retention and the first
 * statistics; the webhook worker's two loops are woken by commits as well, and keep their own.
 */
export class Repeating {
  private readonly pause = new Pause()
  private running = false
  private loop: Promise<void> | undefined

  /**
   * `pass` returns `done` when nothing is left to do for good (the loop then ends); a pass that
   * throws is given to `onError`, and the loop goes on.
   */
  constructor(
    private readonly pass: () => Promise<'again' | 'done'>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.running) return
    this.running = true
    this.loop = this.run()
  }

  /** Ends the loop: at once while it waits, else once the pass in progress has finished. */
  async stop(): Promise<void> {
    this.running = false
    this.pause.end()
    await this.loop
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        if ((await this.pass()) === 'done') return
      } catch (error) {
        this.onError(error)
      }
      if (this.running) await this.pause.wait(this.intervalMs)
    }
  }
}
