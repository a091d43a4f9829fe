import type { JSX } from 'preact'

/** The API's message about a field, under it; the field names it in `aria-describedby`. */
function FieldError({ id, error }: { id: string; error: string | undefined }) {
  return error ? (
    <p id={`${id}-error`} class="field-error">
      {error}
    </p>
  ) : null
}

/** What marks a control as refused and ties the message to it, for a screen reader too. */
export function invalidAttributes(id: string, error: string | undefined) {
  return error ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {}
}

/**
 * A form's input under its label, as every form of the console lays one out: the label names the
 * input (`for`), so a click on it focuses the input and a screen reader reads it; the form holds the
 * value and hears each change as text. Other attributes (`type`, `required`, …) go to the input.
 * `error` is what the API said of this field (its envelope's `param` named it), shown under it.
 */
export function Field({
  id,
  label,
  value,
  onValue,
  error,
  ...input
}: Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'id' | 'label' | 'value' | 'onInput'> & {
  id: string
  label: string
  value: string
  onValue: (value: string) => void
  error?: string | undefined
}) {
  return (
    <div>
      <label for={id}>{label}</label>
      <input
        id={id}
        {...input}
        {...invalidAttributes(id, error)}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
      />
      <FieldError id={id} error={error} />
    </div>
  )
}

/**
 * Where a `SelectField` names its menu: under a visible label (`id` ties them), with what the API said
 * of the field under it, as a form lays it out; or `inline`, alone where a label would not fit (a
 * table's cell), named by `label` through `aria-label`, a refusal said beside it by the caller.
 */
type SelectPlacement =
  | { id: string; inline?: false; error?: string | undefined }
  | { id?: undefined; inline: true; error?: undefined }

/**
 * A choice among values under its label, laid out (and refused) as a `Field` is, or `inline`; every
 * menu of the console is one, its values fixed or read (the locations, the pay rules).
 */
export function SelectField<T extends string>({
  id,
  inline,
  label,
  value,
  onValue,
  options,
  disabled,
  error,
}: SelectPlacement & {
  label: string
  value: T
  onValue: (value: T) => void
  /** Each value with its words. */
  options: ReadonlyArray<readonly [T, string]>
  disabled?: boolean
}) {
  const select = (
    <select
      id={id}
      aria-label={inline ? label : undefined}
      {...(id === undefined ? {} : invalidAttributes(id, error))}
      value={value}
      disabled={disabled}
      onChange={(event) => onValue(event.currentTarget.value as T)}
    >
      {options.map(([option, words]) => (
        <option key={option} value={option}>
          {words}
        </option>
      ))}
    </select>
  )
  if (inline) return select
  return (
    <div>
      <label for={id}>{label}</label>
      {select}
      <FieldError id={id} error={error} />
    </div>
  )
}

/** A yes-or-no box before its label, laid out (and refused) as a `Field` is. */
export function CheckboxField({
  id,
  label,
  checked,
  onChecked,
  error,
}: {
  id: string
  label: string
  checked: boolean
  onChecked: (checked: boolean) => void
  error?: string | undefined
}) {
  return (
    <div class="checkbox-field">
      <input
        id={id}
        type="checkbox"
        {...invalidAttributes(id, error)}
        checked={checked}
        onChange={(event) => onChecked(event.currentTarget.checked)}
      />
      <label for={id}>{label}</label>
      <FieldError id={id} error={error} />
    </div>
  )
}
