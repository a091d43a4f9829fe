import { type Static, Type } from 'typebox'
import { CalendarDate, paginationQuery, ref, Timestamp } from '../../core/schemas.js'
import { Actor } from '../actors/schemas.js'

export const PayPeriodTotals = Type.Object(
  {
    operators: Type.Integer({ description: 'Operators with any session in the period.' }),
    hours: Type.Number({
      description: 'Paid hours (approved and not_required sessions, after the pay rules).',
    }),
    regular_hours: Type.Number(),
    overtime_hours: Type.Number(),
    double_time_hours: Type.Number(),
    auto_break_hours: Type.Number({ description: 'Unpaid break deducted by the pay rules.' }),
  },
  {
    $id: 'PayPeriodTotals',
    additionalProperties: false,
    description:
      'The sums of the timesheet stored when the period closed, each from exact durations rounded half-up to 2 decimals once; `regular_hours + overtime_hours + double_time_hours = hours`.',
  },
)
export type PayPeriodTotals = Static<typeof PayPeriodTotals>

export const PayPeriod = Type.Object(
  {
    object: Type.Literal('pay_period'),
    id: Type.String({ description: 'Prefix `pp_`.' }),
    start_date: Type.String({ description: 'First day of the period (inclusive), YYYY-MM-DD.' }),
    end_date: Type.String({ description: 'Last day of the period (inclusive), YYYY-MM-DD.' }),
    status: Type.Union([Type.Literal('open'), Type.Literal('closed')], {
      description:
        'While `closed`, no session whose work date lies in the period can be created, edited, deleted, approved or rejected.',
    }),
    closed_at: Type.Union([Timestamp, Type.Null()]),
    closed_by: Type.Union([ref(Actor), Type.Null()], {
      description:
        'While closed: who closed it (the key or the signed-in person), as they are now; null while open.',
    }),
    totals: Type.Union([ref(PayPeriodTotals), Type.Null()], {
      description:
        'While closed: the totals of the timesheet the close stored (what timesheets of its dates answer until it is reopened); null while open.',
    }),
    livemode: Type.Boolean(),
    created: Timestamp,
    updated: Timestamp,
  },
  {
    $id: 'PayPeriod',
    additionalProperties: false,
    description: 'A range of work dates that payroll closes once every session in it is reviewed.',
  },
)
export type PayPeriod = Static<typeof PayPeriod>

export const MAX_PERIOD_DAYS = 62

export const CreatePayPeriodBody = Type.Object(
  {
    start_date: CalendarDate('First day (inclusive).'),
    end_date: CalendarDate(
      `Last day (inclusive); at most ${MAX_PERIOD_DAYS} days after start_date counting both.`,
    ),
  },
  { additionalProperties: false },
)
export type CreatePayPeriodBody = Static<typeof CreatePayPeriodBody>

export const ListPayPeriodsQuery = Type.Object(
  {
    ...paginationQuery,
    status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
  },
  { additionalProperties: false },
)
export type ListPayPeriodsQuery = Static<typeof ListPayPeriodsQuery>

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [PayPeriodTotals, PayPeriod]
