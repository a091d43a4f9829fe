import { type Static, Type } from 'typebox'
import { deletedObject, paginationQuery, Timestamp } from '../../core/schemas.js'
import type { RoundingMode } from '../../db/schema.js'
import { WEEKDAYS, type Weekday } from '../../lib/dates.js'

export const ROUNDING_MODES: RoundingMode[] = ['nearest', 'up', 'down']
/** The rounding steps of the spec: each divides an hour (0: no rounding). */
export const ROUNDING_INTERVALS = [0, 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60] as const
export type RoundingInterval = (typeof ROUNDING_INTERVALS)[number]
export const BREAK_ACTIONS = ['deduct', 'flag'] as const
export type BreakAction = (typeof BREAK_ACTIONS)[number]
export const MAX_BREAK_RULES = 5

// `enum` rather than a union of literals: a refused value is then reported as "must be one of …"
// (invalid_value) and a wrong type as invalid_type, instead of the first literal's "must be monday".
const weekday = (description?: string) =>
  Type.Unsafe<Weekday>({ type: 'string', enum: WEEKDAYS, ...(description ? { description } : {}) })
const roundingMode = (description?: string) =>
  Type.Unsafe<RoundingMode>({ type: 'string', enum: ROUNDING_MODES, ...(description ? { description } : {}) })
const roundingInterval = (description?: string) =>
  Type.Unsafe<RoundingInterval>({
    type: 'integer',
    enum: [...ROUNDING_INTERVALS],
    ...(description ? { description } : {}),
  })
const breakAction = (description?: string) =>
  Type.Unsafe<BreakAction>({
    type: 'string',
    enum: [...BREAK_ACTIONS],
    ...(description ? { description } : {}),
  })
/** Minutes, or null (off); a string is `invalid_type` "integer or null", as for nullable strings. */
const nullableMinutes = (maximum: number, description: string) =>
  Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 1, maximum, description })

const name = Type.String({ minLength: 1, maxLength: 200, description: 'Not unique.' })

const Rounding = Type.Object(
  {
    interval_minutes: roundingInterval(
      'Check-in and check-out are rounded to a multiple of this many minutes of local wall-clock time; 0: no rounding.',
    ),
    check_in: roundingMode('`nearest` (exactly half rounds up), `up` or `down`.'),
    check_out: roundingMode('`nearest` (exactly half rounds up), `up` or `down`.'),
  },
  { additionalProperties: false },
)

const BreakRule = Type.Object(
  {
    after_minutes: Type.Integer({
      minimum: 1,
      maximum: 1440,
      description: 'The rule applies to a session of more than this many minutes of work.',
    }),
    minutes: Type.Integer({
      minimum: 1,
      maximum: 240,
      description: 'At least this many minutes of unpaid break in total.',
    }),
    action: breakAction(
      '`deduct`: the shortfall is deducted; `flag`: nothing is deducted, the entry is flagged.',
    ),
  },
  { additionalProperties: false },
)

const DAILY_MAX = 1440
const WEEKLY_MAX = 10080

const Overtime = Type.Object(
  {
    daily_minutes: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Worked minutes of a day beyond which time is overtime; null: off.',
    }),
    daily_double_minutes: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Beyond this, double time; needs `daily_minutes`, and is greater.',
    }),
    weekly_minutes: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Regular minutes of a workweek beyond which time is overtime; null: off.',
    }),
    seventh_day: Type.Boolean({
      description:
        'The seventh consecutive worked day of a workweek is overtime, then double time; needs `daily_minutes`.',
    }),
  },
  { additionalProperties: false },
)

export const PayRule = Type.Object(
  {
    object: Type.Literal('pay_rule'),
    id: Type.String({ description: 'Prefix `pr_`.' }),
    name: Type.String(),
    is_default: Type.Boolean({
      description: "The account's (and mode's) default: the rule of every operator without one of its own.",
    }),
    workweek_start: weekday(),
    rounding: Rounding,
    breaks: Type.Array(BreakRule),
    overtime: Overtime,
    livemode: Type.Boolean(),
    created: Timestamp,
    updated: Timestamp,
  },
  {
    $id: 'PayRule',
    additionalProperties: false,
    description: 'How timesheets round, deduct breaks and split overtime for the operators it applies to.',
  },
)
export type PayRule = Static<typeof PayRule>
export type PayRuleBreak = PayRule['breaks'][number]

/** What a create or PATCH may send of the rounding: the fields given, the others kept (or defaulted). */
const RoundingInput = Type.Object(
  {
    interval_minutes: Type.Optional(
      roundingInterval(`One of ${ROUNDING_INTERVALS.join(', ')} (default 0: no rounding).`),
    ),
    check_in: Type.Optional(roundingMode('Default `nearest`.')),
    check_out: Type.Optional(roundingMode('Default `nearest`.')),
  },
  { additionalProperties: false },
)

const OvertimeInput = Type.Object(
  {
    daily_minutes: Type.Optional(
      nullableMinutes(DAILY_MAX, `1 to ${DAILY_MAX}, or null (off, the default).`),
    ),
    daily_double_minutes: Type.Optional(
      nullableMinutes(
        DAILY_MAX,
        `1 to ${DAILY_MAX}, or null (off, the default); greater than daily_minutes.`,
      ),
    ),
    weekly_minutes: Type.Optional(
      nullableMinutes(WEEKLY_MAX, `1 to ${WEEKLY_MAX}, or null (off, the default).`),
    ),
    seventh_day: Type.Optional(Type.Boolean({ description: 'Default false; true needs daily_minutes.' })),
  },
  { additionalProperties: false },
)

const BreaksInput = Type.Array(BreakRule, {
  maxItems: MAX_BREAK_RULES,
  description: `At most ${MAX_BREAK_RULES} rules (default none); a PATCH replaces the list.`,
})

export const CreatePayRuleBody = Type.Object(
  {
    name,
    is_default: Type.Optional(
      Type.Boolean({
        description: 'Default false; true unsets the previous default of the account and mode.',
      }),
    ),
    workweek_start: Type.Optional(weekday('Default `monday`.')),
    rounding: Type.Optional(RoundingInput),
    breaks: Type.Optional(BreaksInput),
    overtime: Type.Optional(OvertimeInput),
  },
  { additionalProperties: false },
)
export type CreatePayRuleBody = Static<typeof CreatePayRuleBody>

export const UpdatePayRuleBody = Type.Object(
  {
    name: Type.Optional(name),
    is_default: Type.Optional(
      Type.Boolean({
        description: 'true unsets the previous default; false leaves the account and mode without one.',
      }),
    ),
    workweek_start: Type.Optional(weekday()),
    rounding: Type.Optional(RoundingInput),
    breaks: Type.Optional(BreaksInput),
    overtime: Type.Optional(OvertimeInput),
  },
  { additionalProperties: false },
)
export type UpdatePayRuleBody = Static<typeof UpdatePayRuleBody>

export const ListPayRulesQuery = Type.Object({ ...paginationQuery }, { additionalProperties: false })
export type ListPayRulesQuery = Static<typeof ListPayRulesQuery>

export const DeletedPayRule = deletedObject('pay_rule', 'DeletedPayRule')

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [PayRule, DeletedPayRule]
