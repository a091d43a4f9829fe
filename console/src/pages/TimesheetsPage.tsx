import { useState } from 'preact/hooks'
import { PageTitle } from '../components/PageTitle.js'
import { monthOf } from '../dates.js'
import { addressQuery, Link } from '../router.js'
import { CsvDownload } from '../timesheets/CsvDownload.js'
import { TimesheetFilters, type TimesheetForm } from '../timesheets/TimesheetForm.js'
import { TimesheetTable } from '../timesheets/TimesheetTable.js'
import type { TimesheetQuery } from '../timesheets/totals.js'

/**
 * The dates a link opened the page with (a pay period's, `?from=…&to=…`, from the Pay periods and
 * home pages), else the current month; per day.
 */
function initialForm(): TimesheetForm {
  const params = addressQuery()
  const month = monthOf(new Date())
  return {
    from: params.get('from') ?? month.from,
    to: params.get('to') ?? month.to,
    groupBy: 'day',
    locationId: '',
    operatorIdent: '',
  }
}

export function TimesheetsPage() {
  const [form, setForm] = useState(initialForm)
  const [query, setQuery] = useState<TimesheetQuery>(() => ({
    from: form.from,
    to: form.to,
    group_by: 'day',
  }))
  return (
    <>
      <PageTitle>Timesheets</PageTitle>
      <p>
        <Link to="/pay-periods">Pay periods</Link>: create, close and reopen them; each links to its
        timesheet. <Link to="/pay-rules">Pay rules</Link>: how hours are rounded, breaks deducted and overtime
        counted.
      </p>
      <TimesheetFilters form={form} onChange={setForm} onApply={setQuery} />
      <p class="muted">
        Hours by work date (the day of check-in in the session's location). <strong>Hours</strong> count
        approved sessions and those that needed no review; pending and rejected hours are apart and count for
        nothing until reviewed. Each operator's pay rule splits the hours into regular, overtime and double
        time (they add up to the hours) and may deduct a missing break (auto break). Per week, a row is the
        operator's workweek.
      </p>
      <CsvDownload query={query} />
      <TimesheetTable query={query} />
    </>
  )
}
