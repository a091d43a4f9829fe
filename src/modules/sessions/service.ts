import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { instantOf } from '../../core/instants.js'
import type { Executor, Trx } from '../../db/connection.js'
import { isUniqueViolation } from '../../db/connection.js'
import { changedFields, previousAttributes } from '../../lib/changes.js'
import { newId } from '../../lib/ids.js'
import { resolveDevice } from '../devices/service.js'
import { recordEvent } from '../events/outbox.js'
import { resolveLocation } from '../locations/service.js'
import { resolveOperator } from '../operators/resolve.js'
import {
  findSession,
  insertRevision,
  insertSession,
  listSessionRows,
  type SessionRow,
  toSession,
  updateSessionRow,
} from './repository.js'
import { AWAITING_REVIEW, assertWorkDatesOpen, workDateAfterEdit, workDateOf } from './review.js'
import type { CreateSessionBody, ListSessionsQuery, Session, UpdateSessionBody } from './schemas.js'

/** The rules every stored session obeys, checked on the merged state of a create or an edit. */
export function checkTimes(row: Pick<SessionRow, 'check_in_at' | 'check_out_at' | 'break_minutes'>): void {
  if (row.check_out_at === null) return
  if (row.check_out_at <= row.check_in_at) {
    throw errors.invalidTimeRange('check_out.time', 'check_out.time must be later than check_in.time.')
  }
  if (row.break_minutes * 60_000 > row.check_out_at - row.check_in_at) {
    throw errors.breakExceedsDuration()
  }
}

/**
 * The location of a session: the one named in the request, else (on create) the device's own.
 * `null` in a PATCH removes it.
 */
async function locationFor(
  trx: Trx,
  auth: AuthContext,
  input: { location_id?: string | null; location_name?: string },
): Promise<string | null | undefined> {
  if (input.location_id === null) return null
  if (input.location_id === undefined && input.location_name === undefined) return undefined
  const location = await resolveLocation(trx, auth, {
    id: input.location_id,
    name: input.location_name,
  })
  return location.id
}

export async function createSession(trx: Trx, auth: AuthContext, input: CreateSessionBody): Promise<Session> {
  const operator = await resolveOperator(trx, auth, input)
  const device = await resolveDevice(trx, auth, input.device_id)
  const locationId = (await locationFor(trx, auth, input)) ?? device.location_id
  const now = Date.now()
  const checkInAt = instantOf(input.check_in.time, 'check_in.time')
  const row: SessionRow = {
    id: newId('ses'),
    account_id: auth.accountId,
    livemode: auth.livemode ? 1 : 0,
    operator_id: operator.id,
    operator_ident: operator.ident,
    device_code: device.code,
    location_id: locationId,
    check_in_at: checkInAt,
    check_out_at: instantOf(input.check_out.time, 'check_out.time'),
    break_minutes: input.break_minutes ?? 0,
    notes: input.notes ?? null,
    is_flagged: 1,
    flag_reason: 'manual_api_entry',
    source: 'api',
    status: 'completed',
    deleted_at: null,
    created_at: now,
    updated_at: now,
    work_date: await workDateOf(trx, auth, checkInAt, locationId),
    ...AWAITING_REVIEW,
  }
  checkTimes(row)
  await assertWorkDatesOpen(trx, auth, null, row.work_date)
  await insertSession(trx, row)
  const session = toSession(row)
  await insertRevision(trx, auth, row.id, 'created', null, session)
  await recordEvent(trx, auth, 'session.completed', session)
  await recordEvent(trx, auth, 'session.flagged', session)
  return session
}

/**
 * An edit through the API: the request is merged into the stored session, the merged state is
 * checked and `total_hours` recomputed from it, and the session is flagged `manual_api_edit`. An
 * edit that sets `check_out` on a session without one completes it.
 */
export async function updateSession(
  trx: Trx,
  auth: AuthContext,
  id: string,
  input: UpdateSessionBody,
): Promise<Session> {
  const current = await findSession(trx, auth, id, true)
  if (!current) throw errors.notFound('session', id)
  const operator =
    input.operator_id !== undefined || input.operator_ident !== undefined
      ? await resolveOperator(trx, auth, input)
      : undefined
  const device = input.device_id === undefined ? undefined : await resolveDevice(trx, auth, input.device_id)
  const checkOutAt =
    input.check_out === undefined ? undefined : instantOf(input.check_out.time, 'check_out.time')

  const changes = changedFields(current, {
    operator_id: operator?.id,
    operator_ident: operator?.ident,
    device_code: device?.code,
    location_id: await locationFor(trx, auth, input),
    check_in_at: input.check_in === undefined ? undefined : instantOf(input.check_in.time, 'check_in.time'),
    check_out_at: checkOutAt,
    break_minutes: input.break_minutes,
    notes: input.notes,
    status: checkOutAt === undefined ? undefined : 'completed',
    is_flagged: 1,
    flag_reason: 'manual_api_edit',
    ...AWAITING_REVIEW,
  })
  const workDate = await workDateAfterEdit(trx, auth, current, changes)
  if (workDate !== current.work_date) changes.work_date = workDate
  const updated: SessionRow = { ...current, ...changes, updated_at: Date.now() }
  checkTimes(updated)
  if (Object.keys(changes).length === 0) return toSession(current)
  await assertWorkDatesOpen(trx, auth, current.work_date, updated.work_date)

  try {
    await updateSessionRow(trx, id, { ...changes, updated_at: updated.updated_at })
  } catch (error) {
    if (isUniqueViolation(error)) throw errors.openSessionExists(updated.operator_ident)
    throw error
  }
  const before = toSession(current)
  const session = toSession(updated)
  const previous = previousAttributes(before, changedApiFields(before, session))
  await insertRevision(trx, auth, id, 'updated', before, session)
  await recordEvent(trx, auth, 'session.updated', session, previous)
  // A session gets its check-out by this edit (an open one, or one closed for an over-long shift):
  // only now is it complete with hours, so this is when `session.completed` is due.
  if (current.check_out_at === null && updated.check_out_at !== null) {
    await recordEvent(trx, auth, 'session.completed', session)
  }
  await recordEvent(trx, auth, 'session.flagged', session, previous)
  return session
}

/** Soft delete: gone from the API, its revisions kept, `session.deleted` emitted. */
export async function deleteSession(trx: Trx, auth: AuthContext, id: string) {
  const current = await findSession(trx, auth, id, true)
  if (!current) throw errors.notFound('session', id)
  await assertWorkDatesOpen(trx, auth, current.work_date, null)
  const now = Date.now()
  await updateSessionRow(trx, id, { deleted_at: now, updated_at: now })
  const session = toSession(current)
  await insertRevision(trx, auth, id, 'deleted', session, null)
  await recordEvent(trx, auth, 'session.deleted', session)
  return { object: 'session' as const, id, deleted: true as const }
}

export function listSessions(
  db: Executor,
  auth: AuthContext,
  query: ListSessionsQuery,
  beforeId: string | undefined,
  take: number,
) {
  return listSessionRows(
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
}

/** API fields whose value differs between two versions of a session (for `previous_attributes`). */
function changedApiFields(before: Session, after: Session): string[] {
  return (Object.keys(after) as Array<keyof Session>).filter(
    (key) => key !== 'updated' && JSON.stringify(before[key]) !== JSON.stringify(after[key]),
  )
}
