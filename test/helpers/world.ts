import { expect } from 'vitest'
import type { Scope } from '../../src/modules/keys/scopes.js'
import type { ApiClient, ApiResponse, TestApp } from './app.js'
import {
  type Device,
  type Location,
  type Operator,
  type PayPeriod,
  type Scan,
  type Session,
  uniq,
} from './assertions.js'

export async function created<T>(res: Promise<ApiResponse<T>>): Promise<T> {
  const answer = await res
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return answer.body
}

export async function ok<T>(res: Promise<ApiResponse<T>>): Promise<T> {
  const answer = await res
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}

/**
 * An account of its own (all scopes unless `scopes` is given) with a location `HQ` in `timezone`
 * (default UTC), a device `GATE` standing there and helpers to add operators and sessions.
 */
export async function world(
  t: TestApp,
  options: { timezone?: string; scopes?: Scope[]; mode?: 'test' | 'live'; account?: string } = {},
) {
  const account = options.account ?? uniq('acct')
  const key = await t.key({ account, mode: options.mode ?? 'test', scopes: options.scopes })
  const admin = await t.key({ account, mode: options.mode ?? 'test' })
  const api: ApiClient = t.client(key.secret)
  const root: ApiClient = t.client(admin.secret)
  const location = await created(
    root.post<Location>('/v1/locations', { name: 'HQ', timezone: options.timezone ?? 'UTC' }),
  )
  const device = await created(root.post<Device>('/v1/devices', { code: 'GATE', location_id: location.id }))
  let operators = 0
  return {
    account,
    key,
    admin,
    accountId: key.account_id,
    api,
    root,
    location,
    device,
    async operator(fields: { ident?: string; name?: string; employee_id?: string } = {}) {
      operators++
      return created(root.post<Operator>('/v1/operators', { ident: `W-${operators}`, ...fields }))
    },
    /** A session through the API (pending review), `in`/`out` instants. */
    async session(
      operator: Operator,
      checkIn: string,
      checkOut: string,
      extra: Record<string, unknown> = {},
    ) {
      return created(
        root.post<Session>('/v1/sessions', {
          operator_id: operator.id,
          device_id: 'GATE',
          check_in: { time: checkIn },
          check_out: { time: checkOut },
          ...extra,
        }),
      )
    },
    async scan(operator: Operator, time: string, direction: 'in' | 'out' | 'auto' = 'auto') {
      return created(
        root.post<Scan>('/v1/scans', {
          device_id: 'GATE',
          operator_id: operator.id,
          time,
          direction,
        }),
      )
    },
    approve(id: string, body?: Record<string, unknown>) {
      return root.post<Session>(`/v1/sessions/${id}/approve`, body)
    },
    reject(id: string, note: string) {
      return root.post<Session>(`/v1/sessions/${id}/reject`, { note })
    },
    period(start_date: string, end_date: string) {
      return root.post<PayPeriod>('/v1/pay-periods', { start_date, end_date })
    },
    close(id: string) {
      return root.post<PayPeriod>(`/v1/pay-periods/${id}/close`)
    },
    reopen(id: string) {
      return root.post<PayPeriod>(`/v1/pay-periods/${id}/reopen`)
    },
  }
}

export type World = Awaited<ReturnType<typeof world>>
