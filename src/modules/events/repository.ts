import type { AuthContext } from '../../core/identity.js'
import type { Executor } from '../../db/connection.js'
import { ownedBy } from '../../db/scope.js'
import type { EventEnvelope } from './outbox.js'

export interface EventRow {
  id: string
  payload: string
}

export function toEvent(row: EventRow): EventEnvelope {
  return JSON.parse(row.payload) as EventEnvelope
}

export async function findEvent(db: Executor, auth: AuthContext, id: string) {
  return db
    .selectFrom('events')
    .select(['id', 'payload'])
    .where((eb) => eb.and(ownedBy(auth)))
    .where('id', '=', id)
    .executeTakeFirst()
}

export async function listEventRows(
  db: Executor,
  auth: AuthContext,
  f: { type?: string; createdFrom?: number; createdTo?: number },
  beforeId: string | undefined,
  take: number,
) {
  return db
    .selectFrom('events')
    .select(['id', 'payload'])
    .where((eb) => eb.and(ownedBy(auth)))
    .$if(f.type !== undefined, (q) => q.where('type', '=', f.type ?? ''))
    .$if(f.createdFrom !== undefined, (q) => q.where('created_at', '>=', f.createdFrom ?? 0))
    .$if(f.createdTo !== undefined, (q) => q.where('created_at', '<', f.createdTo ?? 0))
    .$if(beforeId !== undefined, (q) => q.where('id', '<', beforeId ?? ''))
    .orderBy('id', 'desc')
    .limit(take)
    .execute()
}
