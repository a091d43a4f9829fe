import type { Executor } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { insertAuditEntry } from './audit-repository.js'
import type { AuditType } from './schemas.js'

export type { AuditType }

/** Who did it: a key (its label), a person (their name), a device (its code), or the service itself (the CLI). */
export interface Actor {
  type: 'api_key' | 'user' | 'device' | 'service'
  id: string
  name: string | null
}

export interface AuditEntry {
  /** The account it happened in; null for what belongs to no account (a failed sign-in of an unknown e-mail). */
  accountId: string | null
  type: AuditType
  actor: Actor
  target?: { type: 'user' | 'api_key'; id: string }
  ip?: string | null
}

/** Records one entry, in the caller's transaction (the change and its entry commit together). */
export async function recordAudit(db: Executor, entry: AuditEntry): Promise<void> {
  await insertAuditEntry(db, {
    id: newId('aud'),
    account_id: entry.accountId,
    type: entry.type,
    actor_type: entry.actor.type,
    actor_id: entry.actor.id,
    actor_name: entry.actor.name,
    target_type: entry.target?.type ?? null,
    target_id: entry.target?.id ?? null,
    ip: entry.ip ?? null,
    created_at: clock.now(),
  })
}
