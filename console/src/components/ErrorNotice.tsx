import { useContext } from 'preact/hooks'
import { AttendanceApiError } from '../../../packages/client/src/client.js'
import { ROLE_WORDS } from '../access.js'
import type { Problem } from '../api.js'
import { SignedInContext, type Who } from '../context.js'

/** Where a refusal is read: a sign-in form (nobody is signed in yet), or a page of a key or a person. */
type Situation = 'key-sign-in' | 'sign-in' | Who

/**
 * What a refusal says: the API's own message, except a missing scope for a person, which the API words
 * for a key (`This key lacks the scope …`) and the console for a role.
 */
function messageOf(error: Problem, situation: Situation): string {
  if (typeof situation === 'object' && situation.kind === 'person' && error.code === 'missing_scope') {
    const scope = /scope (\S+)/.exec(error.message)?.[1]
    return `Your role in ${situation.account.name}, ${ROLE_WORDS[situation.role]}, does not allow this${scope ? ` (it needs ${scope})` : ''}.`
  }
  return error.message
}

/** What to do about a refused request; the message says what was wrong. */
function advice(error: Problem, situation: Situation): string | undefined {
  if (!(error instanceof AttendanceApiError)) return undefined
  if (situation === 'sign-in') return undefined
  if (situation === 'key-sign-in') {
    return error.status === 401
      ? 'Check that the whole key was pasted, and that it has not been revoked or expired.'
      : undefined
  }
  if (situation.kind === 'key') {
    if (error.status === 401)
      return 'The API no longer accepts this key (revoked or expired). Sign out, then sign in with a valid key.'
    if (error.type === 'insufficient_scope')
      return `Your key is valid but was not given this permission. Ask for a key with the scope named above (docs/console.md, "A key's scopes in the console").`
    return undefined
  }
  // A wrong current password is a 401 too, of a session that goes on.
  if (error.status === 401 && error.code !== 'invalid_credentials') return 'Sign in again.'
  if (error.code === 'csrf_token_invalid') return 'Reload the page, then try again.'
  if (error.code === 'missing_scope' || error.code === 'location_restricted')
    return 'An owner of the account can change your role or your sites.'
  return undefined
}

/**
 * A refusal, or a failure to reach the service, in words. `signingIn` on a sign-in form, where nobody
 * is signed in yet; elsewhere the signed-in key or person decides the advice.
 */
export function ErrorNotice({
  error,
  signingIn,
}: {
  error: Problem | undefined
  signingIn?: 'key' | 'password'
}) {
  const signedIn = useContext(SignedInContext)
  if (!error) return null
  const situation: Situation =
    signingIn === 'key' ? 'key-sign-in' : signingIn === 'password' ? 'sign-in' : (signedIn?.who ?? 'sign-in')
  const hint = advice(error, situation)
  return (
    <div class="notice notice-error" role="alert">
      <p>{messageOf(error, situation)}</p>
      {hint && <p>{hint}</p>}
      {error.requestId && <p class="muted">Request id: {error.requestId}</p>}
    </div>
  )
}
