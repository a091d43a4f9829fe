import type { Selectable } from 'kysely'
import type { AuthContext } from '../../core/identity.js'
import { compiled, compiledInsert } from '../../db/compiled.js'
import { indexedConstant, supportsRowLocks } from '../../db/connection.js'
import { newestFirst } from '../../db/keyset.js'
import { type ReviewStatus, type SessionRevisionsTable, type SessionsTable, toFlag } from '../../db/schema.js'
import { atSites, type Owner, ownedBy, ownedRowFinder } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import { toIso, toIsoOrNull } from '../../lib/time.js'
import type { Actor } from '../actors/schemas.js'
import { parseBreaks, toApiBreaks } from './breaks.js'
import { totalHours } from './hours.js'
import type { Session, SessionRevision } from './schemas.js'

export type SessionRow = Selectable<SessionsTable>
export type RevisionRow = Selectable<SessionRevisionsTable>

export function toSession(row: SessionRow): Session {
  const breaks = parseBreaks(row.breaks)
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
    breaks: toApiBreaks(breaks),
    notes: row.notes,
    total_hours: totalHours(row.check_in_at, row.check_out_at, row.break_minutes, breaks),
    is_flagged: row.is_flagged === 1,
    flag_reason: row.flag_reason,
    source: row.source,
    status: row.status,
    work_date: row.work_date,
    review_status: row.review_status,
    reviewed_at: toIsoOrNull(row.reviewed_at),
    reviewed_by: row.reviewed_by,
    review_note: row.review_note,
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    updated: toIso(row.updated_at),
  }
}

/** A revision as the API shows it, with who made it (`actor`, looked up by the caller). */
export function toRevision(row: RevisionRow, actor: Actor): SessionRevision {
  return {
    object: 'session_revision',
    id: row.id,
    session_id: row.session_id,
    action: row.action,
    key_id: row.key_id,
    key_label: actor.type === 'api_key' ? actor.name : null,
    actor,
    livemode: row.livemode === 1,
    created: toIso(row.created_at),
    before: row.before === null ? null : storedSession(row.before),
    after: row.after === null ? null : storedSession(row.after),
  }
}

/**
 * A session as a revision stored it. One stored before sessions had break records (migration 011)
 * has no `breaks`: it had none, so `[]`, as the session itself now shows.
 */
function storedSession(text: string): Session {
  const session = JSON.parse(text) as Omit<Session, 'breaks'> & Partial<Pick<Session, 'breaks'>>
  return { ...session, breaks: session.breaks ?? [] }
}

/** The owner's sessions that were not deleted (the owner may be a compiled query's stand-ins). */
function undeleted(db: Executor, owner: Owner) {
  return db
    .selectFrom('sessions')
    .where('account_id', '=', owner.account_id)
    .where('livemode', '=', owner.livemode)
    .where('deleted_at', 'is', null)
}

/** Sessions the API shows: owned by the caller and not deleted. */
function visible(db: Executor, auth: AuthContext) {
  return undeleted(db, ownedBy(auth)).selectAll()
}

/**
 * An operator's record: the sessions the integrity rules (no overlap, late scans) hold a change
 * against. A session that counts for nothing (deleted or rejected) is left out here, in this one
 * place.
 */
function recordOf(db: Executor, owner: Owner, operatorId: string) {
  return undeleted(db, owner)
    .select(['id', 'location_id'])
    .where('operator_id', '=', operatorId)
    .where('review_status', '!=', 'rejected')
}

export interface OverlapQuery {
  operatorId: string
  /** The interval [start, end) of the session being checked; `end` null: open, with no end yet. */
  start: number
  end: number | null
  /** The session itself, on an edit. */
  excludeId?: string
  /** A completed session without a check-out (closed for an over-long shift) ends this long after its check-in. */
  closedShiftMs: number
  /** No completed session is longer: it bounds the range of check-ins read from the index. */
  longestSessionMs: number
}

/**
 * The sessions of the operator's record that overlap [start, end), at most one. An open session
 * has no end; a completed one ends at its check-out, or `closedShiftMs` after its check-in. Two
 * index ranges, no scan of the operator's history: the open session through `sessions_one_open`,
 * and the completed ones through `sessions_operator_check_in`, from `start - longestSessionMs`
 * (nothing that began earlier can reach `start`) to `end`.
 *
 * Compiled (db/compiled.ts), as every create, edit and check-in runs it: one shape for every
 * request, so a missing end is "no end" (the largest instant) and a missing `excludeId` excludes
 * nothing (no id is empty).
 */
const overlappingSessions = compiled(
  (
    db,
    p: Owner & {
      operatorId: string
      start: number
      end: number
      excludeId: string
      earliestCheckIn: number
      closedShiftMs: number
    },
  ) => {
    const candidates = (status: 'open' | 'completed') =>
      recordOf(db, p, p.operatorId)
        .where('status', '=', indexedConstant(status))
        .where('id', '!=', p.excludeId)
    // `check_in_at + 0`: a condition on the open session's check-in that no index can serve, or
    // SQLite reads the operator's whole history through `sessions_operator_check_in` instead of
    // finding the one open session through `sessions_one_open`.
    const open = candidates('open').where((eb) => eb(eb('check_in_at', '+', 0), '<', p.end))
    const completed = candidates('completed')
      .where('check_in_at', '<', p.end)
      .where('check_in_at', '>', p.earliestCheckIn)
      .where((eb) =>
        eb(eb.fn.coalesce('check_out_at', eb('check_in_at', '+', p.closedShiftMs)), '>', p.start),
      )
    return open.unionAll(completed).limit(1)
  },
)

function overlapParams(auth: AuthContext, q: OverlapQuery) {
  return {
    ...ownedBy(auth),
    operatorId: q.operatorId,
    start: q.start,
    end: q.end ?? Number.MAX_SAFE_INTEGER,
    excludeId: q.excludeId ?? '',
    earliestCheckIn: q.start - q.longestSessionMs,
    closedShiftMs: q.closedShiftMs,
  }
}

/** The overlap check's SQL and parameters as it runs, for EXPLAIN (bench/sessions.ts). */
export function overlappingSessionQuery(db: Executor, auth: AuthContext, q: OverlapQuery) {
  return overlappingSessions.compile(db, overlapParams(auth, q))
}

/** A session of the operator's record that overlaps the interval (its id and location), if any. */
export function findOverlappingSession(trx: Trx, auth: AuthContext, q: OverlapQuery) {
  return overlappingSessions.first(trx, overlapParams(auth, q))
}

/**
 * Open sessions, of every account, checked in before `before`: the forgotten check-outs a sweep
 * closes, oldest first. Read through the partial index `sessions_open_check_in` (migration 006),
 * which holds only open sessions.
 */
export async function findOpenSessionsCheckedInBefore(db: Executor, before: number, limit: number) {
  return db
    .selectFrom('sessions')
    .select(['account_id', 'livemode', 'operator_id'])
    .where('status', '=', indexedConstant('open'))
    .where('deleted_at', 'is', null)
    .where('check_in_at', '<', before)
    .orderBy('check_in_at')
    .limit(limit)
    .execute()
}

export const findSession = ownedRowFinder('sessions', { undeleted: true })

export async function findOpenSession(trx: Trx, auth: AuthContext, operatorId: string) {
  return visible(trx, auth)
    .where('operator_id', '=', operatorId)
    .where('status', '=', indexedConstant('open'))
    .$if(supportsRowLocks(trx), (q) => q.forUpdate())
    .executeTakeFirst()
}

// A batch of scans reads its operators' sessions in two statements before applying its items
// (scanning.ts, `startScanBatch`), rather than statements an item.

/**
 * The open sessions of these operators, locked (FOR UPDATE on PostgreSQL) as `findOpenSession`
 * locks one; the caller holds the operators' locks.
 */
export function lockOpenSessionsOf(
  trx: Trx,
  auth: AuthContext,
  operatorIds: readonly string[],
): Promise<SessionRow[]> {
  return trx
    .selectFrom('sessions')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
    .where('deleted_at', 'is', null)
    .where('operator_id', 'in', operatorIds)
    .where('status', '=', indexedConstant('open'))
    .orderBy('id')
    .$if(supportsRowLocks(trx), (q) => q.forUpdate())
    .execute()
}

/**
 * Per operator, the latest that a completed session of theirs which began after `since` can end:
 * its check-out, or `unknownEndMs` after its check-in when it has none (an upper bound). Deleted
 * and rejected sessions count too: a bound for the record's sessions, never below it.
 */
export function latestSessionEnds(
  trx: Trx,
  auth: AuthContext,
  operatorIds: readonly string[],
  since: number,
  unknownEndMs: number,
) {
  return trx
    .selectFrom('sessions')
    .select((eb) => [
      'operator_id',
      eb.fn
        .max<number>(eb.fn.coalesce('check_out_at', eb('check_in_at', '+', unknownEndMs)))
        .as('latest_end'),
    ])
    .where((eb) => eb.and(ownedBy(auth)))
    .where('operator_id', 'in', operatorIds)
    .where('status', '=', indexedConstant('completed'))
    .where('check_in_at', '>', since)
    .groupBy('operator_id')
    .execute()
}

/** Every create and check-in writes one: compiled once (db/compiled.ts). */
const insertSessionRow = compiledInsert('sessions', {
  id: true,
  account_id: true,
  livemode: true,
  operator_id: true,
  operator_ident: true,
  device_code: true,
  location_id: true,
  check_in_at: true,
  check_out_at: true,
  break_minutes: true,
  notes: true,
  is_flagged: true,
  flag_reason: true,
  source: true,
  status: true,
  deleted_at: true,
  created_at: true,
  updated_at: true,
  work_date: true,
  review_status: true,
  reviewed_at: true,
  reviewed_by: true,
  review_note: true,
  breaks: true,
})

export async function insertSession(trx: Trx, row: SessionRow) {
  await insertSessionRow.run(trx, row)
}

export async function updateSessionRow(trx: Trx, id: string, changes: Partial<SessionRow>) {
  await trx.updateTable('sessions').set(changes).where('id', '=', id).execute()
}

export interface SessionFilters {
  operator_id?: string
  operator_ident?: string
  device_id?: string
  location_id?: string
  is_flagged?: boolean
  status?: 'open' | 'completed'
  checkInFrom?: number
  checkInTo?: number
  review_status?: ReviewStatus
  work_date_from?: string
  work_date_to?: string
}

/** A session's place in the list by work date: its work date, then its id. */
export type WorkDateKey = [workDate: string, id: string]

/**
 * Where a page starts, in the list's order: newest first, below an id (`created`); or by work date,
 * after a work date and id (`work_date`). Undefined: the first page.
 */
export type SessionPageStart =
  | { order: 'created'; beforeId: string | undefined }
  | { order: 'work_date'; after: WorkDateKey | undefined }

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
 * No filter given. `f` may carry the whole list query (the page size, cursor and order are not
 * filters); any other field set, known here or added later, takes the general query.
 */
function isUnfiltered(f: SessionFilters): boolean {
  return Object.entries(f).every(
    ([name, value]) => value === undefined || name === 'limit' || name === 'cursor' || name === 'order',
  )
}

export async function listSessionRows(
  db: Executor,
  auth: AuthContext,
  f: SessionFilters,
  start: SessionPageStart,
  take: number,
) {
  if (start.order === 'created' && isUnfiltered(f) && auth.locationIds === null) {
    return listPage.rows(db, {
      accountId: auth.accountId,
      livemode: toFlag(auth.livemode),
      beforeId: start.beforeId ?? AFTER_EVERY_ID,
      take,
    })
  }
  return filteredSessionsQuery(db, auth, f, start, take).execute()
}

/** A page of a filtered list, or of any list by work date (exported so a test can read its query plan). */
export function filteredSessionsQuery(
  db: Executor,
  auth: AuthContext,
  f: SessionFilters,
  start: SessionPageStart,
  take: number,
) {
  const filtered = visible(db, auth)
    .$call(atSites(auth, 'location_id'))
    .$if(f.operator_id !== undefined, (q) => q.where('operator_id', '=', f.operator_id ?? ''))
    .$if(f.operator_ident !== undefined, (q) => q.where('operator_ident', '=', f.operator_ident ?? ''))
    .$if(f.device_id !== undefined, (q) => q.where('device_code', '=', f.device_id ?? ''))
    .$if(f.location_id !== undefined, (q) => q.where('location_id', '=', f.location_id ?? ''))
    .$if(f.is_flagged !== undefined, (q) => q.where('is_flagged', '=', toFlag(f.is_flagged ?? false)))
    // A literal: SQLite reads open sessions through their partial index only when it sees `'open'`.
    .$if(f.status !== undefined, (q) => q.where('status', '=', indexedConstant(f.status ?? 'open')))
    .$if(f.checkInFrom !== undefined, (q) => q.where('check_in_at', '>=', f.checkInFrom ?? 0))
    .$if(f.checkInTo !== undefined, (q) => q.where('check_in_at', '<', f.checkInTo ?? 0))
    .$if(f.review_status !== undefined, (q) => q.where('review_status', '=', f.review_status ?? 'pending'))
    .$if(f.work_date_from !== undefined, (q) => q.where('work_date', '>=', f.work_date_from ?? ''))
    .$if(f.work_date_to !== undefined, (q) => q.where('work_date', '<=', f.work_date_to ?? ''))
  if (start.order === 'created') {
    return filtered.$call(newestFirst(start.beforeId, take))
  }
  const after = start.after
  return (
    filtered
      // After (work date, id): a range from the work date (which an index on it can seek to), then
      // the rest of that date's sessions past the id.
      .$if(after !== undefined, (q) => {
        const [workDate, id] = after ?? ['', '']
        return q
          .where('work_date', '>=', workDate)
          .where((eb) => eb.or([eb('work_date', '>', workDate), eb('id', '>', id)]))
      })
      .orderBy('work_date')
      .orderBy('id')
      .limit(take)
  )
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
  await insertRevisionRow.run(trx, {
    id: newId('rev'),
    session_id: sessionId,
    account_id: auth.accountId,
    livemode: toFlag(auth.livemode),
    action,
    key_id: auth.principalId,
    created_at: clock.now(),
    before: before === null ? null : JSON.stringify(before),
    after: after === null ? null : JSON.stringify(after),
  })
}

/** One in every create and edit: compiled once (db/compiled.ts), held where the create holds writes. */
const insertRevisionRow = compiledInsert('session_revisions', {
  id: true,
  session_id: true,
  account_id: true,
  livemode: true,
  action: true,
  key_id: true,
  created_at: true,
  before: true,
  after: true,
})

/** A page of a session's revisions, newest first (their keys' labels are the keys module's). */
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
    .where('account_id', '=', auth.accountId)
    .where('livemode', '=', toFlag(auth.livemode))
    .where('session_id', '=', sessionId)
    .$call(newestFirst(beforeId, take))
    .execute()
}

/** Whether a session ever existed for the caller, deleted or not (its revisions are kept). */
export async function sessionEverExisted(db: Executor, auth: AuthContext, id: string) {
  const row = await db
    .selectFrom('sessions')
    .select('id')
    .where((eb) => eb.and(ownedBy(auth)))
    .where('id', '=', id)
    .$call(atSites(auth, 'location_id'))
    .executeTakeFirst()
  return row !== undefined
}

/** Open sessions of every account and mode, for the metrics gauge: the partial index `sessions_open` alone. */
export async function countOpenSessions(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('status', '=', indexedConstant('open'))
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.count)
}
