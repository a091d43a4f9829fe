import { useState } from 'preact/hooks'
import { AttendanceInsufficientScopeError } from '../../../packages/client/src/client.js'
import { asProblem, ConsoleProblem, consoleClient, type Problem } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { modeOfKey } from '../session-key.js'
import { PASSWORD_FORM } from './forms.js'

/**
 * Asks the API whether it accepts the key. A 403 is an answer too: the key is genuine but lacks
 * sessions:read, and the pages it can use still work.
 */
async function checkKey(key: string): Promise<void> {
  try {
    await consoleClient({ apiKey: key }).sessions.list({ limit: 1 })
  } catch (error) {
    if (!(error instanceof AttendanceInsufficientScopeError)) throw error
  }
}

/** An integrator's way in: a pasted API key, kept in the tab's sessionStorage. */
export function KeySignIn({ onSignedIn }: { onSignedIn: (key: string) => void }) {
  const [key, setKey] = useState('')
  const [problem, setProblem] = useState<Problem | undefined>()
  const [checking, setChecking] = useState(false)

  const submit = async (event: Event) => {
    event.preventDefault()
    const trimmed = key.trim()
    if (!modeOfKey(trimmed)) {
      setProblem(new ConsoleProblem('invalid_key', 'An API key starts with sk_test_ or sk_live_.'))
      return
    }
    setChecking(true)
    setProblem(undefined)
    try {
      await checkKey(trimmed)
      onSignedIn(trimmed)
    } catch (error) {
      setProblem(asProblem(error))
      setChecking(false)
    }
  }

  return (
    <>
      <p>
        Paste an API key. It stays in this browser tab only (session storage) and is sent to this service
        alone; closing the tab or signing out forgets it.
      </p>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
          required
        />
        <button type="submit" disabled={checking}>
          {checking ? 'Checking…' : 'Sign in'}
        </button>
      </form>
      <ErrorNotice error={problem} signingIn="key" />
      <p class="sign-in-other">
        <a href={PASSWORD_FORM}>Sign in with your e-mail instead</a>
      </p>
    </>
  )
}
