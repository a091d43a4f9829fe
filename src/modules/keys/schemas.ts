import { type Static, Type } from 'typebox'

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

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [Account]
