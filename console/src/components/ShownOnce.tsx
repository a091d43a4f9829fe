import type { ComponentChildren } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'

/**
 * A value the API answers once and never again (an invitation's link, a key's secret), in a panel
 * that takes the focus (so a screen reader reads it out) with **Copy** beside it, what to do with
 * it, and **Done**, after which it is gone from the page.
 */
export function ShownOnce({
  title,
  label,
  value,
  lost,
  done,
  onDone,
  children,
}: {
  title: string
  /** What the value is, naming its box. */
  label: string
  /**
   * Null when the API had it once already: the answer of a retried create (`Idempotency-Key` replay),
   * which the service cannot repeat; `lost` then says what to do instead.
   */
  value: string | null
  lost: string
  /** The closing button's words. */
  done: string
  onDone: () => void
  children: ComponentChildren
}) {
  const panel = useRef<HTMLElement>(null)
  const box = useRef<HTMLInputElement>(null)
  const [said, setSaid] = useState('')
  useEffect(() => panel.current?.focus(), [value])
  const copy = async (text: string) => {
    try {
      await navigator.clipboard.writeText(text)
      setSaid('Copied.')
    } catch {
      // No clipboard for a page served over plain HTTP to another machine: the text is selected instead.
      box.current?.select()
      setSaid('Selected: press Ctrl+C (⌘C on a Mac) to copy it.')
    }
  }
  return (
    <section ref={panel} class="pairing shown-once" aria-label={title} tabIndex={-1}>
      <h2>{title}</h2>
      {value === null ? (
        <p class="notice">{lost}</p>
      ) : (
        <div class="shown-once-value">
          <label for="shown-once" class="visually-hidden">
            {label}
          </label>
          <input
            ref={box}
            id="shown-once"
            class="secret"
            readOnly
            value={value}
            spellcheck={false}
            onFocus={(event) => event.currentTarget.select()}
          />
          <button type="button" onClick={() => copy(value)}>
            Copy
          </button>
        </div>
      )}
      <p class="muted" role="status">
        {said}
      </p>
      {children}
      <button type="button" class="secondary" onClick={onDone}>
        {done}
      </button>
    </section>
  )
}
