import { expect } from 'vitest'
import type { SessionRow } from '../../../src/modules/sessions/repository.js'
import type { ApiClient, TestApp } from '../../helpers/app.js'
import {
  type Device,
  type List,
  type Operator,
  type Scan,
  type Session,
  type SessionRevision,
  uniq,
} from '../../helpers/assertions.js'
import { eventsOf } from '../../helpers/fixtures.js'

export type { Scan }

export const SCAN_KEYS = [
  'client_scan_id',
  'clock_skew_ms',
  'created',
  'device_id',
  'direction',
  'flag_reason',
  'id',
  'livemode',
  'object',
  'operator_id',
  'operator_ident',
  'operator_name',
  'result',
  'session_id',
  'time',
]

/** The day every scenario happens on; `at('08:00')` is 08:00 UTC that day. */
export const DAY = '2026-03-02'
export const at = (hhmmss: string, day = DAY) =>
  `${day}T${hhmmss.length === 5 ? `${hhmmss}:00` : hhmmss}.000Z`
export const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString()
export const SECOND = 1000
export const MINUTE = 60 * SECOND
export const HOUR = 60 * MINUTE

/**
 * The helpers every scans test file shares, bound to that file's app (read when called: the app is
 * built in the file's beforeAll).
 */
export function scanHelpers(app: () => TestApp) {
  /**
   * An account of its own with two locations and two devices (each at its location) and a
   * helper to make operators; `mark()` remembers the last event so a test can read only its own.
   */
  async function world(mode: 'test' | 'live' = 'test') {
    const key = await app().key({ account: uniq('acct'), mode })
    const api = app().client(key.secret)
    const created = async <T>(path: string, body: Record<string, unknown>) => {
      const res = await api.post<T>(path, body)
      expect(res.status).toBe(201)
      return res.body
    }
    const plantA = await created<{ id: string }>('/v1/locations', { name: 'Plant A' })
    const plantB = await created<{ id: string }>('/v1/locations', { name: 'Plant B' })
    const gateA = await created<Device>('/v1/devices', { code: uniq('gate-a'), location_id: plantA.id })
    const gateB = await created<Device>('/v1/devices', { code: uniq('gate-b'), location_id: plantB.id })
    return {
      key,
      api,
      accountId: key.account_id,
      plantA,
      plantB,
      gateA,
      gateB,
      operator: (ident = uniq('op')) => created<Operator>('/v1/operators', { ident }),
    }
  }

  async function scan(api: ApiClient, body: Record<string, unknown>): Promise<Scan> {
    const res = await api.post<Scan>('/v1/scans', body)
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body
  }

  async function session(api: ApiClient, id: string): Promise<Session> {
    const res = await api.get<Session>(`/v1/sessions/${id}`)
    expect(res.status).toBe(200)
    return res.body
  }

  async function revisions(api: ApiClient, sessionId: string): Promise<SessionRevision[]> {
    const res = await api.get<List<SessionRevision>>(`/v1/sessions/${sessionId}/revisions`)
    expect(res.status).toBe(200)
    return res.body.data
  }

  async function lastEventId(accountId: string): Promise<string> {
    const all = await eventsOf(app(), accountId)
    return all[all.length - 1]?.id ?? ''
  }

  async function sessionRows(accountId: string, operatorId?: string): Promise<SessionRow[]> {
    const { db } = app()
    return db
      .selectFrom('sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .$if(operatorId !== undefined, (q) => q.where('operator_id', '=', operatorId ?? ''))
      .orderBy('check_in_at')
      .orderBy('id')
      .execute()
  }

  async function scanCount(accountId: string): Promise<number> {
    const rows = await app().db.selectFrom('scans').select('id').where('account_id', '=', accountId).execute()
    return rows.length
  }

  async function accountName(accountId: string) {
    const { db } = app()
    const row = await db.selectFrom('accounts').select('name').where('id', '=', accountId).executeTakeFirst()
    return row?.name
  }

  return { world, scan, session, revisions, lastEventId, sessionRows, scanCount, accountName }
}
