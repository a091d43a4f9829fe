import type { TimesheetEntry } from '../../../packages/client/src/client.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { PagedTable } from '../components/PagedTable.js'
import { useSignedIn } from '../context.js'
import { count } from '../format.js'
import { type Loaded, useLoad, usePagedList } from '../hooks.js'
import { type TimesheetQuery, type TimesheetTotals, timesheetTotals } from './totals.js'

/** Entries have no id of their own: an operator has one per date (or week). */
type Row = TimesheetEntry & { id: string }

function amount(value: number): string {
  return value.toFixed(2)
}

/** The footer: the whole query's totals, whatever the pages shown, and saying so. */
function TotalRow({ totals }: { totals: Loaded<TimesheetTotals> }) {
  const value = totals.value
  const label = value
    ? value.complete
      ? `Total of all ${count(value.rows, 'row')}`
      : `Total of the first ${count(value.rows, 'row')} only`
    : totals.error
      ? 'Total not available'
      : 'Total: adding up every page…'
  const cell = (figure: (t: TimesheetTotals) => string) => (value ? figure(value) : '—')
  return (
    <tr>
      <th scope="row" colSpan={4}>
        {label}
      </th>
      <td class="number">{cell((t) => amount(t.hours))}</td>
      <td class="number pending-hours">{cell((t) => amount(t.pending_hours))}</td>
      <td class="number rejected-hours">{cell((t) => amount(t.rejected_hours))}</td>
      <td class="number">{cell((t) => String(t.sessions))}</td>
    </tr>
  )
}

/**
 * A timesheet as the API computes it: one row per operator and day (or week), by operator then
 * date, 100 rows a page; the total row adds up every page of the query. Hours that count, hours
 * pending review and rejected hours are separate columns: only the first are payable.
 */
export function TimesheetTable({ query }: { query: TimesheetQuery }) {
  const { api } = useSignedIn()
  const list = usePagedList<Row>(
    async (cursor) => {
      const page = await api.timesheets.list({ ...query, limit: 100, cursor })
      return {
        ...page,
        data: page.data.map((entry) => ({ ...entry, id: `${entry.operator_id}/${entry.date}` })),
      }
    },
    [api, query],
  )
  const totals = useLoad(() => timesheetTotals(api, query), [api, query])
  return (
    <>
      <PagedTable
        list={list}
        class="timesheet"
        caption={`Timesheet from ${query.from} to ${query.to}`}
        noun={['row']}
        empty="No session has a work date in these dates."
        head={
          <>
            <th scope="col">Operator</th>
            <th scope="col">Name</th>
            <th scope="col">Employee id</th>
            <th scope="col">{query.group_by === 'week' ? 'Week of' : 'Date'}</th>
            <th scope="col">Hours</th>
            <th scope="col" class="pending-hours">
              Pending review
            </th>
            <th scope="col" class="rejected-hours">
              Rejected
            </th>
            <th scope="col">Sessions</th>
          </>
        }
        foot={<TotalRow totals={totals} />}
      >
        {list.items.map((row) => (
          <tr key={row.id}>
            <td>{row.operator_ident}</td>
            <td>{row.name ?? '—'}</td>
            <td>{row.employee_id ?? '—'}</td>
            <td>{row.date}</td>
            <td class="number">{amount(row.hours)}</td>
            <td class="number pending-hours">{amount(row.pending_hours)}</td>
            <td class="number rejected-hours">{amount(row.rejected_hours)}</td>
            <td class="number">
              {row.sessions}
              {row.open_sessions > 0 && ` (${row.open_sessions} open)`}
            </td>
          </tr>
        ))}
      </PagedTable>
      {/* The rows and the totals are the same query: a refusal of both is said once. */}
      {!list.error && <ErrorNotice error={totals.error} />}
    </>
  )
}
