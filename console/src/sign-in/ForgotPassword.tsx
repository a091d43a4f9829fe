import { useState } from 'preact/hooks'
import { signedOutClient } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field } from '../components/Field.js'
import { useAction } from '../hooks.js'
import { PASSWORD_FORM } from './forms.js'

/**
 * Asks for a reset link (`POST /v1/auth/forgot-password`). The API answers alike whether or not the
 * e-mail has a login, so the page says what happens in both cases, and what to do where the service
 * sends no e-mail.
 */
export function ForgotPassword() {
  const [email, setEmail] = useState('')
  const [sentTo, setSentTo] = useState<string | undefined>()
  const action = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    return action.run(async () => {
      await signedOutClient().auth.forgotPassword({ email: email.trim() })
      setSentTo(email.trim())
    })
  }
  return (
    <>
      <p>
        Enter the e-mail you sign in with: a link to set a new password is sent to it, valid for one hour.
      </p>
      <form onSubmit={submit} aria-label="Send a reset link">
        <Field
          id="reset-email"
          label="E-mail"
          type="email"
          autocomplete="username"
          spellcheck={false}
          required
          value={email}
          onValue={setEmail}
        />
        <button type="submit" disabled={action.pending}>
          Send the link
        </button>
      </form>
      <ErrorNotice error={action.error} signingIn="password" />
      {sentTo !== undefined && (
        <div class="notice" role="status">
          <p>If {sentTo} has a login here, a link is on its way to it.</p>
          <p>
            Nothing arrives? Where the service sends no e-mail, whoever runs it can print your link, or an
            owner of your account can help.
          </p>
        </div>
      )}
      <p class="sign-in-other">
        <a href={PASSWORD_FORM}>Back to signing in</a>
      </p>
    </>
  )
}
