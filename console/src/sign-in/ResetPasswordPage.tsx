import { useState } from 'preact/hooks'
import { refusalOf, signedOutClient } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { PageTitle } from '../components/PageTitle.js'
import { useAction } from '../hooks.js'
import { Link } from '../router.js'
import { useLinkToken } from './link-token.js'
import { NewPasswordField } from './NewPasswordField.js'

/**
 * `/console/reset-password#token=…`, the link of a forgotten password (e-mailed, or printed by
 * `cli users reset-password`): a new password, then signing in with it (every session of the person
 * ended with the reset).
 */
export function ResetPasswordPage({ onDone }: { onDone: () => void }) {
  const token = useLinkToken()
  const [password, setPassword] = useState('')
  const action = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    if (token === undefined) return
    return action.run(async () => {
      await signedOutClient().auth.resetPassword({ token, password })
      onDone()
    })
  }
  return (
    <main class="sign-in">
      <PageTitle>Set a new password</PageTitle>
      {token === undefined ? (
        <MissingToken />
      ) : (
        <>
          <form onSubmit={submit} aria-label="Set a new password">
            <NewPasswordField
              id="new-password"
              label="New password"
              value={password}
              onValue={setPassword}
              error={refusalOf(action.error, 'password')}
            />
            <button type="submit" disabled={action.pending}>
              Set the password
            </button>
          </form>
          {!refusalOf(action.error, 'password') && <ErrorNotice error={action.error} signingIn="password" />}
        </>
      )}
    </main>
  )
}

/** A link cut short (a mail program that wrapped it, say): the page says what to do. */
export function MissingToken() {
  return (
    <div class="notice notice-error" role="alert">
      <p>This link is incomplete: open the whole link you were sent, or ask for a new one.</p>
      <p>
        <Link to="/">Go to signing in</Link>
      </p>
    </div>
  )
}
