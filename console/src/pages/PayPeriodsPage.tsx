import { useState } from 'preact/hooks'
import type { PayPeriod } from '../../../packages/client/src/client.js'
import type { Problem } from '../api.js'
import { Badge } from '../components/Badge.js'
import { Confirm } from '../components/Confirm.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field } from '../components/Field.js'
import { PagedTable } from '../components/PagedTable.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { dayAfter } from '../dates.js'
import { BROWSER_ZONE, count, hours, localTime } from '../format.js'
import { useAction, usePagedList, useReturnFocus } from '../hooks.js'
import { Link } from '../router.js'

const rangeOf = (period: PayPeriod) => `${period.start_date} to ${period.end_date}`

/**
 * Why the API refused a close, and what to do: the API's message (with, for sessions still needing
 * work, their counts), then in words when a period not over can close (the API gives an instant
 * in UTC), or the review queue filtered to the period's work dates.
 */
function CloseRefusal({ period, error }: { period: PayPeriod; error: Problem | undefined }) {
  if (error?.code === 'period_not_over') {
    return (
      <div class="notice notice-error" role="alert">
        <p>{error.message}</p>
        <p>
          {`A pay period closes once it is over, when no session of its last day can still change: on ${dayAfter(period.end_date)}, once that day has begun in the time zone of every location.`}
        </p>
      </div>
    )
  }
  if (error?.code === 'pending_reviews') {
    const queue = `/review?work_date_from=${period.start_date}&work_date_to=${period.end_date}`
    return (
      <div class="notice notice-error" role="alert">
        <p>{error.message}</p>
        <p>
          Every session of the period must be approved or rejected, every open one checked out, and every
          forgotten check-out set, before it closes.{' '}
          <Link to={queue}>{`Review the pending sessions of ${rangeOf(period)}`}</Link>, then close again.
        </p>
      </div>
    )
  }
  return <ErrorNotice error={error} />
}

/**
 * What the close stored of a closed period's timesheet: the paid hours and their split, the breaks
 * the pay rules deducted, and how many operators worked; an open period has no totals yet.
 */
function PeriodTotals({ period }: { period: PayPeriod }) {
  const totals = period.totals
  if (!totals) return <span class="muted">when closed</span>
  return (
    <ul class="period-totals">
      <li>
        <strong>{hours(totals.hours)} paid</strong>, {count(totals.operators, 'operator')}
      </li>
      <li>
        regular {hours(totals.regular_hours)}, overtime {hours(totals.overtime_hours)}, double time{' '}
        {hours(totals.double_time_hours)}
      </li>
      <li>auto break {hours(totals.auto_break_hours)}</li>
    </ul>
  )
}

/**
 * A period's row, and under it, on request, the question before closing it and the API's refusal.
 * Reopening asks nothing: it changes no session, and the period can be closed again.
 */
function PeriodRows({ period, onChanged }: { period: PayPeriod; onChanged: (p: PayPeriod) => void }) {
  const { api, can } = useSignedIn()
  // Closing and reopening need both (the API's scopes of either).
  const closes = can('timesheets:write') && can('sessions:approve')
  const action = useAction()
  const [confirming, setConfirming] = useState(false)
  // After the question closes, focus goes back to the row's button rather than to the page's top.
  const button = useReturnFocus<HTMLButtonElement>()
  const range = rangeOf(period)
  const post = async (verb: 'close' | 'reopen') => {
    await action.run(async () =>
      onChanged(
        await (verb === 'close' ? api.payPeriods.close(period.id) : api.payPeriods.reopen(period.id)),
      ),
    )
    setConfirming(false)
    button.returnFocus()
  }
  return (
    <>
      <tr>
        <td>{range}</td>
        <td>
          {period.status === 'open' ? <Badge tone="neutral">open</Badge> : <Badge tone="good">closed</Badge>}
          {period.status === 'closed' && period.closed_at && (
            <div class="muted">
              <time class="time" dateTime={period.closed_at}>
                {localTime(period.closed_at, BROWSER_ZONE)}
              </time>
            </div>
          )}
        </td>
        <td>
          <PeriodTotals period={period} />
        </td>
        <td>
          <div class="actions">
            <Link
              to={`/timesheets?from=${period.start_date}&to=${period.end_date}`}
              aria-label={`Timesheet of ${range}`}
            >
              Timesheet
            </Link>
            {!closes ? null : period.status === 'open' ? (
              <button
                ref={button.ref}
                type="button"
                class="secondary"
                aria-expanded={confirming}
                onClick={() => setConfirming(true)}
                aria-label={`Close ${range}`}
              >
                Close
              </button>
            ) : (
              <button
                ref={button.ref}
                type="button"
                class="secondary"
                onClick={() => post('reopen')}
                disabled={action.pending}
                aria-label={`Reopen ${range}`}
              >
                Reopen
              </button>
            )}
          </div>
        </td>
      </tr>
      {(confirming || action.error) && (
        <tr class="row-detail">
          <td colSpan={4}>
            {confirming ? (
              <Confirm
                question={`Close the pay period ${range}?`}
                action="Close the period"
                pending={action.pending}
                onConfirm={() => post('close')}
                onCancel={() => {
                  setConfirming(false)
                  button.returnFocus()
                }}
              >
                <p>
                  Closing makes its timesheet final. Until it is reopened, no session whose work date is in it
                  can be created, edited, deleted, approved or rejected, and scans into it are refused.
                </p>
              </Confirm>
            ) : (
              <CloseRefusal period={period} error={action.error} />
            )}
          </td>
        </tr>
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
      onCreated(await api.payPeriods.create({ start_date: start, end_date: end }))
      setStart('')
      setEnd('')
    })
  }
  return (
    <form class="filters" onSubmit={submit} aria-label="New pay period">
      <Field
        id="period-start"
        label="New period from"
        type="date"
        required
        value={start}
        onValue={setStart}
      />
      <Field id="period-end" label="to" type="date" required value={end} onValue={setEnd} />
      <button type="submit" disabled={action.pending}>
        Create pay period
      </button>
      <ErrorNotice error={action.error} />
    </form>
  )
}

/** The account's pay periods, newest first: create, see the timesheet, close (after a question), reopen. */
export function PayPeriodsPage() {
  const { api, can } = useSignedIn()
  const [created, setCreated] = useState(0)
  const list = usePagedList((cursor) => api.payPeriods.list({ limit: 20, cursor }), [api, created])
  return (
    <>
      <PageTitle>Pay periods</PageTitle>
      <p class="muted">
        A closed period's timesheet is final: its sessions no longer change until it is reopened. A period can
        close once it is over and every session in it is reviewed.
      </p>
      {can('timesheets:write') && <NewPayPeriodForm onCreated={() => setCreated((count) => count + 1)} />}
      <PagedTable
        list={list}
        caption="Pay periods, newest first"
        noun={['pay period']}
        empty="No pay period yet."
        head={
          <>
            <th scope="col">Work dates</th>
            <th scope="col">Status</th>
            <th scope="col">Totals</th>
            <th scope="col">Actions</th>
          </>
        }
      >
        {list.items.map((period) => (
          <PeriodRows key={period.id} period={period} onChanged={list.replace} />
        ))}
      </PagedTable>
    </>
  )
}
