import { useState } from 'preact/hooks'
import type { SessionListParams } from '../../../packages/client/src/types.js'
import type { Api, ApiError } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { LocationSelect } from '../components/LocationSelect.js'
import { useSignedIn } from '../context.js'
import { asApiError } from '../hooks.js'
import { operatorIdOf } from '../operators.js'

export type ReviewFilter = Pick<
  SessionListParams,
  'location_id' | 'operator_id' | 'work_date_from' | 'work_date_to'
>

/** What the form holds: work dates are `YYYY-MM-DD`, as the API takes them and date inputs give them. */
export interface ReviewForm {
  operatorIdent: string
  locationId: string
  from: string
  to: string
}

/**
 * The form as a link opened it: the Timesheets page links a refused close to the queue filtered to
 * the period's work dates (`/review?work_date_from=…&work_date_to=…`).
 */
export function formFromAddress(search: string): ReviewForm {
  const params = new URLSearchParams(search)
  return {
    operatorIdent: '',
    locationId: params.get('location_id') ?? '',
    from: params.get('work_date_from') ?? '',
    to: params.get('work_date_to') ?? '',
  }
}

/** The filters a form holds that need no request: all but the operator. */
export function plainFilterOf(form: ReviewForm): ReviewFilter {
  return {
    location_id: form.locationId || undefined,
    work_date_from: form.from || undefined,
    work_date_to: form.to || undefined,
  }
}

/** The API filters of a form; the operator's ident becomes its id, which costs a request. */
async function filterOf(api: Api, form: ReviewForm): Promise<ReviewFilter> {
  const ident = form.operatorIdent.trim()
  return { ...plainFilterOf(form), operator_id: ident === '' ? undefined : await operatorIdOf(api, ident) }
}

export function ReviewFilters({
  initial,
  onApply,
}: {
  initial: ReviewForm
  onApply: (filter: ReviewFilter) => void
}) {
  const { api } = useSignedIn()
  const [form, setForm] = useState(initial)
  const [problem, setProblem] = useState<ApiError | undefined>()
  const text = (name: keyof ReviewForm) => (event: { currentTarget: HTMLInputElement }) =>
    setForm({ ...form, [name]: event.currentTarget.value })

  const submit = async (event: Event) => {
    event.preventDefault()
    setProblem(undefined)
    try {
      onApply(await filterOf(api, form))
    } catch (error) {
      setProblem(asApiError(error))
    }
  }

  return (
    <form class="filters" onSubmit={submit}>
      <div>
        <label for="review-location">Location</label>
        <LocationSelect
          id="review-location"
          value={form.locationId}
          onChange={(locationId) => setForm({ ...form, locationId })}
        />
      </div>
      <div>
        <label for="review-operator">Operator ident</label>
        <input id="review-operator" value={form.operatorIdent} onInput={text('operatorIdent')} />
      </div>
      <div>
        <label for="review-from">Work date from</label>
        <input id="review-from" type="date" value={form.from} onInput={text('from')} />
      </div>
      <div>
        <label for="review-to">Work date to</label>
        <input id="review-to" type="date" value={form.to} onInput={text('to')} />
      </div>
      <button type="submit">Apply filters</button>
      <ErrorNotice error={problem} />
    </form>
  )
}
