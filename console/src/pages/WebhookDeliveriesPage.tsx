import { useState } from 'preact/hooks'
import type { WebhookDelivery, WebhookEndpoint } from '../../../packages/client/src/types.js'
import { pathOf } from '../api.js'
import { Badge, type Tone } from '../components/Badge.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { LoadMore } from '../components/LoadMore.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { localTime } from '../format.js'
import { useAction, useLoad, usePagedList } from '../hooks.js'
import { RecoverForm } from '../webhooks/RecoverForm.js'
import { EndpointStatus } from './WebhookEndpointsPage.js'

type DeliveryStatus = WebhookDelivery['status']
type Attempt = WebhookDelivery['attempts'][number]

const TONES: Record<DeliveryStatus, Tone> = { pending: 'warn', succeeded: 'good', failed: 'bad' }

/** Times of the delivery log are the browser's: deliveries belong to no location. */
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone

function AttemptsTable({ attempts }: { attempts: Attempt[] }) {
  if (attempts.length === 0) return <p class="muted">No attempt yet.</p>
  return (
    <table class="attempts">
      <caption class="visually-hidden">Attempts, oldest first</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Kind</th>
          <th scope="col">Status code</th>
          <th scope="col">Duration</th>
          <th scope="col">Error</th>
          <th scope="col">Response excerpt</th>
        </tr>
      </thead>
      <tbody>
        {attempts.map((attempt) => (
          <tr key={attempt.attempted_at}>
            <td>{localTime(attempt.attempted_at, zone)}</td>
            <td>{attempt.kind}</td>
            <td class="number">{attempt.status_code ?? '—'}</td>
            <td class="number">{attempt.duration_ms} ms</td>
            <td>{attempt.error ?? '—'}</td>
            <td>{attempt.response_excerpt ? <pre class="excerpt">{attempt.response_excerpt}</pre> : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/** One more attempt now, whatever the status (POST …/resend); the answer is the updated delivery. */
function DeliveryCard({
  delivery,
  onChanged,
}: {
  delivery: WebhookDelivery
  onChanged: (d: WebhookDelivery) => void
}) {
  const { api } = useSignedIn()
  const action = useAction()
  const resend = () =>
    action.run(async () =>
      onChanged(await api.post<WebhookDelivery>(pathOf('/v1/webhook-deliveries', delivery.id, 'resend'))),
    )
  return (
    <li class="delivery">
      <h2 class="delivery-heading">
        {delivery.event_type} <Badge tone={TONES[delivery.status]}>{delivery.status}</Badge>
      </h2>
      <p class="muted">
        Delivery <code>{delivery.id}</code> of event <code>{delivery.event_id}</code>, created{' '}
        {localTime(delivery.created, zone)}
        {delivery.next_attempt_at && `; next attempt ${localTime(delivery.next_attempt_at, zone)}`}
      </p>
      <AttemptsTable attempts={delivery.attempts} />
      <button
        type="button"
        onClick={resend}
        disabled={action.pending}
        aria-label={`Resend delivery ${delivery.id}`}
      >
        {action.pending ? 'Resending…' : 'Resend'}
      </button>
      <ErrorNotice error={action.error} />
    </li>
  )
}

export function WebhookDeliveriesPage({ endpointId }: { endpointId: string }) {
  const { api } = useSignedIn()
  const [status, setStatus] = useState<'' | DeliveryStatus>('')
  // A recovery changes deliveries of the log: it is read again from its first page.
  const [recoveries, setRecoveries] = useState(0)
  const endpoint = useLoad(
    () => api.get<WebhookEndpoint>(pathOf('/v1/webhook-endpoints', endpointId)),
    [api, endpointId],
  )
  const list = usePagedList<WebhookDelivery>(
    (cursor) =>
      api.list<WebhookDelivery>(
        '/v1/webhook-deliveries',
        { endpoint_id: endpointId, status, limit: 20 },
        cursor,
      ),
    [api, endpointId, status, recoveries],
  )
  return (
    <>
      <PageTitle>Delivery log</PageTitle>
      <ErrorNotice error={endpoint.error} />
      {endpoint.value && (
        <p>
          Endpoint <code>{endpoint.value.url}</code> <EndpointStatus endpoint={endpoint.value} />
        </p>
      )}
      <RecoverForm endpointId={endpointId} onRecovered={() => setRecoveries((count) => count + 1)} />
      <div class="filters">
        <div>
          <label for="delivery-status">Status</label>
          <select
            id="delivery-status"
            value={status}
            onChange={(event) => setStatus(event.currentTarget.value as '' | DeliveryStatus)}
          >
            <option value="">Any</option>
            <option value="pending">Pending</option>
            <option value="succeeded">Succeeded</option>
            <option value="failed">Failed</option>
          </select>
        </div>
      </div>
      <p class="muted">Newest first; times in your browser's zone ({zone}).</p>
      <ErrorNotice error={list.error} />
      <ul class="deliveries">
        {list.items.map((delivery) => (
          <DeliveryCard key={delivery.id} delivery={delivery} onChanged={list.replace} />
        ))}
      </ul>
      <LoadMore
        count={list.items.length}
        noun="deliveries"
        hasMore={list.hasMore}
        loading={list.loading}
        onLoadMore={list.loadMore}
      />
    </>
  )
}
