import { type Static, Type } from 'typebox'
import { nullableString, paginationQuery, Timestamp } from '../../core/schemas.js'

const ident = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^\\S(.*\\S)?$',
  description: "The worker's unique code (per account and mode); no leading or trailing spaces.",
})
const name = nullableString({ maxLength: 200, description: 'Display name.' })
const employeeId = nullableString({ maxLength: 128, description: "Link to the client's own HR system." })
const pin = Type.Optional(
  Type.Union([Type.String({ pattern: '^[0-9]{4,8}$' }), Type.Null()], {
    description:
      'The PIN a device that requires one asks for: 4 to 8 digits; null clears it. Never returned (`has_pin`).',
  }),
)
const payRuleId = nullableString({
  maxLength: 64,
  description: "The operator's pay rule (`pr_…`); null: the account's default rule, if any.",
})
const homeLocationId = nullableString({
  maxLength: 64,
  description:
    'Where the operator works (`loc_…`): a principal held to sites changes only the operators homed at its locations, and sees their timesheets. Null: nowhere in particular (not for a principal held to sites).',
})
/** A calendar date (`YYYY-MM-DD`, a real date) or null, as `CalendarDate` checks it. */
const employmentDate = (description: string) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date', maxLength: 10, description })
const startDate = employmentDate('First day of employment (inclusive), YYYY-MM-DD; null: not recorded.')
const endDate = employmentDate(
  'Last day of employment (inclusive), YYYY-MM-DD, not before start_date (422 `invalid_date_range`); null: still employed.',
)

export const Operator = Type.Object(
  {
    object: Type.Literal('operator'),
    id: Type.String({ description: 'Prefix `op_`.' }),
    ident: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    employee_id: Type.Union([Type.String(), Type.Null()]),
    is_active: Type.Boolean(),
    pay_rule_id: Type.Union([Type.String(), Type.Null()], {
      description: "The operator's own pay rule; null: the account's default rule applies, if any.",
    }),
    has_pin: Type.Boolean({ description: 'A PIN is set (the PIN itself is never shown).' }),
    home_location_id: Type.Union([Type.String(), Type.Null()], {
      description: 'Where the operator works; null: nowhere in particular.',
    }),
    start_date: Type.Union([Type.String(), Type.Null()], {
      description: 'First day of employment (inclusive), YYYY-MM-DD; null: not recorded.',
    }),
    end_date: Type.Union([Type.String(), Type.Null()], {
      description: 'Last day of employment (inclusive), YYYY-MM-DD; null: still employed.',
    }),
    livemode: Type.Boolean(),
    created: Timestamp,
    updated: Timestamp,
  },
  { $id: 'Operator', additionalProperties: false, description: 'A worker.' },
)
export type Operator = Static<typeof Operator>

export const CreateOperatorBody = Type.Object(
  {
    ident,
    name: Type.Optional(name),
    employee_id: Type.Optional(employeeId),
    pay_rule_id: Type.Optional(payRuleId),
    pin,
    home_location_id: Type.Optional(homeLocationId),
    start_date: Type.Optional(startDate),
    end_date: Type.Optional(endDate),
  },
  { additionalProperties: false },
)
export type CreateOperatorBody = Static<typeof CreateOperatorBody>

export const UpdateOperatorBody = Type.Object(
  {
    name: Type.Optional(name),
    employee_id: Type.Optional(employeeId),
    is_active: Type.Optional(Type.Boolean({ description: '`true` reactivates, `false` deactivates.' })),
    pay_rule_id: Type.Optional(payRuleId),
    pin,
    home_location_id: Type.Optional(homeLocationId),
    start_date: Type.Optional(startDate),
    end_date: Type.Optional(endDate),
  },
  { additionalProperties: false },
)
export type UpdateOperatorBody = Static<typeof UpdateOperatorBody>

export const ListOperatorsQuery = Type.Object(
  {
    ...paginationQuery,
    is_active: Type.Optional(Type.Boolean()),
    ident: Type.Optional(Type.String({ maxLength: 64 })),
    employee_id: Type.Optional(Type.String({ maxLength: 128 })),
  },
  { additionalProperties: false },
)
export type ListOperatorsQuery = Static<typeof ListOperatorsQuery>

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [Operator]
