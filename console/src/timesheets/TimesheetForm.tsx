import { useState } from 'preact/hooks'
import { asProblem, type Problem } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field, SelectField } from '../components/Field.js'
import { LocationSelect } from '../components/LocationSelect.js'
import { useSignedIn } from '../context.js'
import { operatorIdOf } from '../operators.js'
import type { TimesheetQuery } from './totals.js'

export interface TimesheetForm {
  from: string
  to: string
  groupBy: 'day' | 'week'
  locationId: string
  operatorIdent: string
}

const GROUP_OPTIONS: ReadonlyArray<readonly [TimesheetForm['groupBy'], string]> = [
  ['day', 'Day'],
  ['week', 'Week'],
]

/** The form's fields live in the page, so picking a pay period can fill its dates. */
export function TimesheetFilters({
  form,
  onChange,
  onApply,
}: {
  form: TimesheetForm
  onChange: (form: TimesheetForm) => void
  onApply: (query: TimesheetQuery) => void
}) {
  const { api } = useSignedIn()
  const [problem, setProblem] = useState<Problem | undefined>()
  const submit = async (event: Event) => {
    event.preventDefault()
    setProblem(undefined)
    try {
      const ident = form.operatorIdent.trim()
      onApply({
        from: form.from,
        to: form.to,
        group_by: form.groupBy,
        location_id: form.locationId || undefined,
        operator_id: ident === '' ? undefined : await operatorIdOf(api, ident),
      })
    } catch (error) {
      setProblem(asProblem(error))
    }
  }
  return (
    <form class="filters" onSubmit={submit}>
      <Field
        id="timesheet-from"
        label="From"
        type="date"
        required
        value={form.from}
        onValue={(from) => onChange({ ...form, from })}
      />
      <Field
        id="timesheet-to"
        label="To"
        type="date"
        required
        value={form.to}
        onValue={(to) => onChange({ ...form, to })}
      />
      <SelectField
        id="timesheet-group"
        label="Per"
        value={form.groupBy}
        onValue={(groupBy) => onChange({ ...form, groupBy })}
        options={GROUP_OPTIONS}
      />
      <LocationSelect
        id="timesheet-location"
        value={form.locationId}
        onChange={(locationId) => onChange({ ...form, locationId })}
      />
      <Field
        id="timesheet-operator"
        label="Operator ident"
        value={form.operatorIdent}
        onValue={(operatorIdent) => onChange({ ...form, operatorIdent })}
      />
      <button type="submit">Show timesheet</button>
      <ErrorNotice error={problem} />
    </form>
  )
}
