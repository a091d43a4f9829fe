import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { KioskApiError, type Scan, sendScan, Unreachable } from './api.js'
import { ServiceClock } from './clock.js'
import { usePairing } from './pairing.js'
import { sealPin } from './pin.js'
import { useScanQueue } from './scan-queue.js'
import {
  Feedback,
  type FeedbackContent,
  IdleScreen,
  PairingScreen,
  PinPad,
  type Place,
  QueueBanner,
} from './screens.js'
import type { Direction, QueuedScan } from './storage.js'
import { FLUSH_INTERVAL_MS } from './sync.js'
import { flagWords, resultWord } from './words.js'

/** How long feedback stays before the idle screen is back (the spec: 3–5 s). */
const FEEDBACK_MS = 4_000

/** The same input within this is a double scan (a reader's repeat, Enter pressed twice): sent once. */
const REPEAT_MS = 10_000

/** What the action buttons say, for the PIN pad's line "W-001 · Check in or out". */
const ACTION_NAMES: Record<Direction, string> = {
  auto: 'Check in or out',
  break_start: 'Start break',
  break_end: 'End break',
}

/** "15 minutes", "1 minute", "40 seconds": how long a worker is locked out, from `Retry-After`. */
function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} ${seconds === 1 ? 'second' : 'seconds'}`
  const minutes = Math.ceil(seconds / 60)
  return `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}`
}

const clock = new ServiceClock()
/** One function for the page's life: the idle clock's ticking restarts when it changes. */
const serviceNow = () => clock.now()

/** 128 random bits: unique per capture, and made without a secure context (unlike randomUUID). */
function newClientScanId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

/**
 * The kiosk's screens, composed of the device's pairing (`usePairing`) and the offline queue
 * (`useScanQueue`); here, a scan's capture: the double scan, the PIN pad, sending at once or keeping
 * it in the queue, and the feedback.
 */
export function Kiosk() {
  const device = usePairing(clock)
  const { phase, pairing, current, refresh, restore, unpaired } = device
  const [feedback, setFeedback] = useState<FeedbackContent>()
  /** The badge and action waiting for their PIN, while the PIN pad shows. */
  const [pinFor, setPinFor] = useState<{ ident: string; direction: Direction }>()
  /** The last input sent, and what was shown for it once answered (a repeat shows it again). */
  const last = useRef<{
    ident: string
    direction: Direction
    at: number
    shown?: FeedbackContent
    repeatNote?: string
  }>()
  const feedbackTimer = useRef<ReturnType<typeof setTimeout>>()

  // A device read by an earlier build has no locale: the service's default until it is read again.
  const timezone = current?.location?.timezone ?? 'UTC'
  const locale = current?.location?.locale ?? 'en-GB'
  const place = useMemo<Place>(() => ({ timezone, locale }), [timezone, locale])
  const queue = useScanQueue(clock, place, unpaired)
  const { count, flush } = queue

  const show = useCallback((content: FeedbackContent) => {
    setFeedback(content)
    clearTimeout(feedbackTimer.current)
    feedbackTimer.current = setTimeout(() => setFeedback(undefined), FEEDBACK_MS)
  }, [])

  const cancelPin = useCallback(() => setPinFor(undefined), [])

  useEffect(() => {
    void (async () => {
      await clock.restore()
      await count()
      const stored = await restore()
      if (stored) await flush(stored.secret)
    })()
  }, [count, restore, flush])

  // On reconnect and every 30 s besides (a reconnect the browser does not notice): the device read
  // again (a manager may have turned require_pin on) and the queue flushed.
  useEffect(() => {
    if (!pairing) return
    const key = pairing.secret
    const online = () => void refresh(key).then(() => flush(key))
    window.addEventListener('online', online)
    const timer = setInterval(online, FLUSH_INTERVAL_MS)
    return () => {
      window.removeEventListener('online', online)
      clearInterval(timer)
    }
  }, [pairing, refresh, flush])

  /** The pairing form's code: undefined once paired (and the queue flushed), else what the form says. */
  async function onPair(code: string): Promise<string | undefined> {
    const paired = await device.pair(code)
    if (typeof paired === 'string') return paired
    await flush(paired.secret)
    return undefined
  }

  /**
   * Into the queue, with its PIN sealed to the service's key (the PIN itself is never stored), and
   * "Saved, will sync" on the screen. When the PIN cannot be sealed (no WebCrypto outside a secure
   * context), nothing is kept, and the screen says the scan was not recorded.
   */
  async function save(scan: QueuedScan, pin: string | undefined) {
    const time = Date.parse(scan.time)
    if (pin !== undefined) {
      try {
        if (!current) throw new Error('no PIN key yet')
        scan.pin_ciphertext = await sealPin(pin, current.pin_key)
      } catch {
        last.current = undefined
        return show({
          kind: 'refused',
          ident: scan.operator_ident,
          time,
          note: 'The service cannot be reached and this tablet cannot keep a PIN safely. Try again later.',
        })
      }
    }
    await queue.keep(scan)
    const content: FeedbackContent = { kind: 'saved', ident: scan.operator_ident, time }
    if (last.current) last.current.shown = content
    show(content)
  }

  async function onScan(input: string, direction: Direction) {
    const ident = input.trim()
    if (!ident || !pairing) return
    const now = performance.now()
    const previous = last.current
    if (
      previous &&
      previous.ident === ident &&
      previous.direction === direction &&
      now - previous.at < REPEAT_MS
    ) {
      const seconds = Math.max(1, Math.round((now - previous.at) / 1000))
      const note = `Already recorded ${seconds} s ago.`
      // Still waiting for the first one's answer: it is shown with the note when it comes.
      if (!previous.shown) previous.repeatNote = note
      return show(previous.shown ? { ...previous.shown, note } : { kind: 'repeat', ident, note })
    }
    if (current?.require_pin) return setPinFor({ ident, direction })
    await capture(ident, direction, undefined)
  }

  /** The PIN pad's PIN: undefined closes the pad, a string is said on it (a wrong PIN: try again). */
  async function onPin(pin: string): Promise<string | undefined> {
    if (!pinFor) return undefined
    const refusal = await capture(pinFor.ident, pinFor.direction, pin)
    if (refusal === undefined) setPinFor(undefined)
    return refusal
  }

  /**
   * Sends the scan, or queues it when the service does not answer in 5 s (or answers 5xx). Answers
   * what the PIN pad should say when the PIN was refused, so the worker can try again.
   */
  async function capture(
    ident: string,
    direction: Direction,
    pin: string | undefined,
  ): Promise<string | undefined> {
    if (!pairing) return undefined
    const scan: QueuedScan = {
      client_scan_id: newClientScanId(),
      device_id: pairing.deviceCode,
      operator_ident: ident,
      direction,
      time: new Date(clock.now()).toISOString(),
    }
    last.current = { ident, direction, at: performance.now() }
    // Older scans go first: a scan sent past a queue would reach the service out of order.
    if (await queue.flushFirst(pairing.secret)) return void (await save(scan, pin))
    try {
      const recorded: Scan = await sendScan(pairing.secret, scan, pin)
      const content: FeedbackContent = {
        kind: 'scan',
        name: recorded.operator_name ?? recorded.operator_ident,
        word: resultWord(recorded.result),
        time: Date.parse(recorded.time),
        note: flagWords(recorded.flag_reason),
      }
      const sent = last.current
      sent.shown = content
      show(sent.repeatNote ? { ...content, note: sent.repeatNote } : content)
      return undefined
    } catch (error) {
      if (error instanceof Unreachable || (error instanceof KioskApiError && error.status >= 500)) {
        return void (await save(scan, pin))
      }
      if (error instanceof KioskApiError && error.status === 401) {
        // The key is revoked; the scan is kept for when the device is paired again, and said so.
        await save(scan, pin)
        unpaired()
        return undefined
      }
      // Refused: nothing was recorded, so the same input at once must be sent, not taken for a repeat.
      last.current = undefined
      if (!(error instanceof KioskApiError)) throw error
      const refusal = (note: string) => show({ kind: 'refused', ident, time: Date.parse(scan.time), note })
      switch (error.body.code) {
        case 'invalid_pin':
          return 'Wrong PIN. Nothing was recorded. Try again: 5 wrong PINs in a row lock you out for 15 minutes.'
        case 'pin_locked':
          refusal(
            `Too many wrong PINs: locked out for ${duration(error.retryAfterSeconds ?? 900)}. Ask your manager.`,
          )
          return undefined
        case 'missing_param':
          // A manager turned PINs on since the device was last read: read it again, then ask.
          if (error.body.param === 'pin' && pairing) {
            await refresh(pairing.secret)
            setPinFor({ ident, direction })
            return undefined
          }
          break
        case 'unknown_operator':
          refusal('This badge is not known. Ask your manager.')
          return undefined
      }
      refusal(error.body.message)
      return undefined
    }
  }

  return (
    <main class="kiosk">
      {phase === 'loading' && <p class="kiosk-loading">Starting…</p>}
      {phase === 'pairing' && <PairingScreen onPair={onPair} />}
      {phase === 'unpaired' && (
        <PairingScreen onPair={onPair} notice="This device was unpaired. Pair it again to send its scans." />
      )}
      {phase === 'idle' && pinFor && (
        <PinPad
          ident={pinFor.ident}
          action={ACTION_NAMES[pinFor.direction]}
          onPin={onPin}
          onCancel={cancelPin}
        />
      )}
      {phase === 'idle' && !pinFor && (
        <IdleScreen
          locationName={
            current?.location?.name ?? current?.device.name ?? current?.device.code ?? 'Time clock'
          }
          place={place}
          now={serviceNow}
          onScan={onScan}
        />
      )}
      <Feedback content={feedback} place={place} />
      <QueueBanner queued={queue.queued} notes={queue.notes} />
    </main>
  )
}
