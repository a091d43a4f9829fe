import type { WebhookEndpoint } from '../../../packages/client/src/client.js'
import { Badge } from '../components/Badge.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
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

export function WebhookEndpointsPage() {
  const { api } = useSignedIn()
  const list = usePagedList<WebhookEndpoint>(
    (cursor) => api.webhookEndpoints.list({ limit: 50, cursor }),
    [api],
  )
  return (
    <>
      <PageTitle>Webhook endpoints</PageTitle>
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
