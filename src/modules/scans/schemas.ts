import { type Static, Type } from 'typebox'
import { paginationQuery, Timestamp } from '../../core/schemas.js'
import { SCAN_FLAG_REASONS, type ScanFlagReason } from '../sessions/scan-decision.js'

const direction = Type.Union(
  [
    Type.Literal('auto'),
    Type.Literal('in'),
    Type.Literal('out'),
    Type.Literal('break_start'),
    Type.Literal('break_end'),
  ],
  {
    description:
      '`auto` checks out with an open session and in otherwise (never a break); `in` and `out` force it; `break_start` opens an unpaid break in the open session, `break_end` ends the break going on.',
  },
)

const result = () =>
  Type.Union([
    Type.Literal('checked_in'),
    Type.Literal('checked_out'),
    Type.Literal('break_started'),
    Type.Literal('break_ended'),
    Type.Literal('flagged'),
  ])

// The reasons are the scan decision's, which the sessions module owns (sessions/scan-decision.ts).
export { SCAN_FLAG_REASONS, type ScanFlagReason }

export const Scan = Type.Object(
  {
    object: Type.Literal('scan'),
    id: Type.String({ description: 'Prefix `scn_`.' }),
    device_id: Type.String({ description: "The device's code." }),
    operator_id: Type.String(),
    operator_ident: Type.String(),
    operator_name: Type.Union([Type.String(), Type.Null()], {
      description: "The operator's name when scanned: what the clock shows the worker.",
    }),
    time: Timestamp,
    direction,
    result: result(),
    flag_reason: Type.Union(
      [Type.Unsafe<ScanFlagReason>({ type: 'string', enum: [...SCAN_FLAG_REASONS] }), Type.Null()],
      {
        description: 'Why a `flagged` scan changed nothing; null otherwise.',
      },
    ),
    session_id: Type.Union([Type.String(), Type.Null()], {
      description:
        'The session opened, completed or whose break started or ended (or closed, for max_shift_exceeded); null for other flags.',
    }),
    client_scan_id: Type.Union([Type.String(), Type.Null()], {
      description: "The device's own id of the scan, when it sent one.",
    }),
    clock_skew_ms: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "The correction applied to the device's clock (a batch's `sent_at` more than 2 minutes off the service's); null: none.",
    }),
    livemode: Type.Boolean(),
    created: Timestamp,
  },
  { $id: 'Scan', additionalProperties: false, description: 'A badge scan at a device and what it did.' },
)
export type Scan = Static<typeof Scan>

export const CreateScanBody = Type.Object(
  {
    device_id: Type.String({ minLength: 1, maxLength: 64, description: "The device's code." }),
    operator_ident: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    operator_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    time: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "ISO-8601 with a zone; default now. At most 5 minutes after the server's clock (422 `time_in_future`: a device clock far ahead would open a session that blocks every real scan). A time before the record has moved on (earlier than the open session's check-in, inside a completed session) is flagged `out_of_order`: a device that was offline must not make overlapping sessions.",
      }),
    ),
    direction: Type.Optional(direction),
    client_scan_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          "Made by the device when it captures the scan: a second scan with the same id from the same device answers the first one's scan and changes nothing, however late it comes.",
      }),
    ),
    pin: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "The operator's PIN, at a device with `require_pin` (missing: 422 `missing_param`; wrong: 422 `invalid_pin`; 5 wrong in a row: 429 `pin_locked` for 15 minutes).",
      }),
    ),
    pin_ciphertext: Type.Optional(
      Type.String({
        maxLength: 2048,
        description:
          "A PIN captured offline: its UTF-8 bytes encrypted with RSA-OAEP (SHA-256) to the device's `pin_key`, base64url without padding.",
      }),
    ),
  },
  { additionalProperties: false },
)
export type CreateScanBody = Static<typeof CreateScanBody>

/** Scans a device synced at once; more is 422 naming `scans`. */
export const MAX_BATCH_SCANS = 500

export const CreateScanBatchBody = Type.Object(
  {
    scans: Type.Array(CreateScanBody, {
      minItems: 1,
      maxItems: MAX_BATCH_SCANS,
      description: `1 to ${MAX_BATCH_SCANS} scans, each as \`POST /v1/scans\` takes it; applied in \`time\` order.`,
    }),
    sent_at: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "The sending device's clock as it stamped the scans (ISO-8601 with a zone). More than 2 minutes off the service's clock: every scan's `time` moves by the difference, recorded as its `clock_skew_ms`.",
      }),
    ),
  },
  { additionalProperties: false },
)
export type CreateScanBatchBody = Static<typeof CreateScanBatchBody>

export const ListScansQuery = Type.Object(
  {
    ...paginationQuery,
    operator_id: Type.Optional(Type.String({ maxLength: 64 })),
    device_id: Type.Optional(Type.String({ maxLength: 64 })),
    result: Type.Optional(result()),
  },
  { additionalProperties: false },
)
export type ListScansQuery = Static<typeof ListScansQuery>

/**
 * The module's named schemas (each with a `$id`): `http/openapi.ts` registers them, so `ref()` can
 * point at them, and the document lists them under `components.schemas`.
 */
export const COMPONENT_SCHEMAS = [Scan]
