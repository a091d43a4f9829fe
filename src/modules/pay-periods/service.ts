import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Executor, Trx } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { addDays, daysBetween, startOfDate } from '../../lib/dates.js'
import { newId } from '../../lib/ids.js'
import { toIso } from '../../lib/time.js'
import { actorsOf } from '../actors/service.js'
import { recordEvent } from '../events/outbox.js'
import { timeZonesInUse } from '../locations/service.js'
import { assertSessionsSettled } from '../sessions/settlement.js'
import { discardClosedTimesheet, storeClosedTimesheet } from './closed-timesheet.js'
import {
  findClosedPeriodHolding,
  findOverlappingPeriod,
  findPayPeriod,
  insertPayPeriod,
  listPayPeriodRows,
  lockPayPeriods,
  type PayPeriodRow,
  toPayPeriod,
  updatePayPeriodRow,
} from './repository.js'
import {
  type CreatePayPeriodBody,
  type ListPayPeriodsQuery,
  MAX_PERIOD_DAYS,
  type PayPeriod,
  type PayPeriodTotals,
} from './schemas.js'

export async function createPayPeriod(
  trx: Trx,
  auth: AuthContext,
  input: CreatePayPeriodBody,
): Promise<PayPeriod> {
  const { start_date: start, end_date: end } = input
  const days = daysBetween(start, end) + 1
  if (days < 1) throw errors.invalidDateRange('end_date', 'end_date must not be before start_date.')
  if (days > MAX_PERIOD_DAYS) {
    throw errors.invalidDateRange(
      'end_date',
      `A pay period spans at most ${MAX_PERIOD_DAYS} days (this one ${days}).`,
    )
  }
  // Exclusive: two overlapping creates cannot both pass the check below.
  await lockPayPeriods(trx, auth, 'exclusive')
  const other = await findOverlappingPeriod(trx, auth, start, end)
  if (other) throw errors.overlappingPeriod(other.id)
  const now = clock.now()
  const row: PayPeriodRow = {
    id: newId('pp'),
    account_id: auth.accountId,
    livemode: auth.livemode ? 1 : 0,
    start_date: start,
    end_date: end,
    status: 'open',
    closed_at: null,
    totals: null,
    closed_by: null,
    created_at: now,
    updated_at: now,
  }
  await insertPayPeriod(trx, row)
  const period = toPayPeriod(row, null)
  await recordEvent(trx, auth, 'pay_period.created', period)
  return period
}

/**
 * Closes a period once it is over and no session whose work date is in it awaits review, is still
 * open, or lacks a check-out (409 `period_not_over`, then `pending_reviews` with the counts). Under
 * the exclusive pay-period lock, so a session written concurrently is either counted here or refused
 * with `period_closed` after. Closing a closed period changes nothing.
 */
export async function closePayPeriod(trx: Trx, auth: AuthContext, id: string): Promise<PayPeriod> {
  await lockPayPeriods(trx, auth, 'exclusive')
  const current = await findPayPeriod(trx, auth, id, true)
  if (!current) throw errors.notFound('pay_period', id)
  if (current.status === 'closed') return shownOne(trx, auth, current)
  await assertPeriodOver(trx, auth, current.end_date)
  await assertSessionsSettled(trx, auth, current.start_date, current.end_date)
  const totals = await storeClosedTimesheet(trx, auth, current)
  return setStatus(trx, auth, current, 'closed', totals)
}

/**
 * 409 `period_not_over` until the day after `endDate` has begun in every time zone the account's
 * locations use: a session can still be worked on `endDate` wherever that day has not ended, and a
 * period closed then would refuse it. The zone where the day ends last (the latest instant) governs.
 */
async function assertPeriodOver(trx: Trx, auth: AuthContext, endDate: string): Promise<void> {
  const nextDay = addDays(endDate, 1)
  let closable = { at: Number.NEGATIVE_INFINITY, zone: 'UTC' }
  for (const zone of await timeZonesInUse(trx, auth)) {
    const at = startOfDate(nextDay, zone)
    if (at > closable.at) closable = { at, zone }
  }
  if (clock.now() < closable.at) throw errors.periodNotOver(endDate, toIso(closable.at), closable.zone)
}

/** Opens a closed period again: its sessions can be changed and reviewed. */
export async function reopenPayPeriod(trx: Trx, auth: AuthContext, id: string): Promise<PayPeriod> {
  await lockPayPeriods(trx, auth, 'exclusive')
  const current = await findPayPeriod(trx, auth, id, true)
  if (!current) throw errors.notFound('pay_period', id)
  if (current.status === 'open') return shownOne(trx, auth, current)
  await discardClosedTimesheet(trx, current.id)
  return setStatus(trx, auth, current, 'open', null)
}

async function setStatus(
  trx: Trx,
  auth: AuthContext,
  current: PayPeriodRow,
  status: 'open' | 'closed',
  totals: PayPeriodTotals | null,
) {
  const now = clock.now()
  const changes = {
    status,
    closed_at: status === 'closed' ? now : null,
    // Who closed it (the principal: a key's id or a person's); cleared on reopening.
    closed_by: status === 'closed' ? auth.principalId : null,
    totals: totals === null ? null : JSON.stringify(totals),
    updated_at: now,
  }
  await updatePayPeriodRow(trx, current.id, changes)
  const [period, before] = await shown(trx, auth, [{ ...current, ...changes }, current])
  if (!period || !before) throw new Error('shown answers a period for each row')
  await recordEvent(trx, auth, status === 'closed' ? 'pay_period.closed' : 'pay_period.reopened', period, {
    previousAttributes: {
      status: before.status,
      closed_at: before.closed_at,
      closed_by: before.closed_by,
      totals: before.totals,
      updated: before.updated,
    },
  })
  return period
}

/**
 * The closed period holding any of `workDates` (a session's work date before and after a change),
 * if one does. Takes the pay-period lock shared first, so the answer stays true until the caller's
 * transaction ends: call it in the transaction that writes the session, before writing.
 */
export async function closedPeriodHolding(
  trx: Trx,
  auth: AuthContext,
  workDates: ReadonlyArray<string | null | undefined>,
): Promise<{ id: string; date: string } | undefined> {
  await lockPayPeriods(trx, auth, 'shared')
  const dates = [...new Set(workDates.filter((d): d is string => typeof d === 'string'))]
  const period = await findClosedPeriodHolding(trx, auth, dates)
  if (!period) return undefined
  const date = dates.find((d) => d >= period.start_date && d <= period.end_date) ?? period.start_date
  return { id: period.id, date }
}

/** 409 `period_closed` when any of `workDates` lies in a closed period (see closedPeriodHolding). */
export async function assertPeriodOpen(
  trx: Trx,
  auth: AuthContext,
  workDates: ReadonlyArray<string | null | undefined>,
): Promise<void> {
  const closed = await closedPeriodHolding(trx, auth, workDates)
  if (closed) throw errors.periodClosed(closed.id, closed.date)
}

/**
 * Pay periods as the API shows them, with who closed each (`closed_by`): the closers of all of them
 * looked up together (actors' service; nothing to look up when none is closed).
 */
async function shown(db: Executor, auth: AuthContext, rows: readonly PayPeriodRow[]): Promise<PayPeriod[]> {
  const actorOf = await actorsOf(
    db,
    auth.accountId,
    rows.flatMap((row) => (row.closed_by === null ? [] : [row.closed_by])),
  )
  return rows.map((row) => toPayPeriod(row, row.closed_by === null ? null : actorOf(row.closed_by)))
}

async function shownOne(db: Executor, auth: AuthContext, row: PayPeriodRow): Promise<PayPeriod> {
  const [period] = await shown(db, auth, [row])
  if (!period) throw new Error('shown answers a period for each row')
  return period
}

export async function retrievePayPeriod(db: Executor, auth: AuthContext, id: string): Promise<PayPeriod> {
  const row = await findPayPeriod(db, auth, id)
  if (!row) throw errors.notFound('pay_period', id)
  return shownOne(db, auth, row)
}

export async function listPayPeriods(
  db: Executor,
  auth: AuthContext,
  filters: ListPayPeriodsQuery,
  beforeId: string | undefined,
  take: number,
): Promise<PayPeriod[]> {
  return shown(db, auth, await listPayPeriodRows(db, auth, filters, beforeId, take))
}
