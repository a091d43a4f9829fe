import { errors } from '../../core/errors.js'
import { type AuthContext, seesLocation } from '../../core/identity.js'
import { toFlag } from '../../db/schema.js'
import { ownedBy } from '../../db/scope.js'
import type { Executor, Trx } from '../../db/types.js'
import { changedFields } from '../../lib/changes.js'
import { clock } from '../../lib/clock.js'
import { recordEvent } from '../events/outbox.js'
import { placedAt } from '../locations/service.js'
import { resolvePayRule } from '../pay-rules/service.js'
import { resolveReference } from '../shared/references.js'
import {
  createResource,
  listService,
  type ResourceStore,
  retrieveResource,
  updateResource,
} from '../shared/resources.js'
import { hashPin, pinMatches } from './pins.js'
import {
  countPinFailure,
  findOperator,
  findOperatorsBy,
  findOperatorWithPayRule,
  insertOperator,
  listOperatorRows,
  lockOperatorRows,
  type OperatorRow,
  resetPinFailures,
  toOperator,
  updateOperatorRow,
} from './repository.js'
import type { CreateOperatorBody, Operator, UpdateOperatorBody } from './schemas.js'

/**
 * The operators a batch of scans names by id or ident, locked as `lockOperatorsById` locks them (in
 * id order, read under the lock), in one statement.
 */
export { lockOperatorsNamed } from './repository.js'
export type { OperatorRow }

const operators: ResourceStore<OperatorRow, Operator> = {
  name: 'operator',
  prefix: 'op',
  find: findOperator,
  insert: insertOperator,
  write: updateOperatorRow,
  toApi: toOperator,
  duplicate: (row) => errors.duplicateIdent(row.ident),
}

/** `pin` of a body as stored: its hash; null and absent kept. */
async function pinHashOf(pin: string | null | undefined) {
  if (pin === undefined || pin === null) return pin
  return hashPin(pin)
}

/** `pay_rule_id` of a body resolved to the caller's rule (locked: see `resolvePayRule`); null and absent kept. */
async function payRuleIdOf(trx: Trx, auth: AuthContext, id: string | null | undefined) {
  if (id === undefined || id === null) return id
  return (await resolvePayRule(trx, auth, id)).id
}

/** Employment dates: the last day not before the first (422 `invalid_date_range`, naming `param`). */
function checkEmploymentDates(
  dates: Pick<OperatorRow, 'start_date' | 'end_date'>,
  param: 'start_date' | 'end_date',
): void {
  if (dates.start_date !== null && dates.end_date !== null && dates.end_date < dates.start_date) {
    throw errors.invalidDateRange(
      param,
      `end_date (${dates.end_date}) must not be before start_date (${dates.start_date}).`,
    )
  }
}

export async function createOperator(
  trx: Trx,
  auth: AuthContext,
  input: CreateOperatorBody,
): Promise<Operator> {
  const dates = { start_date: input.start_date ?? null, end_date: input.end_date ?? null }
  checkEmploymentDates(dates, 'end_date')
  const fields = {
    ident: input.ident,
    name: input.name ?? null,
    employee_id: input.employee_id ?? null,
    is_active: 1 as const,
    pay_rule_id: (await payRuleIdOf(trx, auth, input.pay_rule_id)) ?? null,
    pin_hash: (await pinHashOf(input.pin)) ?? null,
    pin_failures: 0,
    pin_locked_until: null,
    home_location_id: (await placedAt(trx, auth, 'home_location_id', input.home_location_id, true)) ?? null,
    ...dates,
  }
  return createResource(trx, auth, operators, fields, 'operator.created')
}

export function retrieveOperator(db: Executor, auth: AuthContext, id: string): Promise<Operator> {
  return retrieveResource(db, auth, operators, id)
}

export const listOperators = listService(listOperatorRows, toOperator)

/**
 * Applies a PATCH; a deactivation is an event of its own. A principal held to sites reads every
 * operator but changes only those homed at its locations: 403 `location_restricted` otherwise.
 */
export function updateOperator(
  trx: Trx,
  auth: AuthContext,
  id: string,
  input: UpdateOperatorBody,
): Promise<Operator> {
  return updateResource(trx, auth, operators, id, {
    changes: async (current) => {
      if (!seesLocation(auth, current.home_location_id)) throw errors.operatorHomedElsewhere(id)
      return changedFields(current, {
        name: input.name,
        employee_id: input.employee_id,
        is_active: input.is_active === undefined ? undefined : toFlag(input.is_active),
        pay_rule_id: await payRuleIdOf(trx, auth, input.pay_rule_id),
        pin_hash: await pinHashOf(input.pin),
        // A PIN set or cleared by a manager ends a lockout and its count.
        ...(input.pin === undefined ? {} : { pin_failures: 0, pin_locked_until: null }),
        home_location_id: await placedAt(trx, auth, 'home_location_id', input.home_location_id, false),
        start_date: input.start_date,
        end_date: input.end_date,
      })
    },
    check: (updated) =>
      checkEmploymentDates(updated, input.end_date === undefined ? 'start_date' : 'end_date'),
    afterWrite: async ({ changes, after, previous }) => {
      const { is_active: activeChange, ...attributeChanges } = changes
      // A rename, relink or reactivation is an update. A PATCH that does both emits both, so a
      // listener of either never misses its change.
      if (activeChange === 1 || Object.keys(attributeChanges).length > 0) {
        await recordEvent(trx, auth, 'operator.updated', after, { previousAttributes: previous })
      }
      if (activeChange === 0) {
        await recordEvent(trx, auth, 'operator.deactivated', after, { previousAttributes: previous })
      }
    },
  })
}

/** DELETE: a soft delete. Past sessions stay; deleting an inactive operator changes nothing. */
export async function deactivateOperator(trx: Trx, auth: AuthContext, id: string): Promise<Operator> {
  return updateOperator(trx, auth, id, { is_active: false })
}

/**
 * An operator of the caller's whose own rule is `payRuleId`, if any (active or not: a reactivated
 * operator keeps its rule). What deleting a rule asks; the pay-rules route hands it in.
 */
export function operatorUsingPayRule(
  db: Executor,
  auth: AuthContext,
  payRuleId: string,
): Promise<string | undefined> {
  return findOperatorWithPayRule(db, auth, payRuleId)
}

/**
 * The caller's operator that a list filter names by `operator_id` and/or `operator_ident`; undefined
 * when they name none, or two different ones (a filter that matches nothing, not an error).
 */
export async function findNamedOperator(
  db: Executor,
  auth: AuthContext,
  filter: { operator_id?: string; operator_ident?: string },
): Promise<OperatorRow | undefined> {
  const { operator_id: id, operator_ident: ident } = filter
  const [operator] = await findOperatorsBy(
    db,
    ownedBy(auth),
    id !== undefined ? 'id' : 'ident',
    id ?? ident ?? '',
  )
  if (ident !== undefined && operator?.ident !== ident) return undefined
  return operator
}

/**
 * Resolves `operator_id` / `operator_ident` of a session or scan request: one of them is required,
 * and both given must name the same operator. With `lock`, the operator is read locked, as the
 * per-operator serialisation of session changes wants it (`lockOperators` in sessions/lifecycle.ts):
 * one read rather than a look-up and a locking read.
 */
export function resolveOperator(
  db: Executor,
  auth: AuthContext,
  reference: { operator_id?: string; operator_ident?: string },
  options: { lock?: boolean } = {},
): Promise<OperatorRow> {
  const { operator_id: id, operator_ident: ident } = reference
  if (id === undefined && ident === undefined) {
    throw errors.missingParam('operator_ident', 'Provide operator_ident or operator_id.')
  }
  const byId = id !== undefined
  const value = id ?? ident ?? ''
  return resolveReference(auth, {
    resource: 'operator',
    param: byId ? 'operator_id' : 'operator_ident',
    value,
    lookup: (owner) => findOperatorsBy(db, owner, byId ? 'id' : 'ident', value, options.lock),
    unknown: errors.unknownOperator,
    check: (row) => {
      if (ident !== undefined && row.ident !== ident) {
        throw errors.conflictingParams(
          'operator_ident',
          `operator_ident '${ident}' does not name operator ${row.id} (ident '${row.ident}'); send one of them.`,
        )
      }
    },
  })
}

/**
 * The caller's operators with these ids, locked until the transaction ends (FOR UPDATE on
 * PostgreSQL, in id order) and read under the lock. The rules of that lock are the sessions'
 * (`lockOperators` in sessions/lifecycle.ts); this module only owns the rows.
 */
export function lockOperatorsById(
  trx: Trx,
  auth: AuthContext,
  ids: readonly string[],
): Promise<OperatorRow[]> {
  return lockOperatorRows(trx, auth, ids)
}

/** Wrong PINs in a row that lock an operator's PIN scans, and for how long. */
export const PIN_FAILURE_LIMIT = 5
export const PIN_LOCKOUT_MS = 15 * 60 * 1000

/**
 * 429 `pin_locked`, with the time left, while the operator is locked by wrong PINs: decisions.md has
 * every scan of that operator answer so for the lock's 15 minutes, at a device that asks for PINs or
 * not (whoever tried the PINs holds the badge, and the badge alone scans where no PIN is asked).
 */
export function refusePinLocked(operator: OperatorRow, now = clock.now()): void {
  if (operator.pin_locked_until !== null && operator.pin_locked_until > now) {
    throw errors.pinLocked(Math.ceil((operator.pin_locked_until - now) / 1000))
  }
}

/**
 * Checks an operator's PIN at a device that requires one, outside any transaction: the hash takes
 * tens of milliseconds, which no write lock should wait for, and a wrong PIN must be counted even
 * though the scan it came with is refused and rolled back. Locked: 429 `pin_locked` with the time
 * left; wrong (or no PIN set): counted, then 422 `invalid_pin`; right: the count starts again.
 */
export async function checkOperatorPin(
  db: Executor,
  operator: OperatorRow,
  pin: string,
  param: 'pin' | 'pin_ciphertext',
): Promise<void> {
  const now = clock.now()
  refusePinLocked(operator, now)
  const right = operator.pin_hash !== null && (await pinMatches(pin, operator.pin_hash))
  if (!right) {
    await countPinFailure(db, operator.id, PIN_FAILURE_LIMIT, now + PIN_LOCKOUT_MS)
    throw errors.invalidPin(param)
  }
  if (operator.pin_failures > 0) await resetPinFailures(db, operator.id)
}
