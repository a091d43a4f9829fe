import { useState } from 'preact/hooks'
import type { WebhookRecovery } from '../../../packages/client/src/client.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field } from '../components/Field.js'
import { useSignedIn } from '../context.js'
import { count } from '../format.js'
import { useAction } from '../hooks.js'

/** A `datetime-local` value is wall-clock time in the browser's zone; the API takes instants. */
function instantOf(local: string): string | undefined {
  return local === '' ? undefined : new Date(local).toISOString()
}

function summary(recovery: WebhookRecovery): string {
  return (
    `Recovered ${count(recovery.recovered, 'failed delivery', 'failed deliveries')} and ` +
    `created ${recovery.created} missed while the endpoint was disabled; they are being sent again.`
  )
}

/**
 * `POST …/recover`: failed deliveries of the window go back to pending, and events missed while the
 * endpoint was disabled get their deliveries (at most 14 days back, docs/webhooks.md).
 */
export function RecoverForm({ endpointId, onRecovered }: { endpointId: string; onRecovered: () => void }) {
  const { api } = useSignedIn()
  const action = useAction()
  const [since, setSince] = useState('')
  const [until, setUntil] = useState('')
  const [result, setResult] = useState<WebhookRecovery | undefined>()
  const submit = (event: Event) => {
    event.preventDefault()
    setResult(undefined)
    return action.run(async () => {
      const recovery = await api.webhookEndpoints.recover(endpointId, {
        // A required input: the form is not sent without it.
        since: new Date(since).toISOString(),
        until: instantOf(until),
      })
      setResult(recovery)
      onRecovered()
    })
  }
  return (
    <form class="filters" onSubmit={submit} aria-label="Recover deliveries">
      <Field
        id="recover-since"
        label="Recover since"
        type="datetime-local"
        required
        value={since}
        onValue={setSince}
      />
      <Field
        id="recover-until"
        label="until (optional)"
        type="datetime-local"
        value={until}
        onValue={setUntil}
      />
      <button type="submit" disabled={action.pending}>
        Recover
      </button>
      <p class="muted" aria-live="polite">
        {result && summary(result)}
      </p>
      <ErrorNotice error={action.error} />
    </form>
  )
}
