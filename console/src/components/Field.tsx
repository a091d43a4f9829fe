import type { JSX } from 'preact'

/**
 * A form's input under its label, as every form of the console lays one out: the label names the
 * input (`for`), so a click on it focuses the input and a screen reader reads it; the form holds the
 * value and hears each change as text. Other attributes (`type`, `required`, …) go to the input.
 */
export function Field({
  id,
  label,
  value,
  onValue,
  ...input
}: Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'id' | 'label' | 'value' | 'onInput'> & {
  id: string
  label: string
  value: string
  onValue: (value: string) => void
}) {
  return (
    <div>
      <label for={id}>{label}</label>
      <input id={id} {...input} value={value} onInput={(event) => onValue(event.currentTarget.value)} />
    </div>
  )
}
