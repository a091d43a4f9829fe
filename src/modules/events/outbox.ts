import type { AuthContext } from '../../core/identity.js'
import type { Trx } from '../../db/connection.js'
import { newId } from '../../lib/ids.js'
import { toIso } from '../../lib/time.js'
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

/**
 * Writes an event into the outbox, inside the caller's transaction: the change and its event
 * commit together or not at all. Webhook delivery reads from this table.
 */
export async function recordEvent(
  trx: Trx,
  auth: AuthContext,
  type: EventType,
  object: { object: string; id: string },
  previousAttributes?: Record<string, unknown>,
): Promise<EventEnvelope> {
  const now = Date.now()
  const envelope: EventEnvelope = {
    object: 'event',
    id: newId('evt'),
    type,
    api_version: API_VERSION,
    livemode: auth.livemode,
    created: toIso(now),
    data: { object, ...(previousAttributes ? { previous_attributes: previousAttributes } : {}) },
  }
  await trx
    .insertInto('events')
    .values({
      id: envelope.id,
      account_id: auth.accountId,
      livemode: auth.livemode ? 1 : 0,
      type,
      created_at: now,
      payload: JSON.stringify(envelope),
    })
    .execute()
  return envelope
}
