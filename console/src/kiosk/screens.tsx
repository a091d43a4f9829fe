import type { RefObject } from 'preact'
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { Direction } from './storage.js'
import { scans } from './words.js'

/** What the feedback region says after a scan. */
export type FeedbackContent =
  | { kind: 'scan'; name: string; word: string; time: number; note?: string }
  | { kind: 'saved'; ident: string; time: number; note?: string }
  | { kind: 'refused'; ident: string; time: number; note: string }
  | { kind: 'repeat'; ident: string; note: string }

/**
 * Where the clock stands and how it writes: the location's time zone and locale (its BCP 47 tag, e.g.
 * `fr-FR`: a 24-hour clock and "mardi 3 mars"; `en-US`: "4:16:47 PM"), never the tablet's own, which
 * a gate's tablet may have in any language.
 */
export interface Place {
  timezone: string
  locale: string
}

const CLOCK_TIME: Intl.DateTimeFormatOptions = { hour: 'numeric', minute: '2-digit', second: '2-digit' }
const CLOCK_DATE: Intl.DateTimeFormatOptions = { weekday: 'long', day: 'numeric', month: 'long' }
export const SCAN_TIME: Intl.DateTimeFormatOptions = { hour: 'numeric', minute: '2-digit' }

/**
 * A formatter of the place's locale and zone (a locale the browser lacks falls back to its own). An
 * hour is written as the locale's clock reads: two digits on a 24-hour clock (`04:16`, fr-FR, en-GB),
 * one where it can on a 12-hour one (`4:16 AM`, en-US).
 */
export function formatterAt(place: Place, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const format = new Intl.DateTimeFormat(place.locale, { ...options, timeZone: place.timezone })
  const { hourCycle } = format.resolvedOptions()
  if (options.hour === undefined || hourCycle === 'h11' || hourCycle === 'h12') return format
  return new Intl.DateTimeFormat(place.locale, { ...options, hour: '2-digit', timeZone: place.timezone })
}

/** `options`: one of the constants above, so the formatter is made again only for another place. */
function useFormatter(place: Place, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const { timezone, locale } = place
  return useMemo(() => formatterAt({ timezone, locale }, options), [timezone, locale, options])
}

export function PairingScreen(props: {
  onPair: (code: string) => Promise<string | undefined>
  notice?: string
}) {
  const input = useRef<HTMLInputElement>(null)
  const [code, setCode] = useState('')
  const [error, setError] = useState<string>()
  const [pairing, setPairing] = useState(false)
  useFocusAtOnce(input)

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
          ref={input}
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

/**
 * A time in pieces: the day period (AM, PM, 오후…) apart from the digits, in the locale's order, so
 * it is set smaller beside them and a 12-hour time keeps to one line.
 */
function timePieces(format: Intl.DateTimeFormat, at: number): Array<{ text: string; dayPeriod: boolean }> {
  const pieces: Array<{ text: string; dayPeriod: boolean }> = []
  for (const part of format.formatToParts(at)) {
    const dayPeriod = part.type === 'dayPeriod'
    const last = pieces[pieces.length - 1]
    if (last?.dayPeriod === dayPeriod) last.text += part.value
    else pieces.push({ text: part.value, dayPeriod })
  }
  // The space between digits and day period is the layout's gap, not a character that may wrap.
  return pieces.map((piece) => ({ ...piece, text: piece.text.trim() })).filter((piece) => piece.text)
}

/** The time on the service's clock at the location, as its locale writes it, ticking each second. */
function Clock(props: { place: Place; now: () => number }) {
  const time = useFormatter(props.place, CLOCK_TIME)
  const date = useFormatter(props.place, CLOCK_DATE)
  const [now, setNow] = useState(props.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(props.now()), 1000)
    return () => clearInterval(timer)
  }, [props.now])
  return (
    <p class="kiosk-clock">
      <time class="kiosk-time" dateTime={new Date(now).toISOString()}>
        {timePieces(time, now).map((piece, index) => (
          // Keyed by place, not text: the same elements tick, and are not made again each second.
          <span key={index} class={piece.dayPeriod ? 'kiosk-day-period' : 'kiosk-hms'}>
            {piece.text}
          </span>
        ))}
      </time>
      <span class="kiosk-date">{date.format(now)}</span>
    </p>
  )
}

/**
 * The screen's input focused as the screen appears, not a frame later (`useEffect` waits for the
 * next paint): a worker types the PIN, or a reader the next badge, the moment the screen shows, and
 * keys typed before the focus came would be lost.
 */
function useFocusAtOnce(input: RefObject<HTMLInputElement>) {
  useLayoutEffect(() => input.current?.focus(), [input])
}

/**
 * Typing that lands outside any input (after a keypad key was pressed from the keyboard, or a click on
 * the page) goes to `input`: a badge reader types the next ident without looking where the focus is.
 * Space and Enter stay with the focused button, which they press.
 */
function useTypingGoesTo(input: RefObject<HTMLInputElement>) {
  useLayoutEffect(() => {
    const redirect = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null
      if (event.key.length !== 1 || event.key === ' ' || event.ctrlKey || event.metaKey || event.altKey)
        return
      if (target?.tagName === 'INPUT') return
      input.current?.focus()
    }
    document.addEventListener('keydown', redirect)
    return () => document.removeEventListener('keydown', redirect)
  }, [input])
}

/** What a keypad key does to the input's text. */
type Key = { text: string } | 'delete' | 'clear'

const DIGITS = ['1', '2', '3', '4', '5', '6', '7', '8', '9']
/** Idents such as `G-005`: the letters and the dash, beside the digits' own page. */
const LETTERS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ-']

/**
 * The on-screen keypad: digits, delete, clear, and with `letters` a key that turns it to A–Z and `-`
 * (and back), so an ident with letters is typed by touch alone. Its keys do not take the focus from
 * the input when touched (a reader's typing keeps going there); from the keyboard they are buttons
 * like any. Both pages are the same height: the actions below never move.
 */
export function Keypad(props: { onKey: (key: Key) => void; letters?: boolean }) {
  const [page, setPage] = useState<'digits' | 'letters'>('digits')
  const keep = (event: MouseEvent) => event.preventDefault()
  const character = (text: string, label?: string) => (
    <button
      key={text}
      type="button"
      onMouseDown={keep}
      onClick={() => props.onKey({ text })}
      aria-label={label}
    >
      {text}
    </button>
  )
  const clear = (
    <button
      key="clear"
      class="kiosk-key-clear"
      type="button"
      onMouseDown={keep}
      onClick={() => props.onKey('clear')}
    >
      Clear
    </button>
  )
  const remove = (
    <button
      key="delete"
      type="button"
      onMouseDown={keep}
      onClick={() => props.onKey('delete')}
      aria-label="Delete"
    >
      ⌫
    </button>
  )
  return (
    <fieldset class={`kiosk-keypad is-${page}`} aria-label="Keypad">
      {page === 'digits'
        ? [...DIGITS.map((digit) => character(digit)), clear, character('0'), remove]
        : [
            ...LETTERS.map((letter) => character(letter, letter === '-' ? 'Hyphen' : undefined)),
            remove,
            clear,
          ]}
      {props.letters && (
        <button
          key="page"
          class="kiosk-key-page"
          type="button"
          onMouseDown={keep}
          onClick={() => setPage(page === 'digits' ? 'letters' : 'digits')}
        >
          {page === 'digits' ? 'Letters' : 'Digits'}
        </button>
      )}
    </fieldset>
  )
}

function applyKey(value: string, key: Key): string {
  if (key === 'clear') return ''
  if (key === 'delete') return value.slice(0, -1)
  return value + key.text
}

export function IdleScreen(props: {
  locationName: string
  place: Place
  now: () => number
  onScan: (input: string, direction: Direction) => Promise<void>
}) {
  const input = useRef<HTMLInputElement>(null)
  const [value, setValue] = useState('')
  useFocusAtOnce(input)
  useTypingGoesTo(input)

  // Cleared and focused again at once: a badge reader types the next worker's ident straight in.
  function act(direction: Direction) {
    const typed = input.current?.value ?? value
    setValue('')
    input.current?.focus()
    void props.onScan(typed, direction)
  }

  return (
    <section class="kiosk-idle" aria-labelledby="location-name">
      <div class="kiosk-where">
        <h1 id="location-name">{props.locationName}</h1>
        <Clock place={props.place} now={props.now} />
      </div>
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
        <Keypad letters onKey={(key) => setValue((typed) => applyKey(typed, key))} />
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

/** A PIN pad left alone this long goes back to idle: the next worker must not scan under this ident. */
const PIN_IDLE_MS = 30_000

/**
 * The PIN pad, after the badge and the action at a device that requires PINs. `onPin` answers what to
 * say when the PIN was not taken (wrong: try again), or undefined when the pad's work is done. The
 * PIN lives in this input's value and the request that sends it, and nowhere else.
 */
export function PinPad(props: {
  ident: string
  action: string
  onPin: (pin: string) => Promise<string | undefined>
  onCancel: () => void
}) {
  const input = useRef<HTMLInputElement>(null)
  const [pin, setPin] = useState('')
  const [error, setError] = useState<string>()
  const [sending, setSending] = useState(false)
  const { onCancel } = props
  useFocusAtOnce(input)
  useTypingGoesTo(input)
  useLayoutEffect(() => {
    const cancelOnEscape = (event: KeyboardEvent) => {
      if (event.key === 'Escape') onCancel()
    }
    document.addEventListener('keydown', cancelOnEscape)
    return () => document.removeEventListener('keydown', cancelOnEscape)
  }, [onCancel])
  // Restarted by every key: only a pad nobody touches times out.
  useEffect(() => {
    const timer = setTimeout(onCancel, PIN_IDLE_MS)
    return () => clearTimeout(timer)
  }, [pin, onCancel])

  async function submit(event: Event) {
    event.preventDefault()
    if (sending) return
    if (!/^\d{4,8}$/.test(pin)) {
      setError('A PIN is 4 to 8 digits.')
      return input.current?.focus()
    }
    setSending(true)
    const refusal = await props.onPin(pin)
    setPin('')
    setSending(false)
    setError(refusal)
    input.current?.focus()
  }

  return (
    <section class="kiosk-pin" aria-labelledby="pin-title">
      <div class="kiosk-where">
        <h1 id="pin-title">Enter your PIN</h1>
        <p class="kiosk-who">
          {props.ident} · {props.action}
        </p>
      </div>
      <form class="kiosk-scan" onSubmit={submit}>
        <label for="pin">PIN</label>
        <input
          id="pin"
          ref={input}
          type="password"
          inputMode="numeric"
          autocomplete="off"
          maxLength={8}
          value={pin}
          onInput={(event) => setPin(event.currentTarget.value)}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'pin-error' : undefined}
        />
        {error && (
          <p id="pin-error" class="kiosk-error" role="alert">
            {error}
          </p>
        )}
        <Keypad onKey={(key) => setPin((typed) => applyKey(typed, key).slice(0, 8))} />
        <div class="kiosk-actions">
          <button type="submit" disabled={sending}>
            OK
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  )
}

/** A live region present from the start, so a screen reader announces what is put in it. */
export function Feedback(props: { content: FeedbackContent | undefined; place: Place }) {
  const time = useFormatter(props.place, SCAN_TIME)
  const content = props.content
  return (
    <div class={content ? `kiosk-feedback is-${content.kind}` : 'kiosk-feedback'} role="status">
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

/** The status line: the queue's length, and what the sync could not do (each note a line). */
export function QueueBanner(props: { queued: number; notes: string[] }) {
  if (props.queued === 0 && props.notes.length === 0) return null
  return (
    <div class="kiosk-banner">
      {props.queued > 0 && <p>{scans(props.queued)} waiting to sync</p>}
      {props.notes.map((note) => (
        <p key={note}>{note}</p>
      ))}
    </div>
  )
}
