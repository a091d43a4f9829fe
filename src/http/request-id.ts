import { randomHex } from '../lib/ids.js'

/** `req_` + 96 random bits: the id every answer carries in `X-Request-Id` and `error.request_id`. */
export function newRequestId(): string {
  return `req_${randomHex(12)}`
}
