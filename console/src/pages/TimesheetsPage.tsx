import { useState } from 'preact/hooks'
import type { PayPeriod } from '../../../packages/client/src/types.js'
import { PageTitle } from '../components/PageTitle.js'
import { CsvDownload } from '../timesheets/CsvDownload.js'
import { PayPeriods } from '../timesheets/PayPeriods.js'
import { TimesheetFilters, type TimesheetForm } from '../timesheets/TimesheetForm.js'
import { type TimesheetQuery, TimesheetTable } from '../timesheets/TimesheetTable.js'

/** `YYYY-MM-DD` of a date in the browser's zone, as date inputs hold it. */
function isoDate(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
}

/** The page opens on the current month, per day. */
function thisMonth(): TimesheetForm {
  const today = new Date()
  return {
    from: isoDate(new Date(today.getFullYear(), today.getMonth(), 1)),
    to: isoDate(new Date(today.getFullYear(), today.getMonth() + 1, 0)),
    groupBy: 'day',
    locationId: '',
    operatorIdent: '',
  }
}

export function TimesheetsPage() {
  const [form, setForm] = useState(thisMonth)
  const [query, setQuery] = useState<TimesheetQuery>(() => ({
    from: form.from,
    to: form.to,
    group_by: 'day',
  }))
  const showPeriod = (period: PayPeriod) => {
    const next = { ...form, from: period.start_date, to: period.end_date }
    setForm(next)
    setQuery({ ...query, from: next.from, to: next.to })
  }
  return (
    <>
      <PageTitle>Timesheets</PageTitle>
      <TimesheetFilters form={form} onChange={setForm} onApply={setQuery} />
      <p class="muted">
        Hours by work date (the day of check-in in the session's location). <strong>Hours</strong> count
        approved sessions and those that needed no review; pending and rejected hours are apart and count for
        nothing until reviewed.
      </p>
      <CsvDownload query={query} />
      <TimesheetTable query={query} />
      <PayPeriods onShow={showPeriod} />
    </>
  )
}
