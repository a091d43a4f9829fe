import { AttendanceApiError } from '../../../packages/client/src/client.js'
import type { Problem } from '../api.js'

/** What to do about a refused request; the API's own message says what was wrong. */
function advice(error: Problem, signedIn: boolean): string | undefined {
  if (!(error instanceof AttendanceApiError)) return undefined
  if (error.status === 401) {
    return signedIn
      ? 'The API no longer accepts this key (revoked or expired). Sign out, then sign in with a valid key.'
      : 'Check that the whole key was pasted, and that it has not been revoked or expired.'
  }
  if (error.type === 'insufficient_scope') {
    return 'Your key is valid but was not given this permission. Ask for a key with the scope named above (see docs/console.md for a manager key).'
  }
  return undefined
}

/** `signedIn` false on the sign-in page, where there is no key to sign out of yet. */
export function ErrorNotice({ error, signedIn = true }: { error: Problem | undefined; signedIn?: boolean }) {
  if (!error) return null
  const hint = advice(error, signedIn)
  return (
    <div class="notice notice-error" role="alert">
      <p>{error.message}</p>
      {hint && <p>{hint}</p>}
      {error.requestId && <p class="muted">Request id: {error.requestId}</p>}
    </div>
  )
}
