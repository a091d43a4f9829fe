import type { TimesheetEntry } from '../../../packages/client/src/client.js'
import { Badge, type Tone } from '../components/Badge.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { PagedTable } from '../components/PagedTable.js'
import { useSignedIn } from '../context.js'
import { count } from '../format.js'
import { type Loaded, useLoad, usePagedList } from '../hooks.js'
import {
  HOUR_FIELDS,
  type HourField,
  type TimesheetQuery,
  type TimesheetTotals,
  timesheetTotals,
} from './totals.js'

/** Entries have no id of their own: an operator has one per date (or week). */
type Row = TimesheetEntry & { id: string }

/**
 * Each column of hours: payable hours, their split by the pay rule (regular + overtime + double
 * time = hours) and the breaks it deducted, then the hours that are not payable (set apart).
 */
const HOUR_COLUMNS: Record<HourField, { label: string; class?: string }> = {
  hours: { label: 'Hours' },
  regular_hours: { label: 'Regular' },
  overtime_hours: { label: 'Overtime' },
  double_time_hours: { label: 'Double time' },
  auto_break_hours: { label: 'Auto break' },
  pending_hours: { label: 'Pending review', class: 'pending-hours' },
  rejected_hours: { label: 'Rejected', class: 'rejected-hours' },
}

/** What a row's flags say to a manager (docs/review-and-timesheets.md). */
const FLAGS: Record<TimesheetEntry['flags'][number], { words: string; tone: Tone }> = {
  missed_break: { words: 'Missed break', tone: 'bad' },
  open_session: { words: 'Open session', tone: 'warn' },
  pending_review: { words: 'Pending review', tone: 'warn' },
}

function amount(value: number): string {
  return value.toFixed(2)
}

function HourCells({ figures }: { figures: (field: HourField) => string }) {
  return (
    <>
      {HOUR_FIELDS.map((field) => (
        <td key={field} class={['number', HOUR_COLUMNS[field].class].filter(Boolean).join(' ')}>
          {figures(field)}
        </td>
      ))}
    </>
  )
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
  return (
    <tr>
      <th scope="row" colSpan={4}>
        {label}
      </th>
      <HourCells figures={(field) => (value ? amount(value[field]) : '—')} />
      <td class="number">{value ? String(value.sessions) : '—'}</td>
      <td />
    </tr>
  )
}

/**
 * A timesheet as the API computes it: one row per operator and day (or workweek, each operator's
 * own), by operator then date, 100 rows a page; the total row adds up every page of the query.
 * Hours that count, hours pending review and rejected hours are separate columns: only the first
 * are payable, and they are split by the operator's pay rule.
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
            {HOUR_FIELDS.map((field) => (
              <th key={field} scope="col" class={HOUR_COLUMNS[field].class}>
                {HOUR_COLUMNS[field].label}
              </th>
            ))}
            <th scope="col">Sessions</th>
            <th scope="col">Flags</th>
          </>
        }
        foot={<TotalRow totals={totals} />}
      >
        {list.items.map((row) => (
          <tr key={row.id}>
            <td>{row.operator_ident}</td>
            <td>{row.name ?? '—'}</td>
            <td>{row.employee_id ?? '—'}</td>
            <td class="date">{row.date}</td>
            <HourCells figures={(field) => amount(row[field])} />
            <td class="number">
              {row.sessions}
              {row.open_sessions > 0 && ` (${row.open_sessions} open)`}
            </td>
            {/* Empty without flags: a phone's card then leaves the line out (styles.css). */}
            <td>
              {row.flags.length > 0 && (
                <span class="flags">
                  {row.flags.map((flag) => (
                    <Badge key={flag} tone={FLAGS[flag].tone}>
                      {FLAGS[flag].words}
                    </Badge>
                  ))}
                </span>
              )}
            </td>
          </tr>
        ))}
      </PagedTable>
      {/* The rows and the totals are the same query: a refusal of both is said once. */}
      {!list.error && <ErrorNotice error={totals.error} />}
    </>
  )
}
