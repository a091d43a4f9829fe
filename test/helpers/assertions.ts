import { randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import type { components, ListEnvelope } from '../../packages/client/src/types.js'
import type { ApiResponse } from './app.js'

type Schemas = components['schemas']

/** A list answer of the API. */
export type List<T> = ListEnvelope<T>

/** An event as stored in the `events` table and served by the API. */
export type EventEnvelope = Schemas['Event']

/** An ISO 8601 UTC timestamp with milliseconds, as the API writes them. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** A name no other test uses: `prefix-` and ten hex digits. */
export const uniq = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Reads `read()` until `done` holds for its value, and returns that value: how a test waits for the
 * event it needs instead of sleeping a fixed time. The bound is a guard against a hang, generous on
 * purpose (a slow machine only waits longer), never a claim about speed; past it the test fails with
 * the last value read.
 */
export async function waitUntil<T, Done extends T>(
  read: () => T | Promise<T>,
  done: (value: T) => value is Done,
  options?: { timeoutMs?: number; everyMs?: number },
): Promise<Done>
export async function waitUntil<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  options?: { timeoutMs?: number; everyMs?: number },
): Promise<T>
export async function waitUntil<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs = 20_000, everyMs = 20 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (performance.now() > deadline) {
      throw new Error(`waited ${timeoutMs} ms; the last value read was ${JSON.stringify(value)}`)
    }
    await sleep(everyMs)
  }
}

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

/**
 * The API's objects, as the tests read them: the types generated from the OpenAPI document
 * (`packages/client`), so that a test cannot read a field the API does not have.
 */
export type Device = Schemas['Device']
export type Location = Schemas['Location']
export type Operator = Schemas['Operator']
export type PayPeriod = Schemas['PayPeriod']
export type PayRule = Schemas['PayRule']
export type Scan = Schemas['Scan']
export type Session = Schemas['Session']
export type SessionRevision = Schemas['SessionRevision']
export type TimesheetEntry = Schemas['TimesheetEntry']
export type WebhookEndpoint = Schemas['WebhookEndpoint']
/** The create answer: the endpoint with its `secret`, shown only there. */
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret']
export type WebhookAttempt = Schemas['WebhookAttempt']
export type WebhookDelivery = Schemas['WebhookDelivery']
/** What `POST /v1/webhook-endpoints/{id}/recover` did. */
export type WebhookRecovery = Schemas['WebhookRecovery']

/** Asserts nothing itself; returns the error envelope of a response for `expect` calls. */
export function errorOf(response: ApiResponse): {
  type: string
  message: string
  request_id: string
  code?: string
  param?: string
} {
  return (response.body as { error: ReturnType<typeof errorOf> }).error
}
