import type { AuthContext } from '../../core/identity.js'
import { signalOnCommit } from '../../db/commit-signals.js'
import { compiled } from '../../db/compiled.js'
import type { Trx } from '../../db/connection.js'
import { toFlag } from '../../db/schema.js'
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
  const now = Date.now()
  const { previousAttributes } = options
  const envelope: EventEnvelope = {
    object: 'event',
    id: newId('evt'),
    type,
    api_version: API_VERSION,
    livemode: auth.livemode,
    created: toIso(now),
    data: { object, ...(previousAttributes ? { previous_attributes: previousAttributes } : {}) },
  }
  await insertEvent.run(trx, {
    id: envelope.id,
    accountId: auth.accountId,
    livemode: toFlag(auth.livemode),
    type,
    now,
    payload: JSON.stringify(envelope),
    dispatchedAt: options.dispatched ? now : null,
  })
  if (!options.dispatched) await signalOnCommit(trx, 'events')
  return envelope
}

/** Two or more of these in every create: compiled once (db/compiled.ts). */
const insertEvent = compiled(
  (
    db,
    p: {
      id: string
      accountId: string
      livemode: 0 | 1
      type: string
      now: number
      payload: string
      dispatchedAt: number | null
    },
  ) =>
    db.insertInto('events').values({
      id: p.id,
      account_id: p.accountId,
      livemode: p.livemode,
      type: p.type,
      created_at: p.now,
      payload: p.payload,
      dispatched_at: p.dispatchedAt,
    }),
)
