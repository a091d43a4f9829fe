import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import type { Executor } from '../../db/connection.js'
import { otherModeOf, ownedBy } from '../../db/scope.js'
import type { OperatorRow } from './repository.js'

/**
 * Resolves `operator_id` / `operator_ident` of a session or scan request: both given must name the
 * same operator, one of them is required; unresolved is 422 `unknown_operator`, or
 * `cross_mode_reference` when it exists only in the other mode of this account.
 */
export async function resolveOperator(
  db: Executor,
  auth: AuthContext,
  ref: { operator_id?: string; operator_ident?: string },
): Promise<OperatorRow> {
  const { operator_id: id, operator_ident: ident } = ref
  if (id === undefined && ident === undefined) {
    throw errors.missingParam('operator_ident', 'Provide operator_ident or operator_id.')
  }
  const param = id !== undefined ? 'operator_id' : 'operator_ident'
  const value = id ?? ident ?? ''
  const row = await db
    .selectFrom('operators')
    .selectAll()
    .where((eb) => eb.and(ownedBy(auth)))
    .$if(id !== undefined, (q) => q.where('id', '=', id ?? ''))
    .$if(id === undefined, (q) => q.where('ident', '=', ident ?? ''))
    .executeTakeFirst()
  if (row) {
    if (ident !== undefined && row.ident !== ident) {
      throw errors.conflictingParams(
        'operator_ident',
        `operator_ident '${ident}' does not name operator ${row.id} (ident '${row.ident}'); send one of them.`,
      )
    }
    return row
  }
  const elsewhere = await db
    .selectFrom('operators')
    .select('id')
    .where((eb) => eb.and(otherModeOf(auth)))
    .$if(id !== undefined, (q) => q.where('id', '=', id ?? ''))
    .$if(id === undefined, (q) => q.where('ident', '=', ident ?? ''))
    .executeTakeFirst()
  if (elsewhere) throw errors.crossModeReference(param, 'operator', value)
  throw errors.unknownOperator(param, value)
}
