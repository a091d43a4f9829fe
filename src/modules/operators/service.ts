import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Trx } from '../../db/connection.js'
import { isUniqueViolation } from '../../db/connection.js'
import { changedFields, previousAttributes } from '../../lib/changes.js'
import { newId } from '../../lib/ids.js'
import { recordEvent } from '../events/outbox.js'
import {
  findOperatorForUpdate,
  insertOperator,
  type OperatorRow,
  toOperator,
  updateOperatorRow,
} from './repository.js'
import type { CreateOperatorBody, Operator, UpdateOperatorBody } from './schemas.js'

export async function createOperator(
  trx: Trx,
  auth: AuthContext,
  input: CreateOperatorBody,
): Promise<Operator> {
  const now = Date.now()
  const row: OperatorRow = {
    id: newId('op'),
    account_id: auth.accountId,
    livemode: auth.livemode ? 1 : 0,
    ident: input.ident,
    name: input.name ?? null,
    employee_id: input.employee_id ?? null,
    is_active: 1,
    created_at: now,
    updated_at: now,
  }
  try {
    // No read-before-write: the unique index decides, so two racing creates give one 201 and one 409.
    await insertOperator(trx, row)
  } catch (error) {
    if (isUniqueViolation(error)) throw errors.duplicateIdent(input.ident)
    throw error
  }
  const operator = toOperator(row)
  await recordEvent(trx, auth, 'operator.created', operator)
  return operator
}

/**
 * Applies a PATCH. Only fields that really change are written, and their old values go into the
 * events' `previous_attributes`. A PATCH that changes nothing writes nothing and emits nothing.
 */
export async function updateOperator(
  trx: Trx,
  auth: AuthContext,
  id: string,
  input: UpdateOperatorBody,
): Promise<Operator> {
  const current = await findOperatorForUpdate(trx, auth, id)
  if (!current) throw errors.notFound('operator', id)
  const before = toOperator(current)

  const changes = changedFields(current, {
    name: input.name,
    employee_id: input.employee_id,
    is_active: input.is_active === undefined ? undefined : input.is_active ? 1 : 0,
  })
  if (Object.keys(changes).length === 0) return before

  const updated: OperatorRow = { ...current, ...changes, updated_at: Date.now() }
  await updateOperatorRow(trx, id, { ...changes, updated_at: updated.updated_at })
  const operator = toOperator(updated)
  const previous = previousAttributes(before, Object.keys(changes))
  const { is_active: activeChange, ...attributeChanges } = changes
  // A deactivation is its own event; a rename, relink or reactivation is an update. A PATCH that
  // does both emits both, so a listener of either never misses its change.
  if (activeChange === 1 || Object.keys(attributeChanges).length > 0) {
    await recordEvent(trx, auth, 'operator.updated', operator, previous)
  }
  if (activeChange === 0) await recordEvent(trx, auth, 'operator.deactivated', operator, previous)
  return operator
}

/** DELETE: a soft delete. Past sessions stay; deleting an inactive operator changes nothing. */
export async function deactivateOperator(trx: Trx, auth: AuthContext, id: string): Promise<Operator> {
  return updateOperator(trx, auth, id, { is_active: false })
}
