/**
 * A wait that someone else can cut short. An end() while nobody waits is kept for the next wait,
 * so a wake-up that arrives while its loop is busy is not lost.
 */
export class Pause {
  private ended = false
  private endWait: (() => void) | undefined

  wait(ms: number): Promise<void> {
    if (this.ended) {
      this.ended = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.end(), ms)
      this.endWait = () => {
        clearTimeout(timer)
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
