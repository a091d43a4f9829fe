import { randomBytes } from 'node:crypto'

/** `req_` + 96 random bits: the id every answer carries in `X-Request-Id` and `error.request_id`. */
export function newRequestId(): string {
  return `req_${randomBytes(12).toString('hex')}`
}
