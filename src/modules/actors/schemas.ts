import { type Static, Type } from 'typebox'

export const Actor = Type.Object(
  {
    type: Type.Union(
      [Type.Literal('api_key'), Type.Literal('user'), Type.Literal('device'), Type.Literal('service')],
      {
        description:
          "`api_key`: an integration's key; `user`: a signed-in person; `device`: a paired time clock's key; `service`: the service itself (closing a forgotten check-out).",
      },
    ),
    id: Type.String({
      description: "The key's id (`key_…`), the person's (`usr_…`), the device's (`dev_…`), or `service`.",
    }),
    name: Type.Union([Type.String(), Type.Null()], {
      description:
        "As it is now: the key's label (null for a key without one), the person's name, the device's code (null once the device is deleted), `Attendance service`.",
    }),
  },
  {
    $id: 'Actor',
    additionalProperties: false,
    description: 'Who made a change (decisions.md, "Who did it").',
  },
)
export type Actor = Static<typeof Actor>

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [Actor]
