import { parseInstant } from '../lib/time.js'
import { errors } from './errors.js'

/** An ISO-8601 instant of a request field, or 422 `invalid_timestamp` naming the field. */
export function instantOf(text: string, param: string): number {
  const value = parseInstant(text)
  if (value === undefined) {
    throw errors.invalidTimestamp(param)
  }
  return value
}
