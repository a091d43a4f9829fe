import { useState } from 'preact/hooks'
import type { PayPeriod } from '../../../packages/client/src/types.js'
import { type ApiError, pathOf } from '../api.js'
import { Badge } from '../components/Badge.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { LoadMore } from '../components/LoadMore.js'
import { useSignedIn } from '../context.js'
import { useAction, usePagedList } from '../hooks.js'
import { Link } from '../router.js'

/**
 * A close the API refused because sessions of the period still need work: the API's counts, what
 * to do, and the review queue filtered to the period's work dates.
 */
function PendingReviewsNotice({ period, error }: { period: PayPeriod; error: ApiError }) {
  const queue = `/review?work_date_from=${period.start_date}&work_date_to=${period.end_date}`
  return (
    <div class="notice notice-error" role="alert">
      <p>{error.message}</p>
      <p>
        Every session of the period must be approved or rejected, and every open one checked out, before it
        closes.{' '}
        <Link to={queue}>{`Review the pending sessions of ${period.start_date} to ${period.end_date}`}</Link>,
        then close again.
      </p>
    </div>
  )
}

/** Close (`POST …/close`) or reopen (`POST …/reopen`); the answer is the period as it now is. */
function PeriodAction({ period, onChanged }: { period: PayPeriod; onChanged: (p: PayPeriod) => void }) {
  const { api } = useSignedIn()
  const action = useAction()
  const verb = period.status === 'open' ? 'close' : 'reopen'
  const run = () =>
    action.run(async () => onChanged(await api.post<PayPeriod>(pathOf('/v1/pay-periods', period.id, verb))))
  const range = `${period.start_date} to ${period.end_date}`
  return (
    <>
      <button
        type="button"
        class="secondary"
        onClick={run}
        disabled={action.pending}
        aria-label={`${verb === 'close' ? 'Close' : 'Reopen'} ${range}`}
      >
        {verb === 'close' ? 'Close' : 'Reopen'}
      </button>
      {action.error?.code === 'pending_reviews' ? (
        <PendingReviewsNotice period={period} error={action.error} />
      ) : (
        <ErrorNotice error={action.error} />
      )}
    </>
  )
}

function NewPayPeriodForm({ onCreated }: { onCreated: (period: PayPeriod) => void }) {
  const { api } = useSignedIn()
  const action = useAction()
  const [start, setStart] = useState('')
  const [end, setEnd] = useState('')
  const submit = (event: Event) => {
    event.preventDefault()
    return action.run(async () => {
      onCreated(await api.post<PayPeriod>('/v1/pay-periods', { start_date: start, end_date: end }))
      setStart('')
      setEnd('')
    })
  }
  return (
    <form class="filters" onSubmit={submit}>
      <div>
        <label for="period-start">New period from</label>
        <input
          id="period-start"
          type="date"
          required
          value={start}
          onInput={(e) => setStart(e.currentTarget.value)}
        />
      </div>
      <div>
        <label for="period-end">to</label>
        <input
          id="period-end"
          type="date"
          required
          value={end}
          onInput={(e) => setEnd(e.currentTarget.value)}
        />
      </div>
      <button type="submit" disabled={action.pending}>
        Create pay period
      </button>
      <ErrorNotice error={action.error} />
    </form>
  )
}

/** The account's pay periods, newest first; `onShow` puts one's dates in the timesheet. */
export function PayPeriods({ onShow }: { onShow: (period: PayPeriod) => void }) {
  const { api } = useSignedIn()
  const [created, setCreated] = useState(0)
  const list = usePagedList<PayPeriod>(
    (cursor) => api.list<PayPeriod>('/v1/pay-periods', { limit: 10 }, cursor),
    [api, created],
  )
  return (
    <section aria-labelledby="pay-periods-heading">
      <h2 id="pay-periods-heading">Pay periods</h2>
      <NewPayPeriodForm onCreated={() => setCreated((count) => count + 1)} />
      <ErrorNotice error={list.error} />
      <table>
        <caption class="visually-hidden">Pay periods, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Work dates</th>
            <th scope="col">Status</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((period) => (
            <tr key={period.id}>
              <td>
                {period.start_date} to {period.end_date}
              </td>
              <td>
                {period.status === 'open' ? (
                  <Badge tone="neutral">open</Badge>
                ) : (
                  <Badge tone="good">closed</Badge>
                )}
              </td>
              <td>
                <div class="actions">
                  <button
                    type="button"
                    onClick={() => onShow(period)}
                    aria-label={`Show timesheet ${period.start_date} to ${period.end_date}`}
                  >
                    Show timesheet
                  </button>
                  <PeriodAction period={period} onChanged={list.replace} />
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <LoadMore
        count={list.items.length}
        noun="pay periods"
        hasMore={list.hasMore}
        loading={list.loading}
        onLoadMore={list.loadMore}
      />
    </section>
  )
}
