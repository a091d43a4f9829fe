import type { AuthContext } from '../../core/identity.js'
import { signalOnCommit } from '../../db/commit-signals.js'
import { compiledInsertRows } from '../../db/compiled.js'
import { toFlag } from '../../db/schema.js'
import type { Trx } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { toIso } from '../../lib/time.js'
import type { TEST_EVENT_TYPE } from '../webhooks/subscription.js'
import { API_VERSION, type EventType } from './types.js'

export interface EventEnvelope {
  object: 'event'
  id: string
  type: string
  api_version: string
  livemode: boolean
  created: string
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> }
}

export interface EventOptions {
  /** On updates: the previous values of the fields that changed. */
  previousAttributes?: Record<string, unknown>
  /**
   * The event is delivered by its caller alone (send-test), so the outbox relay must not fan it
   * out to subscriptions: it is stored as dispatched already.
   */
  dispatched?: boolean
}

/**
 * Writes an event into the outbox, inside the caller's transaction: the change and its event
 * commit together or not at all. Webhook delivery reads from this table. The only writer of
 * `events`: every envelope is built here. The commit wakes the workers' dispatchers (once per
 * transaction, however many events it records; no statement is added to it: see
 * db/commit-signals.ts).
 */
export async function recordEvent(
  trx: Trx,
  auth: AuthContext,
  type: EventType | typeof TEST_EVENT_TYPE,
  object: { object: string; id: string },
  options: EventOptions = {},
): Promise<EventEnvelope> {
  const [envelope] = await recordEvents(trx, auth, [type], object, options)
  return envelope as EventEnvelope
}

/**
 * Several events about one object (a session created through the API is both completed and
 * flagged), as `recordEvent` writes each, in the order given: one INSERT of all their rows (one
 * round trip on PostgreSQL), and the object serialised once for all their payloads.
 */
export async function recordEvents(
  trx: Trx,
  auth: AuthContext,
  types: ReadonlyArray<EventType | typeof TEST_EVENT_TYPE>,
  object: { object: string; id: string },
  options: EventOptions = {},
): Promise<EventEnvelope[]> {
  const now = clock.now()
  const created = toIso(now)
  const data = {
    object,
    ...(options.previousAttributes ? { previous_attributes: options.previousAttributes } : {}),
  }
  // What follows `"data":` in every payload: the same for each event of the call.
  const dataJson = JSON.stringify(data)
  const envelopes: EventEnvelope[] = []
  const rows = types.map((type) => {
    const envelope: EventEnvelope = {
      object: 'event',
      id: newId('evt'),
      type,
      api_version: API_VERSION,
      livemode: auth.livemode,
      created,
      data,
    }
    envelopes.push(envelope)
    return {
      id: envelope.id,
      account_id: auth.accountId,
      livemode: toFlag(auth.livemode),
      type,
      created_at: now,
      payload: envelopeJson(envelope, dataJson),
      dispatched_at: options.dispatched ? now : null,
    }
  })
  await insertEventRows(rows.length).run(trx, rows)
  if (!options.dispatched) await signalOnCommit(trx, 'events')
  return envelopes
}

/** `JSON.stringify(envelope)`, with its `data` already serialised. */
function envelopeJson(envelope: EventEnvelope, dataJson: string): string {
  const { data: _data, ...head } = envelope
  const headJson = JSON.stringify(head)
  return `${headJson.slice(0, -1)},"data":${dataJson}}`
}

/** Every column of an event row, as `compiledInsert` names them. */
export const EVENT_COLUMNS = {
  id: true,
  account_id: true,
  livemode: true,
  type: true,
  created_at: true,
  payload: true,
  dispatched_at: true,
} as const

/** The INSERT of n events, compiled once per n (db/compiled.ts): every create writes two. */
const insertsByCount = new Map<number, ReturnType<typeof compiledInsertRows<'events'>>>()

function insertEventRows(count: number) {
  let insert = insertsByCount.get(count)
  if (!insert) {
    insert = compiledInsertRows('events', EVENT_COLUMNS, count)
    insertsByCount.set(count, insert)
  }
  return insert
}
