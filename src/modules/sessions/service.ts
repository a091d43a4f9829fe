import type { AuthContext } from '../../core/identity.js'
import { instantOf } from '../../core/instants.js'
import type { Executor } from '../../db/connection.js'
import { retrieveResource } from '../shared/resources.js'
import { sessions } from './lifecycle.js'
import { listSessionRows, toSession } from './repository.js'
import type { ListSessionsQuery, Session } from './schemas.js'

/** Reads of sessions; every change to one goes through `lifecycle.ts`. */

export function retrieveSession(db: Executor, auth: AuthContext, id: string): Promise<Session> {
  return retrieveResource(db, auth, sessions, id)
}

export async function listSessions(
  db: Executor,
  auth: AuthContext,
  query: ListSessionsQuery,
  beforeId: string | undefined,
  take: number,
): Promise<Session[]> {
  const rows = await listSessionRows(
    db,
    auth,
    {
      ...query,
      checkInFrom:
        query.check_in_from === undefined ? undefined : instantOf(query.check_in_from, 'check_in_from'),
      checkInTo: query.check_in_to === undefined ? undefined : instantOf(query.check_in_to, 'check_in_to'),
    },
    beforeId,
    take,
  )
  return rows.map(toSession)
}
