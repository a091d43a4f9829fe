import type { TimesheetEntry, TimesheetListParams } from '../../../packages/client/src/types.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { LoadMore } from '../components/LoadMore.js'
import { useSignedIn } from '../context.js'
import { usePagedList } from '../hooks.js'

export type TimesheetQuery = Omit<TimesheetListParams, 'limit' | 'cursor'>

/** Entries have no id of their own: an operator has one per date (or week). */
type Row = TimesheetEntry & { id: string }

function amount(value: number): string {
  return value.toFixed(2)
}

function sum(rows: Row[], field: 'hours' | 'pending_hours' | 'rejected_hours'): number {
  return rows.reduce((total, row) => total + row[field], 0)
}

/**
 * A timesheet as the API computes it: one row per operator and day (or week), by operator then
 * date. Hours that count, hours pending review and rejected hours are separate columns: only the
 * first are payable.
 */
export function TimesheetTable({ query }: { query: TimesheetQuery }) {
  const { api } = useSignedIn()
  const list = usePagedList<Row>(
    async (cursor) => {
      const page = await api.list<TimesheetEntry>('/v1/timesheets', { ...query, limit: 100 }, cursor)
      return {
        ...page,
        data: page.data.map((entry) => ({ ...entry, id: `${entry.operator_id}/${entry.date}` })),
      }
    },
    [api, query],
  )
  const period = query.group_by === 'week' ? 'Week of' : 'Date'
  return (
    <>
      <ErrorNotice error={list.error} />
      <table class="timesheet">
        <caption class="visually-hidden">{`Timesheet from ${query.from} to ${query.to}`}</caption>
        <thead>
          <tr>
            <th scope="col">Operator</th>
            <th scope="col">Name</th>
            <th scope="col">Employee id</th>
            <th scope="col">{period}</th>
            <th scope="col">Hours</th>
            <th scope="col" class="pending-hours">
              Pending review
            </th>
            <th scope="col" class="rejected-hours">
              Rejected
            </th>
            <th scope="col">Sessions</th>
          </tr>
        </thead>
        <tbody>
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
        </tbody>
        <tfoot>
          <tr>
            <th scope="row" colSpan={4}>
              {list.hasMore ? 'Total of the rows shown' : 'Total'}
            </th>
            <td class="number">{amount(sum(list.items, 'hours'))}</td>
            <td class="number pending-hours">{amount(sum(list.items, 'pending_hours'))}</td>
            <td class="number rejected-hours">{amount(sum(list.items, 'rejected_hours'))}</td>
            <td class="number">{list.items.reduce((total, row) => total + row.sessions, 0)}</td>
          </tr>
        </tfoot>
      </table>
      <LoadMore
        count={list.items.length}
        noun="rows"
        hasMore={list.hasMore}
        loading={list.loading}
        onLoadMore={list.loadMore}
      />
    </>
  )
}
