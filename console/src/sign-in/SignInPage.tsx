import type { AuthSession } from '../../../packages/client/src/client.js'
import { signedOutClient } from '../api.js'
import { PageTitle } from '../components/PageTitle.js'
import { useLoad } from '../hooks.js'
import { rememberSignedIn } from '../person-preferences.js'
import { addressQuery, useHash } from '../router.js'
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
          <SsoRefusal />
          <PasswordSignIn onSignedIn={onSession} />
          <SingleSignOn />
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

/**
 * "Sign in with SSO", when the service has single sign-on (`GET /v1/auth/methods`): a navigation to
 * the provider, which comes back to the console signed in (so the page asks for the session then).
 */
function SingleSignOn() {
  const methods = useLoad(() => signedOutClient().auth.methods(), [])
  if (!methods.value?.sso) return null
  return (
    <p class="sso">
      <a class="button-link" href="/v1/auth/sso/start" onClick={rememberSignedIn}>
        Sign in with SSO
      </a>
    </p>
  )
}

/** Why single sign-on sent the browser back here (`/console/sign-in?sso_error=…`), in words. */
function SsoRefusal() {
  const code = addressQuery().get('sso_error')
  if (code === null) return null
  return (
    <div class="notice notice-error" role="alert">
      <p>
        {code === 'sso_user_unknown'
          ? 'Single sign-on found nobody here with that verified e-mail: ask an owner of your account to invite you.'
          : 'Single sign-on did not finish (it took too long, or began in another browser): try again.'}
      </p>
    </div>
  )
}
