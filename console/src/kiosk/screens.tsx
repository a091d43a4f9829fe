import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { Direction } from './storage.js'
import { scans } from './words.js'

/** What the feedback region says after a scan. */
export type FeedbackContent =
  | { kind: 'scan'; name: string; word: string; time: number; note?: string }
  | { kind: 'saved'; ident: string; time: number; note?: string }
  | { kind: 'refused'; ident: string; time: number; note: string }
  | { kind: 'repeat'; ident: string; note: string }

const CLOCK_TIME: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit', second: '2-digit' }
const CLOCK_DATE: Intl.DateTimeFormatOptions = { weekday: 'long', day: 'numeric', month: 'long' }
const SCAN_TIME: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit' }

/** `options`: one of the constants above, so the formatter is made again only for another zone. */
function useFormatter(timezone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  return useMemo(
    () => new Intl.DateTimeFormat(undefined, { ...options, timeZone: timezone }),
    [timezone, options],
  )
}

export function PairingScreen(props: {
  onPair: (code: string) => Promise<string | undefined>
  notice?: string
}) {
  const [code, setCode] = useState('')
  const [error, setError] = useState<string>()
  const [pairing, setPairing] = useState(false)

  async function submit(event: Event) {
    event.preventDefault()
    if (!code.trim()) return setError('Enter the code shown on the device page of the console.')
    setPairing(true)
    setError(await props.onPair(code.trim()))
    setPairing(false)
  }

  return (
    <section class="kiosk-pairing" aria-labelledby="pairing-title">
      <h1 id="pairing-title">Pair this time clock</h1>
      {props.notice && (
        <p class="kiosk-notice" role="alert">
          {props.notice}
        </p>
      )}
      <p>Make a pairing code on the device's page in the console, then enter it here.</p>
      <form onSubmit={submit}>
        <label for="pairing-code">Pairing code</label>
        <input
          id="pairing-code"
          value={code}
          onInput={(event) => setCode(event.currentTarget.value)}
          autocomplete="off"
          autocapitalize="characters"
          spellcheck={false}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'pairing-error' : undefined}
        />
        <button type="submit" disabled={pairing}>
          Pair
        </button>
      </form>
      {error && (
        <p id="pairing-error" class="kiosk-error" role="alert">
          {error}
        </p>
      )}
    </section>
  )
}

/** The time on the service's clock in the location's zone, ticking each second. */
function Clock(props: { timezone: string; now: () => number }) {
  const time = useFormatter(props.timezone, CLOCK_TIME)
  const date = useFormatter(props.timezone, CLOCK_DATE)
  const [now, setNow] = useState(props.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(props.now()), 1000)
    return () => clearInterval(timer)
  }, [props.now])
  return (
    <p class="kiosk-clock">
      <time class="kiosk-time" dateTime={new Date(now).toISOString()}>
        {time.format(now)}
      </time>
      <span class="kiosk-date">{date.format(now)}</span>
    </p>
  )
}

export function IdleScreen(props: {
  locationName: string
  timezone: string
  now: () => number
  onScan: (input: string, direction: Direction) => Promise<void>
}) {
  const input = useRef<HTMLInputElement>(null)
  const [value, setValue] = useState('')
  useEffect(() => input.current?.focus(), [])

  // Cleared and focused again at once: a badge reader types the next worker's ident straight in.
  function act(direction: Direction) {
    const typed = input.current?.value ?? value
    setValue('')
    input.current?.focus()
    void props.onScan(typed, direction)
  }

  return (
    <section class="kiosk-idle" aria-labelledby="location-name">
      <h1 id="location-name">{props.locationName}</h1>
      <Clock timezone={props.timezone} now={props.now} />
      <form
        class="kiosk-scan"
        onSubmit={(event) => {
          event.preventDefault()
          act('auto')
        }}
      >
        <label for="badge">Badge or ident</label>
        <input
          id="badge"
          ref={input}
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
          autocomplete="off"
          spellcheck={false}
        />
        <div class="kiosk-actions">
          <button type="submit">Check in or out</button>
          <button type="button" onClick={() => act('break_start')}>
            Start break
          </button>
          <button type="button" onClick={() => act('break_end')}>
            End break
          </button>
        </div>
      </form>
    </section>
  )
}

/** A live region present from the start, so a screen reader announces what is put in it. */
export function Feedback(props: { content: FeedbackContent | undefined; timezone: string }) {
  const time = useFormatter(props.timezone, SCAN_TIME)
  const content = props.content
  return (
    <div class="kiosk-feedback" role="status">
      {content?.kind === 'scan' && (
        <>
          <p class="kiosk-name">{content.name}</p>
          <p class="kiosk-word">{content.word}</p>
          <p class="kiosk-at">{time.format(content.time)}</p>
        </>
      )}
      {content?.kind === 'saved' && (
        <>
          <p class="kiosk-name">{content.ident}</p>
          <p class="kiosk-word">Saved, will sync</p>
          <p class="kiosk-at">{time.format(content.time)}</p>
        </>
      )}
      {content?.kind === 'refused' && (
        <>
          <p class="kiosk-name">{content.ident}</p>
          <p class="kiosk-word">NOT RECORDED</p>
          <p class="kiosk-at">{time.format(content.time)}</p>
        </>
      )}
      {content?.kind === 'repeat' && <p class="kiosk-name">{content.ident}</p>}
      {content?.note && <p class="kiosk-note">{content.note}</p>}
    </div>
  )
}

export function QueueBanner(props: { queued: number; refused: string | undefined }) {
  if (props.queued === 0 && !props.refused) return null
  return (
    <div class="kiosk-banner">
      {props.queued > 0 && <p>{scans(props.queued)} waiting to sync</p>}
      {props.refused && <p>{props.refused}</p>}
    </div>
  )
}
