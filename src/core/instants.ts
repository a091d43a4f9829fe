import { parseInstant } from '../lib/time.js'
import { errors } from './errors.js'

/** An ISO-8601 instant of a request field, or 422 `invalid_timestamp` naming the field. */
export function instantOf(text: string, param: string): number {
  const value = parseInstant(text)
  if (value === undefined) {
    throw errors.validation(
      'invalid_timestamp',
      param,
      `${param} must be an ISO-8601 timestamp with a zone designator, e.g. 2026-11-02T08:00:00Z.`,
    )
  }
  return value
}
