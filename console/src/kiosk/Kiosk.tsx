import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import {
  type CurrentDevice,
  currentDevice,
  KioskApiError,
  pair,
  type Scan,
  sendScan,
  Unreachable,
} from './api.js'
import { ServiceClock } from './clock.js'
import { Feedback, type FeedbackContent, IdleScreen, PairingScreen, QueueBanner } from './screens.js'
import {
  type Direction,
  enqueue,
  type QueuedScan,
  queueLength,
  readSetting,
  writeSetting,
} from './storage.js'
import { FLUSH_INTERVAL_MS, flushQueue } from './sync.js'
import { flagWords, resultWord, scans } from './words.js'

/** What pairing left in storage: the device key and the device it scans for. */
interface Pairing {
  secret: string
  deviceCode: string
}

/** How long feedback stays before the idle screen is back (the spec: 3–5 s). */
const FEEDBACK_MS = 4_000

/** The same input within this is a double scan (a reader's repeat, Enter pressed twice): sent once. */
const REPEAT_MS = 10_000

type Phase = 'loading' | 'pairing' | 'idle' | 'unpaired'

const clock = new ServiceClock()
/** One function for the page's life: the idle clock's ticking restarts when it changes. */
const serviceNow = () => clock.now()

/** 128 random bits: unique per capture, and made without a secure context (unlike randomUUID). */
function newClientScanId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

export function Kiosk() {
  const [phase, setPhase] = useState<Phase>('loading')
  const [pairing, setPairing] = useState<Pairing>()
  const [current, setCurrent] = useState<CurrentDevice>()
  const [feedback, setFeedback] = useState<FeedbackContent>()
  const [queued, setQueued] = useState(0)
  const [refused, setRefused] = useState(0)
  /** The last input sent, and what was shown for it once answered (a repeat shows it again). */
  const last = useRef<{
    ident: string
    direction: Direction
    at: number
    shown?: FeedbackContent
    repeatNote?: string
  }>()
  const feedbackTimer = useRef<ReturnType<typeof setTimeout>>()
  const flushing = useRef<Promise<void>>()

  const show = useCallback((content: FeedbackContent) => {
    setFeedback(content)
    clearTimeout(feedbackTimer.current)
    feedbackTimer.current = setTimeout(() => setFeedback(undefined), FEEDBACK_MS)
  }, [])

  const countQueue = useCallback(async () => setQueued(await queueLength()), [])

  /** One flush at a time: a reconnect during the 30 s tick's flush joins it. */
  const flush = useCallback(
    (key: string) => {
      flushing.current ??= (async () => {
        try {
          const outcome = await flushQueue(key, clock)
          if (outcome.refused > 0) setRefused((n) => n + outcome.refused)
          if (outcome.unpaired) setPhase('unpaired')
        } finally {
          flushing.current = undefined
          await countQueue()
        }
      })()
      return flushing.current
    },
    [countQueue],
  )

  /** The device, its location and the service's clock; a cached copy serves while offline. */
  const refresh = useCallback(async (key: string) => {
    const sentAt = performance.now()
    try {
      const device = await currentDevice(key)
      await clock.sync(device.server_time, sentAt, performance.now())
      await writeSetting('current', device)
      setCurrent(device)
      setPhase('idle')
    } catch (error) {
      if (error instanceof KioskApiError && error.status === 401) setPhase('unpaired')
      else if (!(error instanceof Unreachable)) throw error
    }
  }, [])

  useEffect(() => {
    void (async () => {
      await clock.restore()
      await countQueue()
      const stored = await readSetting<Pairing>('pairing')
      if (!stored) return setPhase('pairing')
      setPairing(stored)
      const cached = await readSetting<CurrentDevice>('current')
      if (cached) {
        setCurrent(cached)
        setPhase('idle')
      }
      await refresh(stored.secret)
      setPhase((phase) => (phase === 'loading' ? 'idle' : phase))
      await flush(stored.secret)
    })()
  }, [countQueue, refresh, flush])

  // Flushed on reconnect and every 30 s besides (a reconnect the browser does not notice).
  useEffect(() => {
    if (!pairing) return
    const key = pairing.secret
    const online = () => void flush(key)
    window.addEventListener('online', online)
    const timer = setInterval(online, FLUSH_INTERVAL_MS)
    return () => {
      window.removeEventListener('online', online)
      clearInterval(timer)
    }
  }, [pairing, flush])

  async function onPair(code: string): Promise<string | undefined> {
    try {
      const paired = await pair(code)
      const stored = { secret: paired.key.secret, deviceCode: paired.device.code }
      await writeSetting('pairing', stored)
      setPairing(stored)
      await refresh(stored.secret)
      await flush(stored.secret)
      return undefined
    } catch (error) {
      if (error instanceof Unreachable)
        return 'The service cannot be reached. Check the network and try again.'
      if (error instanceof KioskApiError) {
        return error.body.code === 'invalid_pairing_code'
          ? 'This code is unknown, used or expired. Make a new one on the device page of the console.'
          : error.body.message
      }
      throw error
    }
  }

  async function save(scan: QueuedScan) {
    await enqueue(scan)
    await countQueue()
    const content: FeedbackContent = {
      kind: 'saved',
      ident: scan.operator_ident,
      time: Date.parse(scan.time),
    }
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
    const scan: QueuedScan = {
      client_scan_id: newClientScanId(),
      device_id: pairing.deviceCode,
      operator_ident: ident,
      direction,
      time: new Date(clock.now()).toISOString(),
    }
    last.current = { ident, direction, at: now }
    // Older scans go first: a scan sent past a queue would reach the service out of order.
    if ((await queueLength()) > 0) await flush(pairing.secret)
    if ((await queueLength()) > 0) return save(scan)
    try {
      const recorded: Scan = await sendScan(pairing.secret, scan)
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
    } catch (error) {
      if (error instanceof Unreachable || (error instanceof KioskApiError && error.status >= 500)) {
        return save(scan)
      }
      if (error instanceof KioskApiError && error.status === 401) {
        // The key is revoked; the scan is kept for when the device is paired again.
        await enqueue(scan)
        await countQueue()
        return setPhase('unpaired')
      }
      // Refused: nothing was recorded, so the same input at once must be sent, not taken for a repeat.
      last.current = undefined
      if (error instanceof KioskApiError) {
        return show({
          kind: 'refused',
          ident,
          time: Date.parse(scan.time),
          note:
            error.body.code === 'unknown_operator'
              ? 'This badge is not known. Ask your manager.'
              : error.body.message,
        })
      }
      throw error
    }
  }

  const timezone = current?.location?.timezone ?? 'UTC'
  return (
    <main class="kiosk">
      {phase === 'loading' && <p class="kiosk-loading">Starting…</p>}
      {phase === 'pairing' && <PairingScreen onPair={onPair} />}
      {phase === 'unpaired' && (
        <PairingScreen onPair={onPair} notice="This device was unpaired. Pair it again to send its scans." />
      )}
      {phase === 'idle' && (
        <IdleScreen
          locationName={
            current?.location?.name ?? current?.device.name ?? current?.device.code ?? 'Time clock'
          }
          timezone={timezone}
          now={serviceNow}
          onScan={onScan}
        />
      )}
      <Feedback content={feedback} timezone={timezone} />
      <QueueBanner
        queued={queued}
        refused={refused === 0 ? undefined : `${scans(refused)} refused by the service and dropped.`}
      />
    </main>
  )
}
