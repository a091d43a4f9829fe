import { useEffect, useRef, useState } from 'preact/hooks'
import type { WebhookEndpoint, WebhookEndpointWithSecret } from '../../../packages/client/src/client.js'
import { refusalOf } from '../api.js'
import { Badge } from '../components/Badge.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field } from '../components/Field.js'
import { PagedTable } from '../components/PagedTable.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { words } from '../format.js'
import { useAction, usePagedList } from '../hooks.js'
import { Link } from '../router.js'

export function EndpointStatus({ endpoint }: { endpoint: WebhookEndpoint }) {
  return endpoint.status === 'enabled' ? (
    <Badge tone="good">enabled</Badge>
  ) : (
    <Badge tone="bad">{`disabled: ${words(endpoint.disabled_reason)}`}</Badge>
  )
}

/** Re-enabling restarts the failure count; events of the disabled period are not sent (docs/webhooks.md). */
function ReEnableButton({
  endpoint,
  onChanged,
}: {
  endpoint: WebhookEndpoint
  onChanged: (endpoint: WebhookEndpoint) => void
}) {
  const { api } = useSignedIn()
  const action = useAction()
  if (endpoint.status === 'enabled') return null
  const reEnable = () =>
    action.run(async () => onChanged(await api.webhookEndpoints.update(endpoint.id, { status: 'enabled' })))
  return (
    <>
      <button
        type="button"
        class="secondary"
        onClick={reEnable}
        disabled={action.pending}
        aria-label={`Re-enable ${endpoint.url}`}
      >
        Re-enable
      </button>
      <ErrorNotice error={action.error} />
    </>
  )
}

const FORM_PARAMS = ['url', 'enabled_events', 'description']

/** `operator.created, session.*` → the list the API takes: each type or wildcard, once. */
function eventList(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter((type) => type !== ''))]
}

/**
 * A new endpoint: its HTTPS URL, the events it receives (exact types, `<resource>.*` or `*`) and a
 * description. The API answers its signing secret this once, which the page then shows.
 */
function NewEndpointForm({ onCreated }: { onCreated: (endpoint: WebhookEndpointWithSecret) => void }) {
  const { api } = useSignedIn()
  const action = useAction()
  const [url, setUrl] = useState('')
  const [events, setEvents] = useState('*')
  const [description, setDescription] = useState('')
  const submit = (event: Event) => {
    event.preventDefault()
    return action.run(async () => {
      const created = await api.webhookEndpoints.create({
        url: url.trim(),
        enabled_events: eventList(events),
        description: description.trim() || null,
      })
      setUrl('')
      setEvents('*')
      setDescription('')
      onCreated(created)
    })
  }
  const fieldError = FORM_PARAMS.some((param) => refusalOf(action.error, param) !== undefined)
  return (
    <form class="filters" onSubmit={submit} aria-label="New endpoint">
      <Field
        id="endpoint-url"
        label="URL (https)"
        type="url"
        required
        value={url}
        onValue={setUrl}
        error={refusalOf(action.error, 'url')}
      />
      <Field
        id="endpoint-events"
        label="Events (e.g. session.completed, operator.*, or * for all)"
        required
        value={events}
        onValue={setEvents}
        error={refusalOf(action.error, 'enabled_events')}
      />
      <Field
        id="endpoint-description"
        label="Description"
        value={description}
        onValue={setDescription}
        error={refusalOf(action.error, 'description')}
      />
      <button type="submit" disabled={action.pending}>
        Add endpoint
      </button>
      {!fieldError && <ErrorNotice error={action.error} />}
    </form>
  )
}

/**
 * The signing secret of the endpoint just added, as the API answered it: shown once, here, until
 * the manager is done with it (docs/webhooks.md says how the receiver checks signatures with it).
 */
function NewSecret({ endpoint, onDone }: { endpoint: WebhookEndpointWithSecret; onDone: () => void }) {
  const panel = useRef<HTMLElement>(null)
  // The panel takes the focus, so a screen reader reads the secret out.
  useEffect(() => panel.current?.focus(), [endpoint.id])
  return (
    <section ref={panel} class="pairing" aria-label="Signing secret" tabIndex={-1}>
      <h2>Endpoint added: its signing secret</h2>
      <p>
        <code class="secret">{endpoint.secret}</code>
      </p>
      <p>
        Copy it into the receiver at <code>{endpoint.url}</code> now: it verifies each delivery's signature
        with it, and it is not shown again (a new one can be made by rotating it).
      </p>
      <button type="button" class="secondary" onClick={onDone}>
        Done, the secret is kept
      </button>
    </section>
  )
}

export function WebhookEndpointsPage() {
  const { api } = useSignedIn()
  const [created, setCreated] = useState<WebhookEndpointWithSecret | undefined>()
  const list = usePagedList<WebhookEndpoint>(
    (cursor) => api.webhookEndpoints.list({ limit: 50, cursor }),
    [api, created?.id],
  )
  return (
    <>
      <PageTitle>Webhook endpoints</PageTitle>
      {created ? (
        <NewSecret endpoint={created} onDone={() => setCreated(undefined)} />
      ) : (
        <NewEndpointForm onCreated={setCreated} />
      )}
      <PagedTable
        list={list}
        caption="Webhook endpoints, newest first"
        noun={['endpoint']}
        empty="No webhook endpoint yet."
        head={
          <>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">Status</th>
            <th scope="col">Actions</th>
          </>
        }
      >
        {list.items.map((endpoint) => (
          <tr key={endpoint.id}>
            <td>
              <code>{endpoint.url}</code>
              {endpoint.description && <div class="muted">{endpoint.description}</div>}
            </td>
            <td>{endpoint.enabled_events.join(', ')}</td>
            <td>
              <EndpointStatus endpoint={endpoint} />
            </td>
            <td>
              <div class="actions">
                <Link
                  to={`/webhooks/${encodeURIComponent(endpoint.id)}`}
                  aria-label={`Delivery log of ${endpoint.url}`}
                >
                  Delivery log
                </Link>
                <ReEnableButton endpoint={endpoint} onChanged={list.replace} />
              </div>
            </td>
          </tr>
        ))}
      </PagedTable>
    </>
  )
}
