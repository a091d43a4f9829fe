import { useState } from 'preact/hooks'
import type { WebhookDelivery } from '../../../packages/client/src/client.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { SelectField } from '../components/Field.js'
import { PagedTable } from '../components/PagedTable.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { BROWSER_ZONE } from '../format.js'
import { useLoad, usePagedList } from '../hooks.js'
import { DeliveryRows } from './DeliveryRows.js'
import { RecoverForm } from './RecoverForm.js'
import { EndpointStatus } from './WebhookEndpointsPage.js'

type DeliveryStatus = WebhookDelivery['status']

const STATUS_OPTIONS: ReadonlyArray<readonly ['' | DeliveryStatus, string]> = [
  ['', 'Any'],
  ['pending', 'Pending'],
  ['succeeded', 'Succeeded'],
  ['failed', 'Failed'],
]

export function WebhookDeliveriesPage({ endpointId }: { endpointId: string }) {
  const { api } = useSignedIn()
  const [status, setStatus] = useState<'' | DeliveryStatus>('')
  // A recovery changes deliveries of the log: it is read again from its first page.
  const [recoveries, setRecoveries] = useState(0)
  const endpoint = useLoad(() => api.webhookEndpoints.retrieve(endpointId), [api, endpointId])
  const list = usePagedList(
    (cursor) =>
      api.webhookDeliveries.list({ endpoint_id: endpointId, status: status || undefined, limit: 50, cursor }),
    [api, endpointId, status, recoveries],
  )
  const endpointName = endpoint.value?.description ?? endpoint.value?.url ?? endpointId
  // An endpoint that cannot be read has no log to show: its refusal is said once.
  if (endpoint.error) {
    return (
      <>
        <PageTitle>Delivery log</PageTitle>
        <ErrorNotice error={endpoint.error} />
      </>
    )
  }
  return (
    <>
      <PageTitle>Delivery log</PageTitle>
      {endpoint.value && (
        <p>
          Endpoint <code>{endpoint.value.url}</code> <EndpointStatus endpoint={endpoint.value} />
        </p>
      )}
      <RecoverForm endpointId={endpointId} onRecovered={() => setRecoveries((count) => count + 1)} />
      <div class="filters">
        <SelectField
          id="delivery-status"
          label="Status"
          value={status}
          onValue={setStatus}
          options={STATUS_OPTIONS}
        />
      </div>
      <p class="muted">Newest first; times in your browser's zone ({BROWSER_ZONE}).</p>
      <PagedTable
        list={list}
        class="deliveries"
        caption="Deliveries, newest first"
        noun={['delivery', 'deliveries']}
        empty={status === '' ? 'No delivery yet.' : `No delivery is ${status}.`}
        head={
          <>
            <th scope="col">Created</th>
            <th scope="col">Event</th>
            <th scope="col">Endpoint</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">
              <span class="visually-hidden">Details</span>
            </th>
          </>
        }
      >
        {list.items.map((delivery) => (
          <DeliveryRows
            key={delivery.id}
            delivery={delivery}
            endpoint={endpointName}
            onChanged={list.replace}
          />
        ))}
      </PagedTable>
    </>
  )
}
