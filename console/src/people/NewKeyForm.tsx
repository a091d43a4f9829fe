import { useState } from 'preact/hooks'
import type { CreatedApiKey } from '../../../packages/client/src/client.js'
import type { Scope } from '../access.js'
import { refusalOf } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field } from '../components/Field.js'
import { useSignedIn } from '../context.js'
import { useAction } from '../hooks.js'
import { ScopesField } from './ScopesField.js'
import { SitesField } from './SitesField.js'

const FORM_PARAMS = ['label', 'scopes', 'location_ids', 'expires_at']

/** The start of a day in the browser's zone, as the instant the API takes; undefined for no day. */
function startOfDay(date: string): string | undefined {
  if (date === '') return undefined
  const [year, month, day] = date.split('-').map(Number)
  return new Date(year ?? 0, (month ?? 1) - 1, day ?? 1).toISOString()
}

/**
 * `POST /v1/api-keys`: a key for an integration, in the mode the console is in (its sites are that
 * mode's locations), with a label, scopes, sites and an expiry; the answer's secret is shown once.
 */
export function NewKeyForm({ onCreated }: { onCreated: (key: CreatedApiKey) => void }) {
  const { api, mode } = useSignedIn()
  const action = useAction()
  const [label, setLabel] = useState('')
  const [scopes, setScopes] = useState<Scope[] | null>(null)
  const [sites, setSites] = useState<string[] | null>(null)
  const [expires, setExpires] = useState('')
  const submit = (event: Event) => {
    event.preventDefault()
    return action.run(async () => {
      const created = await api.apiKeys.create({
        label: label.trim(),
        mode,
        ...(scopes === null ? {} : { scopes }),
        location_ids: sites,
        expires_at: startOfDay(expires) ?? null,
      })
      setLabel('')
      setScopes(null)
      setSites(null)
      setExpires('')
      onCreated(created)
    })
  }
  const fieldRefused = FORM_PARAMS.some((param) => refusalOf(action.error, param) !== undefined)
  return (
    <form class="new-key-form" onSubmit={submit} aria-labelledby="new-key-heading">
      <h2 id="new-key-heading">New {mode} key</h2>
      <p class="muted field-hint">
        A key works in one mode: this one makes {mode} keys (switch the console to{' '}
        {mode === 'live' ? 'test' : 'live'} data for a {mode === 'live' ? 'test' : 'live'} key).
      </p>
      <div class="filters">
        <Field
          id="key-label"
          label="Label"
          required
          maxLength={100}
          value={label}
          onValue={setLabel}
          error={refusalOf(action.error, 'label')}
        />
        <Field
          id="key-expires"
          label="Stops working on (optional)"
          type="date"
          value={expires}
          onValue={setExpires}
          error={refusalOf(action.error, 'expires_at')}
        />
      </div>
      <ScopesField value={scopes} onValue={setScopes} error={refusalOf(action.error, 'scopes')} />
      <SitesField
        id="key-sites"
        legend="Sites"
        value={sites}
        onValue={setSites}
        error={refusalOf(action.error, 'location_ids')}
      />
      <button type="submit" disabled={action.pending}>
        Create the key
      </button>
      {!fieldRefused && <ErrorNotice error={action.error} />}
    </form>
  )
}
