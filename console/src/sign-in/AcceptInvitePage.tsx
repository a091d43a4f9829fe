import { useEffect, useState } from 'preact/hooks'
import type { AuthSession } from '../../../packages/client/src/client.js'
import { refusalOf, signedOutClient } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field } from '../components/Field.js'
import { PageTitle } from '../components/PageTitle.js'
import { useAction } from '../hooks.js'
import { useLinkToken } from './link-token.js'
import { NewPasswordField } from './NewPasswordField.js'
import { MissingToken } from './ResetPasswordPage.js'

const FIELDS = ['email', 'name', 'password']

/**
 * `/console/accept-invite#token=…`, an invitation's link (or the owner's set-up link that the first
 * `npm start` prints): the person's name and password, and for the set-up link the e-mail they will
 * sign in with; accepting signs them in.
 */
export function AcceptInvitePage({ onSignedIn }: { onSignedIn: (session: AuthSession) => void }) {
  const token = useLinkToken()
  const [email, setEmail] = useState('')
  const [name, setName] = useState('')
  const [password, setPassword] = useState('')
  // The set-up link names no person yet: the API asks for the e-mail, and the field appears.
  const [asksEmail, setAsksEmail] = useState(false)
  const action = useAction()
  const emailRefusal = refusalOf(action.error, 'email')
  useEffect(() => {
    if (emailRefusal !== undefined) setAsksEmail(true)
  }, [emailRefusal])

  const submit = (event: Event) => {
    event.preventDefault()
    if (token === undefined) return
    return action.run(async () => {
      const trimmedName = name.trim()
      onSignedIn(
        await signedOutClient().auth.acceptInvite({
          token,
          password,
          ...(trimmedName === '' ? {} : { name: trimmedName }),
          ...(asksEmail ? { email: email.trim() } : {}),
        }),
      )
    })
  }
  const fieldRefused = FIELDS.some((param) => refusalOf(action.error, param) !== undefined)
  return (
    <main class="sign-in">
      <PageTitle>Join the attendance console</PageTitle>
      {token === undefined ? (
        <MissingToken />
      ) : (
        <>
          <p>
            Choose the password you will sign in with. If you already sign in here for another account, enter
            that password.
          </p>
          <form onSubmit={submit} aria-label="Accept the invitation">
            {asksEmail && (
              <Field
                id="invite-email"
                label="Your e-mail (you sign in with it)"
                type="email"
                autocomplete="username"
                spellcheck={false}
                required
                value={email}
                onValue={setEmail}
                error={emailRefusal}
              />
            )}
            <Field
              id="invite-name"
              label="Your name"
              autocomplete="name"
              value={name}
              onValue={setName}
              error={refusalOf(action.error, 'name')}
            />
            <NewPasswordField
              id="invite-password"
              label="Password"
              value={password}
              onValue={setPassword}
              error={refusalOf(action.error, 'password')}
            />
            <button type="submit" disabled={action.pending}>
              {action.pending ? 'Joining…' : 'Join and sign in'}
            </button>
          </form>
          {!fieldRefused && <ErrorNotice error={action.error} signingIn="password" />}
        </>
      )}
    </main>
  )
}
