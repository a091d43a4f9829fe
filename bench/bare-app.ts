/**
 * What the two bare stacks of `npm run bench:http` share (bench/bare-server.ts on better-sqlite3,
 * bench/bare-server-pg.ts on `pg`): the API-key check, the request and response schemas, the row →
 * API mapping and the two routes. Each stack hands in a `BareStore`, its few statements; nothing
 * here imports from src/, so the baselines do not move when the service does.
 *
 * Per request:
 *   - the API-key check: SHA-256 of the bearer secret, looked up in a Map (the store on a miss);
 *   - POST: TypeBox schema validation of the body (Fastify's default Ajv), the two instants parsed,
 *     and one transaction writing the session row and one event row (the event's payload is the
 *     JSON envelope, as the service's outbox stores it); 201 with the session;
 *   - GET: one keyset page, `… WHERE account_id = ? AND livemode = ? AND id < ? ORDER BY id DESC
 *     LIMIT 51`, the rows mapped to the API shape, serialised through a response schema.
 * It does not resolve the operator, device or location, keep revisions, honour Idempotency-Key,
 * rate-limit, sign cursors or add request ids: those are what the service adds.
 */
import { createHash } from 'node:crypto'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { type Static, Type } from 'typebox'

export interface Caller {
  accountId: string
  livemode: 0 | 1
}

export interface SessionRow {
  id: string
  account_id: string
  livemode: number
  operator_id: string
  operator_ident: string
  device_code: string
  location_id: string | null
  check_in_at: number
  check_out_at: number | null
  break_minutes: number
  notes: string | null
  is_flagged: number
  flag_reason: string | null
  source: string
  status: string
  deleted_at: number | null
  created_at: number
  updated_at: number
}

/** The columns of `sessions` in table order, for the stores' INSERT statements. */
export const SESSION_COLUMNS: ReadonlyArray<keyof SessionRow> = [
  'id',
  'account_id',
  'livemode',
  'operator_id',
  'operator_ident',
  'device_code',
  'location_id',
  'check_in_at',
  'check_out_at',
  'break_minutes',
  'notes',
  'is_flagged',
  'flag_reason',
  'source',
  'status',
  'deleted_at',
  'created_at',
  'updated_at',
]

/** An event row as the service's outbox stores it: the payload is the whole envelope. */
export interface EventRow {
  id: string
  account_id: string
  livemode: number
  type: string
  created_at: number
  payload: string
}

/**
 * A stack's statements. SQLite's answer synchronously, PostgreSQL's with a promise: the routes
 * await either, so both stacks run the same handlers.
 */
export interface BareStore {
  findKey(secretHash: string): Caller | undefined | Promise<Caller | undefined>
  /** The session and its event in one transaction. */
  create(session: SessionRow, event: EventRow): void | Promise<void>
  /** Up to `limit` live sessions of the scope with ids below `before`, newest first. */
  page(
    accountId: string,
    livemode: number,
    before: string,
    limit: number,
  ): SessionRow[] | Promise<SessionRow[]>
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

// ---- ids: 26 characters like the service's ULIDs, sortable by creation time within this process
// (what keyset pagination needs)

let sequence = 0
const base32 = (n: number, width: number) => n.toString(32).toUpperCase().padStart(width, '0')
const newId = (prefix: string) => `${prefix}_${base32(Date.now(), 10)}${base32(sequence++, 16)}`
/** Stand-ins of the same length for what the service looks up (the operator's id, the device's location). */
const operatorIdOf = (ident: string) => `op_${ident.padEnd(26, '0').slice(0, 26)}`
const DEVICE_LOCATION = `loc_${'0'.repeat(26)}`

// ---- schemas: the same request and response shapes as the service's

const time = Type.Object({ time: Type.String({ maxLength: 64 }) }, { additionalProperties: false })
const reference = (maxLength = 64) => Type.String({ minLength: 1, maxLength })
const CreateBody = Type.Object(
  {
    operator_ident: Type.Optional(reference()),
    operator_id: Type.Optional(reference()),
    location_name: Type.Optional(reference(200)),
    location_id: Type.Optional(reference()),
    device_id: reference(),
    break_minutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
    notes: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    check_in: time,
    check_out: time,
  },
  { additionalProperties: false },
)
const ListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
)
const Session = Type.Object({
  object: Type.Literal('session'),
  id: Type.String(),
  operator_id: Type.String(),
  operator_ident: Type.String(),
  device_id: Type.String(),
  location_id: Type.Union([Type.String(), Type.Null()]),
  check_in: Type.Object({ time: Type.String() }),
  check_out: Type.Union([Type.Object({ time: Type.String() }), Type.Null()]),
  break_minutes: Type.Integer(),
  breaks: Type.Array(
    Type.Object({
      start: Type.Object({ time: Type.String() }),
      end: Type.Union([Type.Object({ time: Type.String() }), Type.Null()]),
      paid: Type.Boolean(),
      source: Type.String(),
    }),
  ),
  notes: Type.Union([Type.String(), Type.Null()]),
  total_hours: Type.Union([Type.Number(), Type.Null()]),
  is_flagged: Type.Boolean(),
  flag_reason: Type.Union([Type.String(), Type.Null()]),
  source: Type.String(),
  status: Type.String(),
  work_date: Type.String(),
  review_status: Type.String(),
  reviewed_at: Type.Union([Type.String(), Type.Null()]),
  reviewed_by: Type.Union([Type.String(), Type.Null()]),
  review_note: Type.Union([Type.String(), Type.Null()]),
  livemode: Type.Boolean(),
  created: Type.String(),
  updated: Type.String(),
})
type Session = Static<typeof Session>
const SessionList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Session),
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
})
const ErrorBody = Type.Object({ error: Type.Object({ type: Type.String(), message: Type.String() }) })

const iso = (ms: number) => new Date(ms).toISOString()

function toSession(row: SessionRow): Session {
  const hours =
    row.check_out_at === null
      ? null
      : Math.floor((row.check_out_at - row.check_in_at - row.break_minutes * 60_000) / 36_000 + 0.5) / 100
  return {
    object: 'session',
    id: row.id,
    operator_id: row.operator_id,
    operator_ident: row.operator_ident,
    device_id: row.device_code,
    location_id: row.location_id,
    check_in: { time: iso(row.check_in_at) },
    check_out: row.check_out_at === null ? null : { time: iso(row.check_out_at) },
    break_minutes: row.break_minutes,
    breaks: [],
    notes: row.notes,
    total_hours: hours,
    is_flagged: row.is_flagged === 1,
    flag_reason: row.flag_reason,
    source: row.source,
    status: row.status,
    // The service's review fields (and `breaks` above: the bare stack takes none), derived rather
    // than stored: the bare stack does the least.
    work_date: iso(row.check_in_at).slice(0, 10),
    review_status: 'pending',
    reviewed_at: null,
    reviewed_by: null,
    review_note: null,
    livemode: row.livemode === 1,
    created: iso(row.created_at),
    updated: iso(row.updated_at),
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null
  }
}

/** The bare app on `store`; `onClose` releases the store's connections. */
export function bareApp(store: BareStore): FastifyInstance {
  const keys = new Map<string, Caller>()
  const callerOf = async (authorization: string | undefined): Promise<Caller | undefined> => {
    if (!authorization?.startsWith('Bearer ')) return undefined
    const hash = sha256(authorization.slice('Bearer '.length))
    let caller = keys.get(hash)
    if (!caller) {
      caller = await store.findKey(hash)
      if (caller) keys.set(hash, caller)
    }
    return caller
  }

  const app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>()
  app.decorateRequest('caller', null)
  app.addHook('onRequest', async (request, reply) => {
    const caller = await callerOf(request.headers.authorization)
    if (!caller) {
      return reply
        .code(401)
        .send({ error: { type: 'authentication_error', message: 'Invalid API key provided.' } })
    }
    request.caller = caller
  })

  const unprocessable = (message: string) => ({ error: { type: 'validation_error', message } })

  app.post(
    '/v1/sessions',
    { schema: { body: CreateBody, response: { 201: Session, 422: ErrorBody } } },
    async (request, reply) => {
      const caller = request.caller as Caller
      const body = request.body
      const checkIn = Date.parse(body.check_in.time)
      const checkOut = Date.parse(body.check_out.time)
      if (Number.isNaN(checkIn) || Number.isNaN(checkOut) || checkOut <= checkIn) {
        return reply.code(422).send(unprocessable('check_out.time must be later than check_in.time.'))
      }
      const now = Date.now()
      const row: SessionRow = {
        id: newId('ses'),
        account_id: caller.accountId,
        livemode: caller.livemode,
        operator_id: body.operator_id ?? operatorIdOf(body.operator_ident ?? ''),
        operator_ident: body.operator_ident ?? body.operator_id ?? '',
        device_code: body.device_id,
        location_id: body.location_id ?? DEVICE_LOCATION,
        check_in_at: checkIn,
        check_out_at: checkOut,
        break_minutes: body.break_minutes ?? 0,
        notes: body.notes ?? null,
        is_flagged: 1,
        flag_reason: 'manual_api_entry',
        source: 'api',
        status: 'completed',
        deleted_at: null,
        created_at: now,
        updated_at: now,
      }
      const session = toSession(row)
      const eventId = newId('evt')
      const envelope = {
        object: 'event',
        id: eventId,
        type: 'session.completed',
        api_version: '2026-11-22',
        livemode: row.livemode === 1,
        created: iso(row.created_at),
        data: { object: session },
      }
      await store.create(row, {
        id: eventId,
        account_id: row.account_id,
        livemode: row.livemode,
        type: envelope.type,
        created_at: row.created_at,
        payload: JSON.stringify(envelope),
      })
      return reply.code(201).send(session)
    },
  )

  app.get(
    '/v1/sessions',
    { schema: { querystring: ListQuery, response: { 200: SessionList } } },
    async (request) => {
      const caller = request.caller as Caller
      const { limit, cursor } = request.query
      // '~' sorts after every id (they are `ses_` + digits and capital letters).
      const rows = await store.page(caller.accountId, caller.livemode, cursor ?? '~', limit + 1)
      const hasMore = rows.length > limit
      const data = (hasMore ? rows.slice(0, limit) : rows).map(toSession)
      return {
        object: 'list' as const,
        data,
        has_more: hasMore,
        next_cursor: hasMore ? (data[data.length - 1]?.id ?? null) : null,
      }
    },
  )
  return app
}

/** Listens on 127.0.0.1:`port`; SIGTERM or SIGINT closes the app, then `release`, then exits. */
export async function serveBare(app: FastifyInstance, port: number, release: () => void | Promise<void>) {
  const close = async () => {
    await app.close()
    await release()
    process.exit(0)
  }
  process.once('SIGTERM', close)
  process.once('SIGINT', close)
  const address = await app.listen({ port, host: '127.0.0.1' })
  console.log(`bare server listening on ${address}`)
}
