import type { Operator } from '../../packages/client/src/types.js'
import { type Api, ApiError } from './api.js'

/** The API filters by operator id; a manager knows the ident. Refused with words when none has it. */
export async function operatorIdOf(api: Api, ident: string): Promise<string> {
  const found = await api.list<Operator>('/v1/operators', { ident, limit: 1 })
  const id = found.data[0]?.id
  if (!id) throw new ApiError(0, 'unknown_operator', `No operator has the ident ${ident}.`)
  return id
}
