import type { Selectable } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { compiled } from '../../db/compiled.js'
import type { Executor, Trx } from '../../db/connection.js'
import { supportsRowLocks } from '../../db/connection.js'
import type { SessionRevisionsTable, SessionsTable } from '../../db/schema.js'
import { ownedBy } from '../../db/scope.js'
import { newId } from '../../lib/ids.js'
import { toIso } from '../../lib/time.js'
import type { Session, SessionRevision } from './schemas.js'

export type SessionRow = Selectable<SessionsTable>
export type RevisionRow = Selectable<SessionRevisionsTable>

const MS_PER_HUNDREDTH_HOUR = 36_000

/**
 * (check_out − check_in in minutes − break_minutes) / 60, rounded half-up to 2 decimals, computed
 * in whole milliseconds so no floating-point error moves a value across a rounding boundary.
 * Real elapsed time: instants are absolute, so midnight and DST changes need no special case.
 */
export function totalHours(
  checkInAt: number,
  checkOutAt: number | null,
  breakMinutes: number,
): number | null {
  if (checkOutAt === null) return null
  const workedMs = checkOutAt - checkInAt - breakMinutes * 60_000
  return Math.floor(workedMs / MS_PER_HUNDREDTH_HOUR + 0.5) / 100
}

export function toSession(row: SessionRow): Session {
  return {
    object: 'session',
    id: row.id,
    operator_id: row.operator_id,
    operator_ident: row.operator_ident,
    device_id: row.device_code,
    location_id: row.location_id,
    check_in: { time: toIso(row.check_in_at) },
    check_out: row.check_out_at === null ? null : { time: toIso(row.check_out_at) },
    break_minutes: row.break_minutes,
    notes: row.notes,
    total_hours: totalHours(row.check_in_at, row.check_out_at, row.break_minutes),
    is_flagged: row.is_flagged === 1,
    flag_reason: row.flag_reason,
    source: row.source,
    status: row.status,
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    updated: toIso(row.updated_at),
  }
}

export function toRevision(row: RevisionRow): SessionRevision {
  return {
    object: 'session_revision',
    id: row.id,
    session_id: row.session_id,
    action: row.action,
    key_id: row.key_id,
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    before: row.before === null ? null : (JSON.parse(row.before) as Session),
    after: row.after === null ? null : (JSON.parse(row.after) as Session),
  }
}

function scopeOf(auth: AuthContext) {
  return { accountId: auth.accountId, livemode: auth.livemode ? (1 as const) : (0 as const) }
}

/** Sessions the API shows: owned by the caller and not deleted. */
function visible(db: Executor, auth: AuthContext) {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
    .where('deleted_at', 'is', null)
}

export async function findSession(db: Executor, auth: AuthContext, id: string, lock = false) {
  return visible(db, auth)
    .where('id', '=', id)
    .$if(lock && supportsRowLocks(db), (q) => q.forUpdate())
    .executeTakeFirst()
}

export async function findOpenSession(trx: Trx, auth: AuthContext, operatorId: string) {
  return visible(trx, auth)
    .where('operator_id', '=', operatorId)
    .where('status', '=', 'open')
    .$if(supportsRowLocks(trx), (q) => q.forUpdate())
    .executeTakeFirst()
}

export async function insertSession(trx: Trx, row: SessionRow) {
  await trx.insertInto('sessions').values(row).execute()
}

export async function updateSessionRow(trx: Trx, id: string, changes: Partial<SessionRow>) {
  await trx.updateTable('sessions').set(changes).where('id', '=', id).execute()
}

export interface SessionFilters {
  operator_id?: string
  device_id?: string
  location_id?: string
  is_flagged?: boolean
  status?: 'open' | 'completed'
  checkInFrom?: number
  checkInTo?: number
}

/** The unfiltered list, the service's most common read: compiled once (db/compiled.ts). */
const listPage = compiled((db, p: { accountId: string; livemode: 0 | 1; beforeId: string; take: number }) =>
  db
    .selectFrom('sessions')
    .selectAll()
    .where('account_id', '=', p.accountId)
    .where('livemode', '=', p.livemode)
    .where('deleted_at', 'is', null)
    .where('id', '<', p.beforeId)
    .orderBy('id', 'desc')
    .limit(p.take),
)
/** Sorts after every id (a prefix, `_` and Crockford base32), so `id < AFTER_EVERY_ID` is all. */
const AFTER_EVERY_ID = '~'

/**
 * No filter given. `f` may carry the whole list query (the page size and cursor are not filters);
 * any other field set, known here or added later, takes the general query.
 */
function isUnfiltered(f: SessionFilters): boolean {
  return Object.entries(f).every(
    ([name, value]) => value === undefined || name === 'limit' || name === 'cursor',
  )
}

export async function listSessionRows(
  db: Executor,
  auth: AuthContext,
  f: SessionFilters,
  beforeId: string | undefined,
  take: number,
) {
  if (isUnfiltered(f)) {
    return listPage.rows(db, {
      ...scopeOf(auth),
      beforeId: beforeId ?? AFTER_EVERY_ID,
      take,
    })
  }
  return visible(db, auth)
    .$if(f.operator_id !== undefined, (q) => q.where('operator_id', '=', f.operator_id ?? ''))
    .$if(f.device_id !== undefined, (q) => q.where('device_code', '=', f.device_id ?? ''))
    .$if(f.location_id !== undefined, (q) => q.where('location_id', '=', f.location_id ?? ''))
    .$if(f.is_flagged !== undefined, (q) => q.where('is_flagged', '=', f.is_flagged ? 1 : 0))
    .$if(f.status !== undefined, (q) => q.where('status', '=', f.status ?? 'open'))
    .$if(f.checkInFrom !== undefined, (q) => q.where('check_in_at', '>=', f.checkInFrom ?? 0))
    .$if(f.checkInTo !== undefined, (q) => q.where('check_in_at', '<', f.checkInTo ?? 0))
    .$if(beforeId !== undefined, (q) => q.where('id', '<', beforeId ?? ''))
    .orderBy('id', 'desc')
    .limit(take)
    .execute()
}

/** Appends an immutable revision: who (the key), when, and the session before and after. */
export async function insertRevision(
  trx: Trx,
  auth: AuthContext,
  sessionId: string,
  action: string,
  before: Session | null,
  after: Session | null,
) {
  await trx
    .insertInto('session_revisions')
    .values({
      id: newId('rev'),
      session_id: sessionId,
      ...ownedBy(auth),
      action,
      key_id: auth.keyId,
      created_at: Date.now(),
      before: before === null ? null : JSON.stringify(before),
      after: after === null ? null : JSON.stringify(after),
    })
    .execute()
}

export async function listRevisionRows(
  db: Executor,
  auth: AuthContext,
  sessionId: string,
  beforeId: string | undefined,
  take: number,
) {
  return db
    .selectFrom('session_revisions')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
    .where('session_id', '=', sessionId)
    .$if(beforeId !== undefined, (q) => q.where('id', '<', beforeId ?? ''))
    .orderBy('id', 'desc')
    .limit(take)
    .execute()
}

/** Whether a session ever existed for the caller, deleted or not (its revisions are kept). */
export async function sessionEverExisted(db: Executor, auth: AuthContext, id: string) {
  const row = await db
    .selectFrom('sessions')
    .select('id')
    .where((eb) => eb.and(ownedBy(auth)))
    .where('id', '=', id)
    .executeTakeFirst()
  return row !== undefined
}
