import { randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import { type ApiResponse, errorOf } from './app.js'

/** A list answer of the API. */
export interface List<T> {
  object: 'list'
  data: T[]
  has_more: boolean
  next_cursor: string | null
}

/** An event as stored in the `events` table and served by the API. */
export interface EventEnvelope {
  object: 'event'
  id: string
  type: string
  api_version: string
  livemode: boolean
  created: string
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> }
}

/** An ISO 8601 UTC timestamp with milliseconds, as the API writes them. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** A name no other test uses: `prefix-` and ten hex digits. */
export const uniq = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Asserts an error answer: the status, `error.type`, a non-empty `error.message`, `error.code` and
 * `error.param` when given, and `error.request_id` (prefix `req_`) equal to the `X-Request-Id`
 * header. Returns the error envelope for further checks.
 */
export function expectError(res: ApiResponse, status: number, type: string, code?: string, param?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  const error = errorOf(res)
  expect(error.type).toBe(type)
  expect(typeof error.message).toBe('string')
  expect(error.message.length).toBeGreaterThan(0)
  if (code !== undefined) expect(error.code).toBe(code)
  if (param !== undefined) expect(error.param).toBe(param)
  expect(error.request_id).toMatch(/^req_/)
  expect(error.request_id).toBe(res.headers['x-request-id'])
  return error
}

/** The API's objects, as the tests read them. */
export interface Device {
  object: 'device'
  id: string
  code: string
  name: string | null
  location_id: string | null
  livemode: boolean
  created: string
  updated: string
}

export interface Location {
  object: 'location'
  id: string
  name: string
  timezone: string
  address: string | null
  livemode: boolean
  created: string
  updated: string
}

export interface Operator {
  object: 'operator'
  id: string
  ident: string
  name: string | null
  employee_id: string | null
  is_active: boolean
  livemode: boolean
  created: string
  updated: string
}

export interface Session {
  object: 'session'
  id: string
  operator_id: string
  operator_ident: string
  device_id: string
  location_id: string | null
  check_in: { time: string }
  check_out: { time: string } | null
  break_minutes: number
  notes: string | null
  total_hours: number | null
  is_flagged: boolean
  flag_reason: string | null
  source: 'api' | 'scan'
  status: 'open' | 'completed'
  livemode: boolean
  created: string
  updated: string
}

export interface SessionRevision {
  object: 'session_revision'
  id: string
  session_id: string
  action: string
  key_id: string
  livemode: boolean
  created: string
  before: Session | null
  after: Session | null
}

export interface WebhookEndpoint {
  object: 'webhook_endpoint'
  id: string
  url: string
  enabled_events: string[]
  description: string | null
  status: 'enabled' | 'disabled'
  disabled_reason: string | null
  livemode: boolean
  created: string
  updated: string
  /** In the create answer only. */
  secret?: string
}

export interface WebhookAttempt {
  attempted_at: string
  kind: 'scheduled' | 'resend'
  status_code: number | null
  duration_ms: number
  error: string | null
  response_excerpt: string | null
}

export interface WebhookDelivery {
  object: 'webhook_delivery'
  id: string
  endpoint_id: string
  event_id: string
  event_type: string
  status: 'pending' | 'succeeded' | 'failed'
  attempts: WebhookAttempt[]
  next_attempt_at: string | null
  livemode: boolean
  created: string
  updated: string
}
