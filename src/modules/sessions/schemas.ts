import { type Static, Type } from 'typebox'
import { deletedObject, nullableString, paginationQuery, ref, Timestamp } from '../../core/schemas.js'
import { Actor } from '../actors/schemas.js'

/** The records of one session: a list, not a diary (the spec's bound, which a break scan keeps too). */
export const MAX_BREAKS = 10

const timeInput = Type.Object(
  {
    time: Type.String({
      maxLength: 64,
      description:
        "ISO-8601 with a zone designator (Z or ±hh:mm). At most 5 minutes after the server's clock (422 `time_in_future`: attendance is recorded after it happens) and not before 1970 (422 `invalid_time_range`).",
    }),
  },
  { additionalProperties: false },
)
const timeOutput = Type.Object({ time: Timestamp }, { additionalProperties: false })
/** Who recorded a session or a break: the API, or a scan. */
const source = (options: { description?: string } = {}) =>
  Type.Union([Type.Literal('api'), Type.Literal('scan')], options)

const BreakOutput = Type.Object(
  {
    start: timeOutput,
    end: Type.Union([timeOutput, Type.Null()], {
      description: 'null while a break a scan started goes on; the check-out ends it at its time.',
    }),
    paid: Type.Boolean({ description: 'A paid break counts as worked time.' }),
    source: source({
      description: '`scan` for a break started by a `break_start` scan (and sent back unchanged by a PATCH).',
    }),
  },
  { additionalProperties: false },
)
export type SessionBreak = Static<typeof BreakOutput>

const BreakInput = Type.Object(
  { start: timeInput, end: timeInput, paid: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
)
export type BreakInput = Static<typeof BreakInput>

const reference = (description: string, maxLength = 64) =>
  Type.String({ minLength: 1, maxLength, description })

const reviewStatus = Type.Union(
  [Type.Literal('pending'), Type.Literal('not_required'), Type.Literal('approved'), Type.Literal('rejected')],
  {
    description:
      '`pending` for flagged sessions (API create or edit, a flagged closure) and again after any edit; `not_required` for scanned sessions without a flag; `approved` or `rejected` after review.',
  },
)

const settable = {
  operator_ident: Type.Optional(reference('Resolves to an operator by its ident.')),
  operator_id: Type.Optional(reference('Resolves to an operator by its id.')),
  location_name: Type.Optional(
    reference('Resolves to a location by name (422 ambiguous_location if shared).', 200),
  ),
  break_minutes: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 100_000,
      description:
        'Minutes of break, for a session without break records: with `breaks` in the body, or on a session that has break records, 422 `conflicting_param`.',
    }),
  ),
  breaks: Type.Optional(
    Type.Array(BreakInput, {
      maxItems: MAX_BREAKS,
      description: `At most ${MAX_BREAKS} breaks (\`paid\` false unless sent); a PATCH replaces the list. Each lies inside [check_in, check_out], starts before it ends and overlaps no other, else 422 \`invalid_break\`, param \`breaks[<i>]\`. \`break_minutes\` becomes their unpaid total (0 for an empty list).`,
    }),
  ),
  notes: Type.Optional(nullableString({ maxLength: 2000 })),
}

export const Session = Type.Object(
  {
    object: Type.Literal('session'),
    id: Type.String({ description: 'Prefix `ses_`.' }),
    operator_id: Type.String(),
    operator_ident: Type.String(),
    device_id: Type.String({ description: "The device's code." }),
    location_id: Type.Union([Type.String(), Type.Null()]),
    check_in: timeOutput,
    check_out: Type.Union([timeOutput, Type.Null()], {
      description:
        'null while a scanned session is open, and after an open session older than 16 hours was closed (`max_shift_exceeded`) by the next scan or by the service itself within a minute: nobody knows when the operator left, so no time is invented.',
    }),
    break_minutes: Type.Integer({
      description:
        'With break records, their unpaid total in minutes (rounded half-up); otherwise as entered.',
    }),
    breaks: Type.Array(BreakOutput, {
      maxItems: MAX_BREAKS,
      description: 'The break records, in the order recorded; `[]` when none.',
    }),
    notes: Type.Union([Type.String(), Type.Null()]),
    total_hours: Type.Union([Type.Number(), Type.Null()], {
      description:
        "(check_out − check_in − unpaid break) / 1 h, rounded half-up to 2 decimals; the unpaid break is the unpaid records' exact durations when the session has records (paid breaks are worked time), `break_minutes` otherwise. null without a check-out.",
    }),
    is_flagged: Type.Boolean(),
    flag_reason: Type.Union([Type.String(), Type.Null()]),
    source: source(),
    status: Type.Union([Type.Literal('open'), Type.Literal('completed')]),
    work_date: Type.String({
      description:
        "YYYY-MM-DD: the calendar date of the check-in in the location's time zone (UTC without a location), fixed when the session is written. The session counts, whole, on this date.",
    }),
    review_status: reviewStatus,
    reviewed_at: Type.Union([Timestamp, Type.Null()]),
    reviewed_by: Type.Union([Type.String(), Type.Null()], {
      description:
        "Who approved or rejected the session, by id: the API key's (`key_…`) or the signed-in person's (`usr_…`). The session's latest `approved` or `rejected` revision names them (`actor`).",
    }),
    review_note: Type.Union([Type.String(), Type.Null()]),
    livemode: Type.Boolean(),
    created: Timestamp,
    updated: Timestamp,
  },
  {
    $id: 'Session',
    additionalProperties: false,
    description:
      'An attendance record: a check-in and check-out of an operator at a device. Sessions of one operator never overlap (409 `overlapping_session`: an operator is in one place at a time; an open session extends to now), and a session entered through the API lasts at most 72 hours.',
  },
)
export type Session = Static<typeof Session>

export const CreateSessionBody = Type.Object(
  {
    ...settable,
    device_id: reference("The device's code."),
    location_id: Type.Optional(reference('Resolves to a location by id.')),
    check_in: timeInput,
    check_out: timeInput,
  },
  { additionalProperties: false },
)
export type CreateSessionBody = Static<typeof CreateSessionBody>

export const UpdateSessionBody = Type.Object(
  {
    ...settable,
    device_id: Type.Optional(reference("The device's code.")),
    location_id: Type.Optional(
      nullableString({ minLength: 1, maxLength: 64, description: 'null removes the location.' }),
    ),
    check_in: Type.Optional(timeInput),
    check_out: Type.Optional(timeInput),
  },
  { additionalProperties: false },
)
export type UpdateSessionBody = Static<typeof UpdateSessionBody>

export const ListSessionsQuery = Type.Object(
  {
    ...paginationQuery,
    order: Type.Optional(
      Type.Union([Type.Literal('created'), Type.Literal('work_date')], {
        description:
          '`created` (the default): newest first. `work_date`: oldest work date first, sessions of one work date oldest first (the review queue). A cursor belongs to its order: used with the other, 400 `invalid_cursor`.',
      }),
    ),
    operator_id: Type.Optional(Type.String({ maxLength: 64 })),
    operator_ident: Type.Optional(
      Type.String({
        maxLength: 64,
        description: "An operator's ident, exactly as written (an unknown one lists nothing).",
      }),
    ),
    device_id: Type.Optional(Type.String({ maxLength: 64, description: "A device's code." })),
    location_id: Type.Optional(Type.String({ maxLength: 64 })),
    is_flagged: Type.Optional(Type.Boolean()),
    status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('completed')])),
    check_in_from: Type.Optional(
      Type.String({ maxLength: 64, description: 'Sessions whose check-in is at or after this instant.' }),
    ),
    check_in_to: Type.Optional(
      Type.String({ maxLength: 64, description: 'Sessions whose check-in is before this instant.' }),
    ),
    review_status: Type.Optional(reviewStatus),
    work_date_from: Type.Optional(
      Type.String({ format: 'date', maxLength: 10, description: 'Work date on or after (YYYY-MM-DD).' }),
    ),
    work_date_to: Type.Optional(
      Type.String({ format: 'date', maxLength: 10, description: 'Work date on or before (YYYY-MM-DD).' }),
    ),
  },
  { additionalProperties: false },
)
export type ListSessionsQuery = Static<typeof ListSessionsQuery>

const note = nullableString({ maxLength: 2000, description: 'Why; kept as the review_note.' })

export const ApproveSessionBody = Type.Object({ note: Type.Optional(note) }, { additionalProperties: false })
export type ApproveSessionBody = Static<typeof ApproveSessionBody>

export const RejectSessionBody = Type.Object(
  {
    note: Type.Optional(
      nullableString({ maxLength: 2000, description: 'Required: why the session does not count.' }),
    ),
  },
  { additionalProperties: false },
)
export type RejectSessionBody = Static<typeof RejectSessionBody>

export const SessionRevision = Type.Object(
  {
    object: Type.Literal('session_revision'),
    id: Type.String({ description: 'Prefix `rev_`.' }),
    session_id: Type.String(),
    action: Type.String({
      description:
        'created, updated, deleted, checked_in, checked_out, break_started, break_ended, closed, approved or rejected.',
    }),
    key_id: Type.String({
      description:
        'Who made the change, by id: the API key or device key (`key_…`), the signed-in person (`usr_…`), or `service` when the service closed a forgotten check-out. `actor` says who that is.',
    }),
    key_label: Type.Union([Type.String(), Type.Null()], {
      description:
        "The label of the API key in `key_id` as it is now (set with the CLI's `keys label`); null for an unlabelled key, a device's key, a person and the service's own changes.",
    }),
    actor: ref(
      Actor,
      'Who made the change, as they are now: an approved or rejected revision names the reviewer.',
    ),
    livemode: Type.Boolean(),
    created: Timestamp,
    before: Type.Union([ref(Session), Type.Null()]),
    after: Type.Union([ref(Session), Type.Null()]),
  },
  { $id: 'SessionRevision', additionalProperties: false, description: 'One change of a session.' },
)
export type SessionRevision = Static<typeof SessionRevision>

export const DeletedSession = deletedObject('session', 'DeletedSession')

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [Session, DeletedSession, SessionRevision]
