import { useState } from 'preact/hooks'
import type { AuthSession } from '../../../packages/client/src/client.js'
import { signedOutClient } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field } from '../components/Field.js'
import { useAction } from '../hooks.js'

/** A person's way in: e-mail and password (`POST /v1/auth/sign-in`, which sets the session cookie). */
export function PasswordSignIn({
  email: initialEmail = '',
  onSignedIn,
}: {
  email?: string
  onSignedIn: (session: AuthSession) => void
}) {
  const [email, setEmail] = useState(initialEmail)
  const [password, setPassword] = useState('')
  const action = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    return action.run(async () => {
      onSignedIn(await signedOutClient().auth.signIn({ email: email.trim(), password }))
    })
  }
  return (
    <>
      <form onSubmit={submit} aria-label="Sign in with e-mail and password">
        <Field
          id="email"
          label="E-mail"
          type="email"
          autocomplete="username"
          spellcheck={false}
          required
          value={email}
          onValue={setEmail}
        />
        <Field
          id="password"
          label="Password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
        <button type="submit" disabled={action.pending}>
          {action.pending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorNotice error={action.error} signingIn="password" />
    </>
  )
}
