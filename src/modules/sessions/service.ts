import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { instantOf } from '../../core/instants.js'
import type { Executor } from '../../db/types.js'
import { actorsOf } from '../actors/service.js'
import { findNamedOperator } from '../operators/service.js'
import { retrieveResource } from '../shared/resources.js'
import { sessions } from './lifecycle.js'
import {
  listRevisionRows,
  listSessionRows,
  type SessionFilters,
  type SessionPageStart,
  type SessionRow,
  sessionEverExisted,
  toRevision,
  toSession,
  type WorkDateKey,
} from './repository.js'
import type { ListSessionsQuery, Session, SessionRevision } from './schemas.js'

export type { StoredBreak } from '../../db/schema.js'
/** The open sessions' count, read by the metrics gauge `sessions_open`. */
export { countOpenSessions } from './repository.js'
export type { SessionRow }

/** Reads of sessions; every change to one goes through `lifecycle.ts`. */

export function retrieveSession(db: Executor, auth: AuthContext, id: string): Promise<Session> {
  return retrieveResource(db, auth, sessions, id)
}

/** A page of the list in the order `start` names (see `SessionPageStart`). */
export async function listSessions(
  db: Executor,
  auth: AuthContext,
  query: ListSessionsQuery,
  start: SessionPageStart,
  take: number,
): Promise<Session[]> {
  const filters: SessionFilters = {
    ...query,
    checkInFrom:
      query.check_in_from === undefined ? undefined : instantOf(query.check_in_from, 'check_in_from'),
    checkInTo: query.check_in_to === undefined ? undefined : instantOf(query.check_in_to, 'check_in_to'),
  }
  if (query.operator_id !== undefined || query.operator_ident !== undefined) {
    const operator = await findNamedOperator(db, auth, query)
    if (!operator) return []
    // An operator's sessions carry its id and its ident (which never changes): filtered by both,
    // the database reads them through whichever index serves the order, by id (newest first) or by
    // ident and work date, without reading other operators' sessions.
    filters.operator_id = operator.id
    filters.operator_ident = operator.ident
  }
  const rows = await listSessionRows(db, auth, filters, start, take)
  return rows.map(toSession)
}

/** A session's key in the list by work date, which its cursor carries. */
export const workDateKeyOf = (session: Session): WorkDateKey => [session.work_date, session.id]

export const isWorkDateKey = (value: unknown): value is WorkDateKey =>
  Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string'

/** A session's edit history is read for a session of the caller's that exists or once did: 404 else. */
export async function assertSessionEverExisted(db: Executor, auth: AuthContext, id: string): Promise<void> {
  if (!(await sessionEverExisted(db, auth, id))) throw errors.notFound('session', id)
}

/**
 * A page of a session's revisions, newest first (the keyset query's filter is the session's id),
 * each with who made it as they are now (`actor`, and `key_label` for a key): the actors of the
 * whole page in a few statements (actors' service), never one per revision.
 */
export async function listRevisions(
  db: Executor,
  auth: AuthContext,
  sessionId: string,
  beforeId: string | undefined,
  take: number,
): Promise<SessionRevision[]> {
  const rows = await listRevisionRows(db, auth, sessionId, beforeId, take)
  const actorOf = await actorsOf(
    db,
    auth.accountId,
    rows.map((row) => row.key_id),
  )
  return rows.map((row) => toRevision(row, actorOf(row.key_id)))
}
