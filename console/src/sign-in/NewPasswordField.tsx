import { Field } from '../components/Field.js'

/** The API's rule for a password (decisions.md): 12 to 256 characters, not the e-mail. */
const MIN = 12
const MAX = 256

/** A new password's input, with the rule it must meet said under it before anything is sent. */
export function NewPasswordField({
  id,
  label,
  value,
  onValue,
  error,
}: {
  id: string
  label: string
  value: string
  onValue: (value: string) => void
  error?: string | undefined
}) {
  return (
    <>
      <Field
        id={id}
        label={label}
        type="password"
        autocomplete="new-password"
        minLength={MIN}
        maxLength={MAX}
        required
        value={value}
        onValue={onValue}
        error={error}
        aria-describedby={`${id}-rule`}
      />
      <p id={`${id}-rule`} class="muted field-hint">
        At least {MIN} characters, and not your e-mail.
      </p>
    </>
  )
}
