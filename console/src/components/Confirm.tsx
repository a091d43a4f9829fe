import type { ComponentChildren } from 'preact'
import { useEffect, useId, useRef } from 'preact/hooks'

/**
 * A question asked in the page before an action that is hard to undo (not `window.confirm`, which
 * a page cannot style, name or test well): what will happen, the action, and **Cancel**. Focus
 * moves to it when it opens, so a screen reader reads the question and Tab reaches the action;
 * Escape cancels.
 */
export function Confirm({
  question,
  children,
  action,
  pending,
  onConfirm,
  onCancel,
}: {
  question: string
  /** What the action does. */
  children: ComponentChildren
  /** The confirming button's text. */
  action: string
  pending: boolean
  onConfirm: () => void
  onCancel: () => void
}) {
  const box = useRef<HTMLFieldSetElement>(null)
  const id = useId()
  useEffect(() => box.current?.focus(), [])
  return (
    <fieldset
      ref={box}
      class="confirm"
      aria-describedby={id}
      tabIndex={-1}
      onKeyDown={(event) => {
        if (event.key === 'Escape') onCancel()
      }}
    >
      <legend class="confirm-question">{question}</legend>
      <div id={id}>{children}</div>
      <div class="actions">
        <button type="button" onClick={onConfirm} disabled={pending}>
          {pending ? 'Working…' : action}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </fieldset>
  )
}
