import { useState } from 'preact/hooks'
import { ROLE_WORDS } from '../access.js'
import { refusalOf } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field } from '../components/Field.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { useAction } from '../hooks.js'
import { NewPasswordField } from '../sign-in/NewPasswordField.js'

/** The signed-in person's own page: who they are, in which accounts, and a new password. */
export function MyAccountPage() {
  const { who } = useSignedIn()
  if (who.kind !== 'person') return null
  return (
    <>
      <PageTitle>My account</PageTitle>
      <dl class="fields">
        <dt>Name</dt>
        <dd>{who.user.name}</dd>
        <dt>E-mail</dt>
        <dd>{who.user.email}</dd>
        <dt>Role</dt>
        <dd>
          {who.accounts.map((account) => (
            <span key={account.id} class="role-in-account">
              {ROLE_WORDS[account.role]} in {account.name}
            </span>
          ))}
        </dd>
      </dl>
      <ChangePassword />
    </>
  )
}

/** `POST /v1/auth/password`: the current password proves it is them; the person's other sessions end. */
function ChangePassword() {
  const { api } = useSignedIn()
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [changed, setChanged] = useState(false)
  const action = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    setChanged(false)
    return action.run(async () => {
      await api.auth.changePassword({ current_password: current, new_password: next })
      setCurrent('')
      setNext('')
      setChanged(true)
    })
  }
  const currentRefused = refusalOf(action.error, 'current_password')
  const nextRefused = refusalOf(action.error, 'new_password')
  return (
    <section aria-labelledby="password-heading">
      <h2 id="password-heading">Change your password</h2>
      <form class="stacked-form" onSubmit={submit} aria-labelledby="password-heading">
        <Field
          id="current-password"
          label="Current password"
          type="password"
          autocomplete="current-password"
          required
          value={current}
          onValue={setCurrent}
          error={currentRefused}
        />
        <NewPasswordField
          id="new-password"
          label="New password"
          value={next}
          onValue={setNext}
          error={nextRefused}
        />
        <button type="submit" disabled={action.pending}>
          Change the password
        </button>
      </form>
      {currentRefused === undefined && nextRefused === undefined && <ErrorNotice error={action.error} />}
      {changed && (
        <p class="notice" role="status">
          Your password is changed. Everywhere else you were signed in, you are signed out.
        </p>
      )}
    </section>
  )
}
