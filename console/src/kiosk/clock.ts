import { readSetting, writeSetting } from './storage.js'

const OFFSET_SETTING = 'clock-offset-ms'

/**
 * The service's clock, as the kiosk knows it. A tablet's own clock may be wrong, or be changed while
 * the kiosk runs: the time of a scan is the service's time at the last sync plus the time elapsed
 * since on the monotonic clock (`performance.now()`), which changing the tablet's clock does not
 * move. The offset to the tablet's clock is also stored, for a page loaded without the network; it
 * is the best guess left then.
 */
export class ServiceClock {
  private anchor: { serviceMs: number; monotonicMs: number } | undefined

  /** On load: the offset stored at the last sync, until a sync gives a better anchor. */
  async restore(): Promise<void> {
    const offset = await readSetting<number>(OFFSET_SETTING)
    if (offset !== undefined && !this.anchor) {
      this.anchor = { serviceMs: Date.now() + offset, monotonicMs: performance.now() }
    }
  }

  /**
   * `serverTime` answered a request sent at `sentAt` and answered at `receivedAt` (both
   * `performance.now()`): the service read its clock about half-way through.
   */
  async sync(serverTime: string, sentAt: number, receivedAt: number): Promise<void> {
    const serviceMs = Date.parse(serverTime) + (receivedAt - sentAt) / 2
    this.anchor = { serviceMs, monotonicMs: receivedAt }
    await writeSetting(OFFSET_SETTING, serviceMs - (Date.now() - (performance.now() - receivedAt)))
  }

  /** Milliseconds since the epoch on the service's clock (the tablet's, never synced). */
  now(): number {
    if (!this.anchor) return Date.now()
    return this.anchor.serviceMs + (performance.now() - this.anchor.monotonicMs)
  }
}
