import { type Static, Type } from 'typebox'
import { CalendarDate, paginationQuery } from '../../core/schemas.js'

export const MAX_TIMESHEET_DAYS = 366

/** The CSV columns, in order: the header row of `Accept: text/csv`. */
export const CSV_COLUMNS = [
  'operator_ident',
  'employee_id',
  'name',
  'date',
  'hours',
  'pending_hours',
  'rejected_hours',
  'sessions',
  'open_sessions',
  'regular_hours',
  'overtime_hours',
  'double_time_hours',
  'auto_break_hours',
  'pay_rule_id',
  'flags',
] as const

const hours = (description: string) =>
  Type.Number({
    description: `${description} Summed from exact durations in milliseconds and rounded half-up to 2 decimals once.`,
  })

export const TimesheetEntry = Type.Object(
  {
    object: Type.Literal('timesheet_entry'),
    operator_id: Type.String(),
    operator_ident: Type.String(),
    employee_id: Type.Union([Type.String(), Type.Null()]),
    name: Type.Union([Type.String(), Type.Null()]),
    date: Type.String({
      description:
        'The work date (YYYY-MM-DD); with `group_by=week`, the first day of the operator’s workweek (its pay rule’s `workweek_start`, Monday without one).',
    }),
    hours: hours(
      'Hours of the sessions `approved` or `not_required`, after the pay rule (rounding, breaks); what payroll pays.',
    ),
    pending_hours: hours('Hours of the sessions `pending` review.'),
    rejected_hours: hours('Hours of the `rejected` sessions (they count for nothing).'),
    sessions: Type.Integer({ description: 'Sessions on this date (or week), whatever their review status.' }),
    open_sessions: Type.Integer({ description: 'Of them, sessions still open (no hours yet).' }),
    regular_hours: Type.Number({
      description:
        'Of `hours`, paid at the regular rate. `regular_hours + overtime_hours + double_time_hours = hours` exactly (split by largest remainder).',
    }),
    overtime_hours: Type.Number({ description: 'Of `hours`, overtime: daily, weekly or the seventh day.' }),
    double_time_hours: Type.Number({
      description:
        'Of `hours`, double time: beyond `daily_double_minutes`, or the seventh day beyond `daily_minutes`.',
    }),
    auto_break_hours: Type.Number({
      description: 'Unpaid break deducted by the pay rule (`deduct` break rules) from the counted sessions.',
    }),
    flags: Type.Array(
      Type.Union([
        Type.Literal('missed_break'),
        Type.Literal('open_session'),
        Type.Literal('pending_review'),
      ]),
      {
        description:
          'Sorted. `missed_break`: a `flag` break rule was not met; `open_session`: a session is still open; `pending_review`: a session awaits review.',
      },
    ),
    pay_rule_id: Type.Union([Type.String(), Type.Null()], {
      description:
        'The pay rule applied (the operator’s, else the default), or null: no rounding, no deduction, every hour regular.',
    }),
  },
  {
    $id: 'TimesheetEntry',
    additionalProperties: false,
    description:
      "Hours of one operator on one work date (or workweek, from the operator's pay rule's workweek_start), by review status.",
  },
)
export type TimesheetEntry = Static<typeof TimesheetEntry>

export const ListTimesheetsQuery = Type.Object(
  {
    ...paginationQuery,
    from: CalendarDate('First work date (inclusive).'),
    to: CalendarDate(`Last work date (inclusive); at most ${MAX_TIMESHEET_DAYS} days counting both ends.`),
    operator_id: Type.Optional(Type.String({ maxLength: 64 })),
    location_id: Type.Optional(Type.String({ maxLength: 64 })),
    group_by: Type.Optional(
      Type.Union([Type.Literal('day'), Type.Literal('week')], {
        default: 'day',
        description:
          '`day` (default) or `week` (the operator’s workweek, by its pay rule’s `workweek_start`, Monday without one; `date` being its first day).',
      }),
    ),
  },
  { additionalProperties: false },
)
export type ListTimesheetsQuery = Static<typeof ListTimesheetsQuery>

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [TimesheetEntry]
