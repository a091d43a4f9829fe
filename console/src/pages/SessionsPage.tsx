import { useState } from 'preact/hooks'
import type { Session, SessionListParams } from '../../../packages/client/src/client.js'
import { Field, SelectField } from '../components/Field.js'
import { LocationSelect } from '../components/LocationSelect.js'
import { PagedTable } from '../components/PagedTable.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { checkOutText, flagReason, hours, localTime } from '../format.js'
import { usePagedList } from '../hooks.js'
import { useLocation } from '../locations.js'
import { OperatorName } from '../operators.js'
import { addressQuery, Link } from '../router.js'

type SessionFilter = Omit<SessionListParams, 'limit' | 'cursor'>

/** What the filter form holds: text as typed, turned into API filters on submit. */
interface FilterForm {
  operatorIdent: string
  deviceCode: string
  locationId: string
  status: '' | 'open' | 'completed'
  flagged: '' | 'true' | 'false'
  from: string
  to: string
}

const STATUS_OPTIONS: ReadonlyArray<readonly [FilterForm['status'], string]> = [
  ['', 'Any'],
  ['open', 'Open'],
  ['completed', 'Completed'],
]

const FLAGGED_OPTIONS: ReadonlyArray<readonly [FilterForm['flagged'], string]> = [
  ['', 'Any'],
  ['true', 'Flagged'],
  ['false', 'Not flagged'],
]

/** The form as a link opened it: the home page links to `/sessions?status=open`. */
function formFromAddress(): FilterForm {
  const status = addressQuery().get('status')
  return {
    operatorIdent: '',
    deviceCode: '',
    locationId: '',
    status: status === 'open' || status === 'completed' ? status : '',
    flagged: '',
    from: '',
    to: '',
  }
}

/** A date input's day, from midnight in the browser's zone, as the instant the API expects. */
function startOfDay(date: string): string | undefined {
  return date === '' ? undefined : new Date(`${date}T00:00:00`).toISOString()
}

function filterOf(form: FilterForm): SessionFilter {
  return {
    operator_ident: form.operatorIdent.trim() || undefined,
    device_id: form.deviceCode.trim() || undefined,
    location_id: form.locationId || undefined,
    status: form.status || undefined,
    is_flagged: form.flagged === '' ? undefined : form.flagged === 'true',
    check_in_from: startOfDay(form.from),
    check_in_to: startOfDay(form.to),
  }
}

function SessionFilters({
  initial,
  onApply,
}: {
  initial: FilterForm
  onApply: (filter: SessionFilter) => void
}) {
  const [form, setForm] = useState(initial)
  const set = (name: keyof FilterForm) => (value: string) => setForm({ ...form, [name]: value })

  const submit = (event: Event) => {
    event.preventDefault()
    onApply(filterOf(form))
  }

  return (
    <form class="filters" onSubmit={submit}>
      <Field
        id="filter-operator"
        label="Operator ident"
        value={form.operatorIdent}
        onValue={set('operatorIdent')}
      />
      <Field id="filter-device" label="Device code" value={form.deviceCode} onValue={set('deviceCode')} />
      <LocationSelect
        id="filter-location"
        value={form.locationId}
        onChange={(locationId) => setForm({ ...form, locationId })}
      />
      <SelectField
        id="filter-status"
        label="Status"
        value={form.status}
        onValue={set('status')}
        options={STATUS_OPTIONS}
      />
      <SelectField
        id="filter-flagged"
        label="Flagged"
        value={form.flagged}
        onValue={set('flagged')}
        options={FLAGGED_OPTIONS}
      />
      <Field id="filter-from" label="Check-in from" type="date" value={form.from} onValue={set('from')} />
      <Field id="filter-to" label="Check-in before" type="date" value={form.to} onValue={set('to')} />
      <button type="submit">Apply filters</button>
    </form>
  )
}

function SessionRow({ session }: { session: Session }) {
  const { location, ready, timeZone } = useLocation(session.location_id)
  const time = (iso: string) => (ready ? localTime(iso, timeZone) : '…')
  return (
    <tr>
      <td class="time">
        <Link to={`/sessions/${encodeURIComponent(session.id)}`}>{time(session.check_in.time)}</Link>
      </td>
      <td class="time">{checkOutText(session, time)}</td>
      <td>
        <OperatorName id={session.operator_id} ident={session.operator_ident} />
      </td>
      <td>{location?.name ?? session.location_id ?? '—'}</td>
      <td class="number">{hours(session.total_hours)}</td>
      <td>{session.status}</td>
      <td>{session.is_flagged ? flagReason(session.flag_reason) : '—'}</td>
    </tr>
  )
}

export function SessionsPage() {
  const { api } = useSignedIn()
  const [initial] = useState(formFromAddress)
  const [filter, setFilter] = useState<SessionFilter>(() => filterOf(initial))
  const list = usePagedList((cursor) => api.sessions.list({ ...filter, limit: 50, cursor }), [api, filter])
  return (
    <>
      <PageTitle>Sessions</PageTitle>
      <SessionFilters initial={initial} onApply={setFilter} />
      <p class="muted">
        Newest first. Times are local to each session's location; dates in the filters are days in your
        browser's time zone.
      </p>
      <PagedTable
        list={list}
        caption="Sessions, newest first"
        noun={['session']}
        empty="No session matches these filters."
        head={
          <>
            <th scope="col">Check-in</th>
            <th scope="col">Check-out</th>
            <th scope="col">Operator</th>
            <th scope="col">Location</th>
            <th scope="col">Hours</th>
            <th scope="col">Status</th>
            <th scope="col">Flag</th>
          </>
        }
      >
        {list.items.map((session) => (
          <SessionRow key={session.id} session={session} />
        ))}
      </PagedTable>
    </>
  )
}
