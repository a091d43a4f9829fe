import { type Static, Type } from 'typebox'
import { paginationQuery, Timestamp } from '../../core/schemas.js'
import { ROLES, type Role } from './roles.js'

const role = Type.Unsafe<Role>({
  type: 'string',
  enum: [...ROLES],
  description: 'What the person may do in the account (docs/access.md, "Roles").',
})
const status = Type.Union([Type.Literal('invited'), Type.Literal('active'), Type.Literal('deactivated')], {
  description:
    '`invited` until the invitation is accepted; `deactivated`: may not act in this account (reactivate to undo).',
})
const locationIds = Type.Union(
  [Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 500 }), Type.Null()],
  {
    description:
      "The locations the person is held to (ids of this account's locations, of either mode; never empty); null: every location.",
  },
)
const operatorId = Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], {
  description:
    "The worker record that is this person (`op_…`, of the request's mode), whose work they may not approve; null: none.",
})
const name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name.' })
const email = Type.String({
  format: 'email',
  maxLength: 254,
  description: "The person's login: unique in the service, compared case-insensitively.",
})

const userFields = {
  object: Type.Literal('user'),
  id: Type.String({ description: "Prefix `usr_`: the person's id, the same in every account." }),
  email: Type.String(),
  name: Type.String(),
  role,
  location_ids: Type.Union([Type.Array(Type.String()), Type.Null()]),
  operator_id: Type.Union([Type.String(), Type.Null()]),
  status,
  last_sign_in_at: Type.Union([Timestamp, Type.Null()], {
    description: 'The last sign-in in which this account was offered; null: never.',
  }),
  created: Timestamp,
  updated: Timestamp,
}

export const User = Type.Object(userFields, {
  $id: 'User',
  additionalProperties: false,
  description:
    'A person in this account (their membership): no `livemode`, a person works in both modes of an account.',
})
export type User = Static<typeof User>

/** The create and invite answers: the user with the invitation's link, shown only there. */
export const UserWithInviteUrl = Type.Object(
  {
    ...userFields,
    invite_url: Type.Union([Type.String(), Type.Null()], {
      description:
        '`<PUBLIC_URL>/console/accept-invite#token=…`: single use, valid 7 days; a newer link voids it. Shown only here. Null in the replay of an `Idempotency-Key` (the link is not stored to be replayed): ask for a new one with `POST /v1/users/{id}/invite`.',
    }),
  },
  {
    $id: 'UserWithInviteUrl',
    additionalProperties: false,
    description: "The invited user with the invitation's link: the create and invite answers only.",
  },
)
export type UserWithInviteUrl = Static<typeof UserWithInviteUrl>

export const CreateUserBody = Type.Object(
  {
    email,
    name,
    role,
    location_ids: locationIds,
    operator_id: Type.Optional(operatorId),
  },
  { additionalProperties: false },
)
export type CreateUserBody = Static<typeof CreateUserBody>

export const UpdateUserBody = Type.Object(
  {
    name: Type.Optional(name),
    role: Type.Optional(role),
    location_ids: Type.Optional(locationIds),
    operator_id: Type.Optional(operatorId),
  },
  { additionalProperties: false },
)
export type UpdateUserBody = Static<typeof UpdateUserBody>

export const ListUsersQuery = Type.Object(
  { ...paginationQuery, status: Type.Optional(status), role: Type.Optional(role) },
  { additionalProperties: false },
)
export type ListUsersQuery = Static<typeof ListUsersQuery>

/** What the audit log records (decisions.md, "Audit log"); never a token, password or secret. */
export const AUDIT_TYPES = [
  'sign_in',
  'sign_in_failed',
  'sign_out',
  'password_changed',
  'password_reset',
  'user_invited',
  'user_updated',
  'user_deactivated',
  'user_reactivated',
  'key_created',
  'key_revoked',
  'sso_linked',
] as const
export type AuditType = (typeof AUDIT_TYPES)[number]

const auditType = Type.Unsafe<AuditType>({ type: 'string', enum: [...AUDIT_TYPES] })

export const AuditEntry = Type.Object(
  {
    object: Type.Literal('audit_entry'),
    id: Type.String({ description: 'Prefix `aud_`.' }),
    type: auditType,
    actor: Type.Object(
      {
        type: Type.Union(
          [Type.Literal('api_key'), Type.Literal('user'), Type.Literal('device'), Type.Literal('service')],
          { description: '`service`: the command line (`npm run cli -- users …`).' },
        ),
        id: Type.String({ description: "The key's or the person's id (`service` for the command line)." }),
        name: Type.Union([Type.String(), Type.Null()], {
          description: "A key's label, a person's name, a device's code, as they were then.",
        }),
      },
      { additionalProperties: false, description: 'Who did it.' },
    ),
    target: Type.Union(
      [
        Type.Object(
          {
            type: Type.Union([Type.Literal('user'), Type.Literal('api_key')]),
            id: Type.String(),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The person or key it was done to; null when the actor acted on itself alone.' },
    ),
    ip: Type.Union([Type.String(), Type.Null()], { description: "The client's address; null: none." }),
    created: Timestamp,
  },
  {
    $id: 'AuditEntry',
    additionalProperties: false,
    description: 'Who did what to people and keys; never a token, password or secret.',
  },
)
export type AuditEntry = Static<typeof AuditEntry>

export const ListAuditLogQuery = Type.Object(
  {
    ...paginationQuery,
    user_id: Type.Optional(
      Type.String({ maxLength: 64, description: 'Entries whose actor or target is this person (`usr_…`).' }),
    ),
    type: Type.Optional(auditType),
  },
  { additionalProperties: false },
)
export type ListAuditLogQuery = Static<typeof ListAuditLogQuery>

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [User, UserWithInviteUrl, AuditEntry]
