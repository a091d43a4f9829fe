import { useState } from 'preact/hooks'
import type { Session, SessionListParams } from '../../../packages/client/src/types.js'
import { ApiError } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { LoadMore } from '../components/LoadMore.js'
import { LocationSelect } from '../components/LocationSelect.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { hours, localTime, words } from '../format.js'
import { usePagedList } from '../hooks.js'
import { useLocation } from '../locations.js'
import { operatorIdOf } from '../operators.js'
import { Link } from '../router.js'

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

const EMPTY_FORM: FilterForm = {
  operatorIdent: '',
  deviceCode: '',
  locationId: '',
  status: '',
  flagged: '',
  from: '',
  to: '',
}

/** A date input's day, from midnight in the browser's zone, as the instant the API expects. */
function startOfDay(date: string): string | undefined {
  return date === '' ? undefined : new Date(`${date}T00:00:00`).toISOString()
}

function SessionFilters({ onApply }: { onApply: (filter: SessionFilter) => void }) {
  const { api } = useSignedIn()
  const [form, setForm] = useState(EMPTY_FORM)
  const [problem, setProblem] = useState<ApiError | undefined>()
  const field =
    (name: keyof FilterForm) => (event: { currentTarget: HTMLInputElement | HTMLSelectElement }) =>
      setForm({ ...form, [name]: event.currentTarget.value })

  const submit = async (event: Event) => {
    event.preventDefault()
    setProblem(undefined)
    let operatorId: string | undefined
    if (form.operatorIdent.trim() !== '') {
      try {
        operatorId = await operatorIdOf(api, form.operatorIdent.trim())
      } catch (error) {
        setProblem(error instanceof ApiError ? error : new ApiError(0, 'client_error', String(error)))
        return
      }
    }
    onApply({
      operator_id: operatorId,
      device_id: form.deviceCode.trim() || undefined,
      location_id: form.locationId || undefined,
      status: form.status || undefined,
      is_flagged: form.flagged === '' ? undefined : form.flagged === 'true',
      check_in_from: startOfDay(form.from),
      check_in_to: startOfDay(form.to),
    })
  }

  return (
    <form class="filters" onSubmit={submit}>
      <div>
        <label for="filter-operator">Operator ident</label>
        <input id="filter-operator" value={form.operatorIdent} onInput={field('operatorIdent')} />
      </div>
      <div>
        <label for="filter-device">Device code</label>
        <input id="filter-device" value={form.deviceCode} onInput={field('deviceCode')} />
      </div>
      <div>
        <label for="filter-location">Location</label>
        <LocationSelect
          id="filter-location"
          value={form.locationId}
          onChange={(locationId) => setForm({ ...form, locationId })}
        />
      </div>
      <div>
        <label for="filter-status">Status</label>
        <select id="filter-status" value={form.status} onChange={field('status')}>
          <option value="">Any</option>
          <option value="open">Open</option>
          <option value="completed">Completed</option>
        </select>
      </div>
      <div>
        <label for="filter-flagged">Flagged</label>
        <select id="filter-flagged" value={form.flagged} onChange={field('flagged')}>
          <option value="">Any</option>
          <option value="true">Flagged</option>
          <option value="false">Not flagged</option>
        </select>
      </div>
      <div>
        <label for="filter-from">Check-in from</label>
        <input id="filter-from" type="date" value={form.from} onInput={field('from')} />
      </div>
      <div>
        <label for="filter-to">Check-in before</label>
        <input id="filter-to" type="date" value={form.to} onInput={field('to')} />
      </div>
      <button type="submit">Apply filters</button>
      <ErrorNotice error={problem} />
    </form>
  )
}

function SessionRow({ session }: { session: Session }) {
  const { location, ready, timeZone } = useLocation(session.location_id)
  const time = (iso: string) => (ready ? localTime(iso, timeZone) : '…')
  return (
    <tr>
      <td>
        <Link to={`/sessions/${encodeURIComponent(session.id)}`}>{time(session.check_in.time)}</Link>
      </td>
      <td>{session.check_out ? time(session.check_out.time) : '—'}</td>
      <td>{session.operator_ident}</td>
      <td>{location?.name ?? session.location_id ?? '—'}</td>
      <td class="number">{hours(session.total_hours)}</td>
      <td>{session.status}</td>
      <td>{session.is_flagged ? words(session.flag_reason) : '—'}</td>
    </tr>
  )
}

export function SessionsPage() {
  const { api } = useSignedIn()
  const [filter, setFilter] = useState<SessionFilter>({})
  const list = usePagedList<Session>(
    (cursor) => api.list<Session>('/v1/sessions', { ...filter, limit: 50 }, cursor),
    [api, filter],
  )
  return (
    <>
      <PageTitle>Sessions</PageTitle>
      <SessionFilters onApply={setFilter} />
      <p class="muted">
        Newest first. Times are local to each session's location; dates in the filters are days in your
        browser's time zone.
      </p>
      <ErrorNotice error={list.error} />
      <table>
        <caption class="visually-hidden">Sessions, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Check-in</th>
            <th scope="col">Check-out</th>
            <th scope="col">Operator</th>
            <th scope="col">Location</th>
            <th scope="col">Hours</th>
            <th scope="col">Status</th>
            <th scope="col">Flag</th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((session) => (
            <SessionRow key={session.id} session={session} />
          ))}
        </tbody>
      </table>
      <LoadMore
        count={list.items.length}
        noun="sessions"
        hasMore={list.hasMore}
        loading={list.loading}
        onLoadMore={list.loadMore}
      />
    </>
  )
}
