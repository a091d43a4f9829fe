import type { AuthSession } from '../../../packages/client/src/client.js'
import { PageTitle } from '../components/PageTitle.js'
import { useHash } from '../router.js'
import { ForgotPassword } from './ForgotPassword.js'
import { FORGOT_FORM, KEY_FORM } from './forms.js'
import { KeySignIn } from './KeySignIn.js'
import { PasswordSignIn } from './PasswordSignIn.js'

/**
 * Signing in: people with their e-mail and password (or single sign-on, when the service offers
 * it); integrators with an API key, behind "Use an API key". `notice` says why the page shows (a
 * sign-in that ended, a password just set).
 */
export function SignInPage({
  notice,
  onKey,
  onSession,
}: {
  notice?: string | undefined
  onKey: (key: string) => void
  onSession: (session: AuthSession) => void
}) {
  const hash = useHash()
  const form = hash === KEY_FORM ? 'key' : hash === FORGOT_FORM ? 'forgot' : 'password'
  const title = { key: 'Sign in with an API key', forgot: 'Forgotten password', password: 'Sign in' }[form]
  return (
    <main class="sign-in">
      <PageTitle>{title}</PageTitle>
      {notice && form === 'password' && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {form === 'key' && <KeySignIn onSignedIn={onKey} />}
      {form === 'forgot' && <ForgotPassword />}
      {form === 'password' && (
        <>
          <PasswordSignIn onSignedIn={onSession} />
          <ul class="sign-in-other">
            <li>
              <a href={FORGOT_FORM}>Forgot your password?</a>
            </li>
            <li>
              <a href={KEY_FORM}>Use an API key</a>
            </li>
          </ul>
        </>
      )}
    </main>
  )
}
