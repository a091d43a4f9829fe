import { useState } from 'preact/hooks'
import type { WebhookDelivery } from '../../../packages/client/src/client.js'
import { Badge, type Tone } from '../components/Badge.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Table } from '../components/Table.js'
import { useSignedIn } from '../context.js'
import { BROWSER_ZONE, count, localTime } from '../format.js'
import { useAction, useLoad } from '../hooks.js'

type DeliveryStatus = WebhookDelivery['status']
type Attempt = WebhookDelivery['attempts'][number]

const TONES: Record<DeliveryStatus, Tone> = { pending: 'warn', succeeded: 'good', failed: 'bad' }

/** Times of the delivery log are the browser's: deliveries belong to no location. */
const when = (iso: string) => localTime(iso, BROWSER_ZONE)

function AttemptsTable({ attempts }: { attempts: Attempt[] }) {
  if (attempts.length === 0) return <p class="muted">No attempt yet.</p>
  return (
    <Table
      caption="Attempts, oldest first"
      class="attempts"
      head={
        <>
          <th scope="col">When</th>
          <th scope="col">Kind</th>
          <th scope="col">Status code</th>
          <th scope="col">Duration</th>
          <th scope="col">Error</th>
          <th scope="col">Response excerpt</th>
        </>
      }
    >
      {attempts.map((attempt) => (
        <tr key={attempt.attempted_at}>
          <td>{when(attempt.attempted_at)}</td>
          <td>{attempt.kind}</td>
          <td class="number">{attempt.status_code ?? '—'}</td>
          <td class="number">{attempt.duration_ms} ms</td>
          <td>{attempt.error ?? '—'}</td>
          <td>{attempt.response_excerpt ? <pre class="excerpt">{attempt.response_excerpt}</pre> : '—'}</td>
        </tr>
      ))}
    </Table>
  )
}

/** The event the delivery sends, as `GET /v1/events/{id}` answers it: the body the endpoint receives. */
function EventPayload({ eventId }: { eventId: string }) {
  const { api } = useSignedIn()
  const event = useLoad(() => api.events.retrieve(eventId), [api, eventId])
  return (
    <>
      <h3>Event payload</h3>
      {event.loading && <p class="muted">Loading…</p>}
      <ErrorNotice error={event.error} />
      {event.value && (
        // A long payload scrolls in its box, which takes focus so that the keyboard can scroll it.
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled from the keyboard
        <section class="payload" aria-label={`Payload of event ${eventId}`} tabIndex={0}>
          <pre>{JSON.stringify(event.value, null, 2)}</pre>
        </section>
      )}
    </>
  )
}

/** "2 attempts, last HTTP 500": what the row says of its attempts. */
function attemptsText(delivery: WebhookDelivery): string {
  const last = delivery.attempts.at(-1)
  if (!last) return 'none yet'
  const outcome = last.status_code === null ? (last.error ?? 'no answer') : `HTTP ${last.status_code}`
  return `${count(delivery.attempts.length, 'attempt')}, last ${outcome}`
}

/**
 * One delivery as one compact row; **Details** opens a row under it with every attempt, the event's
 * payload (read only when opened) and **Resend** (`POST …/resend`, one more attempt now, whatever
 * the status; the answer is the updated delivery).
 */
export function DeliveryRows({
  delivery,
  endpoint,
  onChanged,
}: {
  delivery: WebhookDelivery
  /** How the endpoint is named in the row. */
  endpoint: string
  onChanged: (delivery: WebhookDelivery) => void
}) {
  const { api } = useSignedIn()
  const [open, setOpen] = useState(false)
  const action = useAction()
  const resend = () => action.run(async () => onChanged(await api.webhookDeliveries.resend(delivery.id)))
  const detailsId = `details-${delivery.id}`
  return (
    <>
      <tr>
        <td>{when(delivery.created)}</td>
        <td>{delivery.event_type}</td>
        <td class="endpoint">{endpoint}</td>
        <td>
          <Badge tone={TONES[delivery.status]}>{delivery.status}</Badge>
        </td>
        <td>
          {attemptsText(delivery)}
          {delivery.next_attempt_at && <div class="muted">next {when(delivery.next_attempt_at)}</div>}
        </td>
        <td>
          <button
            type="button"
            class="secondary"
            aria-expanded={open}
            aria-controls={open ? detailsId : undefined}
            aria-label={`Details of delivery ${delivery.id}`}
            onClick={() => setOpen(!open)}
          >
            Details
          </button>
        </td>
      </tr>
      {open && (
        <tr class="row-detail" id={detailsId}>
          <td colSpan={6}>
            <p class="muted">
              Delivery <code>{delivery.id}</code> of event <code>{delivery.event_id}</code>
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
            <EventPayload eventId={delivery.event_id} />
          </td>
        </tr>
      )}
    </>
  )
}
