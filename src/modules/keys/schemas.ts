import { type Static, Type } from 'typebox'
import { nullableString, paginationQuery, Timestamp } from '../../core/schemas.js'
import { ALL_SCOPES, KEY_SCOPES } from './scopes.js'

export const Account = Type.Object(
  {
    object: Type.Literal('account'),
    id: Type.String({ description: 'Prefix `acct_`.' }),
    name: Type.String({
      description:
        'The name the account was made with (`keys create --account <name>`; `default` for the key the first `npm start` prints).',
    }),
    livemode: Type.Boolean({ description: 'The mode of the calling key: `true` in live mode.' }),
  },
  {
    $id: 'Account',
    additionalProperties: false,
    description: 'The account the calling key belongs to, and the mode it works in.',
  },
)
export type Account = Static<typeof Account>

const mode = Type.Union([Type.Literal('test'), Type.Literal('live')], {
  description: 'The mode the key works in: it sees and makes only objects of this mode.',
})

const locationIds = (description: string) =>
  Type.Union([Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 100 }), Type.Null()], {
    description,
  })

export const ApiKey = Type.Object(
  {
    object: Type.Literal('api_key'),
    id: Type.String({ description: 'Prefix `key_`.' }),
    account_id: Type.String(),
    mode,
    livemode: Type.Boolean(),
    prefix: Type.String({ description: 'The first 12 characters of the secret, to tell keys apart.' }),
    scopes: Type.Array(Type.String(), { description: 'What the key may do (`<resource>:read|write`).' }),
    location_ids: locationIds(
      'The locations the key is held to (decisions.md, "Sites"); null: every location of its mode.',
    ),
    label: Type.Union([Type.String(), Type.Null()], {
      description: 'What people call the key; a session revision made with it shows it as `actor.name`.',
    }),
    expires_at: Type.Union([Timestamp, Type.Null()]),
    revoked_at: Type.Union([Timestamp, Type.Null()], {
      description: 'When it was revoked (refused by every process within 5 s); null while it is not.',
    }),
    created: Timestamp,
  },
  {
    $id: 'ApiKey',
    additionalProperties: false,
    description:
      'An API key of the account, for an integration. Never carries its secret: only the create answer does, once.',
  },
)
export type ApiKey = Static<typeof ApiKey>

export const CreatedApiKey = Type.Object(
  {
    ...ApiKey.properties,
    secret: Type.Union([Type.String(), Type.Null()], {
      description:
        'The key itself (`sk_test_…` or `sk_live_…`), sent as `Authorization: Bearer <secret>`. Shown in this answer only: the service keeps its SHA-256. Null in the replay of an `Idempotency-Key` (the secret is not stored to be replayed): revoke that key and make another.',
    }),
  },
  {
    $id: 'CreatedApiKey',
    additionalProperties: false,
    description: 'A new API key with its secret, shown this once.',
  },
)
export type CreatedApiKey = Static<typeof CreatedApiKey>

export const CreateApiKeyBody = Type.Object(
  {
    label: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'What people call the key (trimmed; at most 100 characters, not blank).',
    }),
    mode,
    scopes: Type.Optional(
      Type.Array(Type.Union(ALL_SCOPES.map((scope) => Type.Literal(scope))), {
        minItems: 1,
        maxItems: ALL_SCOPES.length,
        uniqueItems: true,
        description: `What the key may do; absent: every scope a key may hold (${KEY_SCOPES.join(', ')}). \`users:*\` and \`keys:*\` are people's only: 422 \`invalid_value\` (only people manage people and keys).`,
      }),
    ),
    location_ids: Type.Optional(
      locationIds(
        "Holds the key to these locations of the account in the key's mode (an unknown one: 422 `unknown_location`; an empty list: 422 `invalid_value`); null or absent: every location.",
      ),
    ),
    expires_at: Type.Optional(
      nullableString({
        maxLength: 64,
        description:
          'When the key stops working: an ISO-8601 instant with a zone (422 `invalid_timestamp` otherwise), in the future (422 `invalid_value` otherwise). Null or absent: never.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>

export const ListApiKeysQuery = Type.Object(paginationQuery, { additionalProperties: false })
export type ListApiKeysQuery = Static<typeof ListApiKeysQuery>

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [Account, ApiKey, CreatedApiKey]
