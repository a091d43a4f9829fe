import { useState } from 'preact/hooks'
import type { SessionListParams } from '../../../packages/client/src/client.js'
import { Field } from '../components/Field.js'
import { LocationSelect } from '../components/LocationSelect.js'
import { addressQuery } from '../router.js'

export type ReviewFilter = Pick<
  SessionListParams,
  'location_id' | 'operator_ident' | 'work_date_from' | 'work_date_to'
>

/** What the form holds: work dates are `YYYY-MM-DD`, as the API takes them and date inputs give them. */
export interface ReviewForm {
  operatorIdent: string
  locationId: string
  from: string
  to: string
}

/**
 * The form as a link opened it: the Pay periods page links a refused close to the queue filtered to
 * the period's work dates (`/review?work_date_from=…&work_date_to=…`).
 */
export function formFromAddress(): ReviewForm {
  const params = addressQuery()
  return {
    operatorIdent: '',
    locationId: params.get('location_id') ?? '',
    from: params.get('work_date_from') ?? '',
    to: params.get('work_date_to') ?? '',
  }
}

/** The API filters of a form. */
export function filterOf(form: ReviewForm): ReviewFilter {
  return {
    location_id: form.locationId || undefined,
    operator_ident: form.operatorIdent.trim() || undefined,
    work_date_from: form.from || undefined,
    work_date_to: form.to || undefined,
  }
}

export function ReviewFilters({
  initial,
  onApply,
}: {
  initial: ReviewForm
  onApply: (filter: ReviewFilter) => void
}) {
  const [form, setForm] = useState(initial)
  const submit = (event: Event) => {
    event.preventDefault()
    onApply(filterOf(form))
  }

  return (
    <form class="filters" onSubmit={submit}>
      <LocationSelect
        id="review-location"
        value={form.locationId}
        onChange={(locationId) => setForm({ ...form, locationId })}
      />
      <Field
        id="review-operator"
        label="Operator ident"
        value={form.operatorIdent}
        onValue={(operatorIdent) => setForm({ ...form, operatorIdent })}
      />
      <Field
        id="review-from"
        label="Work date from"
        type="date"
        value={form.from}
        onValue={(from) => setForm({ ...form, from })}
      />
      <Field
        id="review-to"
        label="Work date to"
        type="date"
        value={form.to}
        onValue={(to) => setForm({ ...form, to })}
      />
      <button type="submit">Apply filters</button>
    </form>
  )
}
