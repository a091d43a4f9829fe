import { useEffect, useState } from 'preact/hooks'
import {
  AttendanceApiError,
  type PayRule,
  type PayRuleCreateParams,
} from '../../../packages/client/src/client.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { CheckboxField, Field, SelectField } from '../components/Field.js'
import { type Action, useAction } from '../hooks.js'
import {
  BREAK_ACTIONS,
  type BreakAction,
  ROUNDING_INTERVALS,
  ROUNDING_MODES,
  type RoundingMode,
  WEEKDAYS,
  type Weekday,
} from './terms.js'

/** The API's limit on break rules. */
const MAX_BREAK_RULES = 5

interface BreakRuleDraft {
  afterHours: string
  minutes: string
  action: BreakAction
}

/** What the form holds: text as typed; thresholds in hours, empty for off. */
interface Draft {
  name: string
  workweekStart: Weekday
  interval: string
  checkIn: RoundingMode
  checkOut: RoundingMode
  breaks: BreakRuleDraft[]
  dailyHours: string
  dailyDoubleHours: string
  weeklyHours: string
  seventhDay: boolean
}

const hoursText = (minutes: number | null) =>
  minutes === null ? '' : String(Number((minutes / 60).toFixed(4)))

/** A new rule starts at the API's defaults: no rounding, no break rule, no overtime. */
function draftOf(rule: PayRule | undefined): Draft {
  return {
    name: rule?.name ?? '',
    workweekStart: rule?.workweek_start ?? 'monday',
    interval: String(rule?.rounding.interval_minutes ?? 0),
    checkIn: rule?.rounding.check_in ?? 'nearest',
    checkOut: rule?.rounding.check_out ?? 'nearest',
    breaks: (rule?.breaks ?? []).map((b) => ({
      afterHours: hoursText(b.after_minutes),
      minutes: String(b.minutes),
      action: b.action,
    })),
    dailyHours: hoursText(rule?.overtime.daily_minutes ?? null),
    dailyDoubleHours: hoursText(rule?.overtime.daily_double_minutes ?? null),
    weeklyHours: hoursText(rule?.overtime.weekly_minutes ?? null),
    seventhDay: rule?.overtime.seventh_day ?? false,
  }
}

/** Hours typed → the API's whole minutes (7.5 → 450); empty is off (null). */
function minutesOf(hours: string): number | null {
  if (hours.trim() === '') return null
  return Math.round(Number(hours) * 60)
}

/** The whole rule: a PATCH replaces the breaks and sets every rounding and overtime field, as a create does. */
function bodyOf(draft: Draft): PayRuleCreateParams {
  return {
    name: draft.name,
    workweek_start: draft.workweekStart,
    rounding: {
      interval_minutes: Number(draft.interval) as PayRule['rounding']['interval_minutes'],
      check_in: draft.checkIn,
      check_out: draft.checkOut,
    },
    breaks: draft.breaks.map((b) => ({
      // Required in the form: empty only if the browser's check was bypassed, and the API refuses 0.
      after_minutes: minutesOf(b.afterHours) ?? 0,
      minutes: Number(b.minutes),
      action: b.action,
    })),
    overtime: {
      daily_minutes: minutesOf(draft.dailyHours),
      daily_double_minutes: minutesOf(draft.dailyDoubleHours),
      weekly_minutes: minutesOf(draft.weeklyHours),
      seventh_day: draft.seventhDay,
    },
  }
}

/** Every field's `param`, as the API's envelope names it. */
function paramsOf(draft: Draft): string[] {
  return [
    'name',
    'workweek_start',
    'rounding.interval_minutes',
    'rounding.check_in',
    'rounding.check_out',
    ...draft.breaks.flatMap((_, i) => [
      `breaks[${i}].after_minutes`,
      `breaks[${i}].minutes`,
      `breaks[${i}].action`,
    ]),
    'overtime.daily_minutes',
    'overtime.daily_double_minutes',
    'overtime.weekly_minutes',
    'overtime.seventh_day',
  ]
}

/** `overtime.daily_minutes` → `rule-new-overtime-daily_minutes`: an id per form and field. */
const idOf = (form: string, param: string) => `${form}-${param.replace(/[^\w]+/g, '-')}`

/** The param the API refused, when this form has a field of that name. */
function refusedParam(action: Action, draft: Draft): string | undefined {
  const error = action.error
  if (!(error instanceof AttendanceApiError) || error.param === undefined) return undefined
  return paramsOf(draft).includes(error.param) ? error.param : undefined
}

/**
 * A pay rule's every term, for a new rule (`rule` undefined) or an existing one. The API checks it:
 * a refusal that names a field (its `param`) is shown under that field, which takes the focus;
 * any other under the form.
 */
export function PayRuleForm({
  form,
  rule,
  submitLabel,
  save,
  onCancel,
}: {
  /** The form's name, unique on the page: its fields' ids start with it. */
  form: string
  rule?: PayRule
  submitLabel: string
  save: (body: PayRuleCreateParams) => Promise<void>
  onCancel?: () => void
}) {
  const action = useAction()
  const [draft, setDraft] = useState(() => draftOf(rule))
  const set = (change: Partial<Draft>) => setDraft((previous) => ({ ...previous, ...change }))
  const setBreak = (index: number, change: Partial<BreakRuleDraft>) =>
    setDraft((previous) => ({
      ...previous,
      breaks: previous.breaks.map((b, i) => (i === index ? { ...b, ...change } : b)),
    }))
  const refused = refusedParam(action, draft)
  const errorOf = (param: string) => (param === refused ? action.error?.message : undefined)
  const id = (param: string) => idOf(form, param)
  useEffect(() => {
    if (refused) document.getElementById(id(refused))?.focus()
  }, [action.error])

  const submit = (event: Event) => {
    event.preventDefault()
    return action.run(() => save(bodyOf(draft)))
  }
  const hoursField = (
    param: string,
    label: string,
    value: string,
    onValue: (v: string) => void,
    required = false,
  ) => (
    <Field
      id={id(param)}
      label={label}
      type="number"
      step="any"
      inputMode="decimal"
      required={required}
      value={value}
      onValue={onValue}
      error={errorOf(param)}
    />
  )

  return (
    <form class="pay-rule-form" onSubmit={submit} aria-label={submitLabel}>
      <div class="filters">
        <Field
          id={id('name')}
          label="Name"
          required
          value={draft.name}
          onValue={(name) => set({ name })}
          error={errorOf('name')}
        />
        <SelectField
          id={id('workweek_start')}
          label="Workweek starts on"
          value={draft.workweekStart}
          onValue={(workweekStart) => set({ workweekStart })}
          options={WEEKDAYS}
          error={errorOf('workweek_start')}
        />
      </div>
      <fieldset>
        <legend>Rounding of check-in and check-out</legend>
        <div class="filters">
          <SelectField
            id={id('rounding.interval_minutes')}
            label="To a multiple of"
            value={draft.interval}
            onValue={(interval) => set({ interval })}
            options={ROUNDING_INTERVALS.map(
              (n) => [String(n), n === 0 ? 'No rounding' : `${n} min`] as const,
            )}
            error={errorOf('rounding.interval_minutes')}
          />
          <SelectField
            id={id('rounding.check_in')}
            label="Check-in rounded"
            value={draft.checkIn}
            onValue={(checkIn) => set({ checkIn })}
            options={ROUNDING_MODES}
            error={errorOf('rounding.check_in')}
          />
          <SelectField
            id={id('rounding.check_out')}
            label="Check-out rounded"
            value={draft.checkOut}
            onValue={(checkOut) => set({ checkOut })}
            options={ROUNDING_MODES}
            error={errorOf('rounding.check_out')}
          />
        </div>
      </fieldset>
      <fieldset>
        <legend>Breaks required (unpaid)</legend>
        {draft.breaks.length === 0 && <p class="muted">No break rule: nothing is deducted or flagged.</p>}
        {draft.breaks.map((b, i) => (
          // A rule has no id of its own: its place in the list is what the API's param names.
          <div class="filters break-rule" key={i}>
            {hoursField(
              `breaks[${i}].after_minutes`,
              `Rule ${i + 1}: after more than (hours)`,
              b.afterHours,
              (afterHours) => setBreak(i, { afterHours }),
              true,
            )}
            <Field
              id={id(`breaks[${i}].minutes`)}
              label={`Rule ${i + 1}: at least (minutes)`}
              type="number"
              step="any"
              inputMode="numeric"
              required
              value={b.minutes}
              onValue={(minutes) => setBreak(i, { minutes })}
              error={errorOf(`breaks[${i}].minutes`)}
            />
            <SelectField
              id={id(`breaks[${i}].action`)}
              label={`Rule ${i + 1}: when missing`}
              value={b.action}
              onValue={(action) => setBreak(i, { action })}
              options={BREAK_ACTIONS}
              error={errorOf(`breaks[${i}].action`)}
            />
            <button
              type="button"
              class="secondary"
              onClick={() => set({ breaks: draft.breaks.filter((_, j) => j !== i) })}
            >
              {`Remove rule ${i + 1}`}
            </button>
          </div>
        ))}
        {draft.breaks.length < MAX_BREAK_RULES && (
          <button
            type="button"
            class="secondary"
            onClick={() =>
              set({ breaks: [...draft.breaks, { afterHours: '', minutes: '', action: 'deduct' }] })
            }
          >
            Add a break rule
          </button>
        )}
      </fieldset>
      <fieldset>
        <legend>Overtime (leave a threshold empty for none)</legend>
        <div class="filters">
          {hoursField(
            'overtime.daily_minutes',
            'Daily overtime after (hours)',
            draft.dailyHours,
            (dailyHours) => set({ dailyHours }),
          )}
          {hoursField(
            'overtime.daily_double_minutes',
            'Double time after (hours a day)',
            draft.dailyDoubleHours,
            (dailyDoubleHours) => set({ dailyDoubleHours }),
          )}
          {hoursField(
            'overtime.weekly_minutes',
            'Weekly overtime after (hours)',
            draft.weeklyHours,
            (weeklyHours) => set({ weeklyHours }),
          )}
          <CheckboxField
            id={id('overtime.seventh_day')}
            label="Seventh consecutive day: overtime, then double time"
            checked={draft.seventhDay}
            onChecked={(seventhDay) => set({ seventhDay })}
            error={errorOf('overtime.seventh_day')}
          />
        </div>
      </fieldset>
      <div class="actions">
        <button type="submit" disabled={action.pending}>
          {action.pending ? 'Saving…' : submitLabel}
        </button>
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      {refused ? (
        <p class="muted" role="alert">
          The rule was not saved: see the field marked above.
        </p>
      ) : (
        <ErrorNotice error={action.error} />
      )}
    </form>
  )
}
