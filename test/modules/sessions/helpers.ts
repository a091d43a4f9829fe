import { expect } from 'vitest'
import type { ApiClient, ApiResponse, TestApp } from '../../helpers/app.js'
import {
  type Device,
  expectError,
  ISO_MS,
  type List,
  type Location,
  type Operator,
  type Scan,
  type Session,
  type SessionRevision,
  uniq,
} from '../../helpers/assertions.js'
import { eventsOf } from '../../helpers/fixtures.js'

export type { Scan }

export type Body = Record<string, unknown>

export const SESSION_KEYS = [
  'break_minutes',
  'breaks',
  'check_in',
  'check_out',
  'created',
  'device_id',
  'flag_reason',
  'id',
  'is_flagged',
  'livemode',
  'location_id',
  'notes',
  'object',
  'operator_id',
  'operator_ident',
  'review_note',
  'review_status',
  'reviewed_at',
  'reviewed_by',
  'source',
  'status',
  'total_hours',
  'updated',
  'work_date',
]
/** The events every `world()` starts with, in this order. */
export const SETUP_EVENTS = ['location.created', 'device.created', 'operator.created']
export const CREATED = ['session.completed', 'session.flagged']
export const EDITED = ['session.updated', 'session.flagged']

/**
 * The times of `bodyFor` moved to another day of March 2026 (day 2 is `bodyFor`'s own), for tests
 * that create several sessions of one operator: they must not overlap.
 */
export function onDay(day: number): Body {
  const date = `2026-03-${String(day).padStart(2, '0')}`
  return { check_in: { time: `${date}T08:00:00Z` }, check_out: { time: `${date}T16:00:00Z` } }
}

export function expectSessionShape(session: Session) {
  expect(Object.keys(session).sort()).toEqual(SESSION_KEYS)
  expect(session.object).toBe('session')
  expect(session.id).toMatch(/^ses_[0-9A-Z]{26}$/)
  expect(session.check_in.time).toMatch(ISO_MS)
  if (session.check_out !== null) expect(session.check_out.time).toMatch(ISO_MS)
  expect(session.created).toMatch(ISO_MS)
  expect(session.updated).toMatch(ISO_MS)
}

/**
 * The helpers every sessions test file shares, bound to that file's app (read when called: the app is
 * built in the file's beforeAll).
 */
export function sessionHelpers(app: () => TestApp) {
  async function created<T>(res: Promise<ApiResponse<T>>): Promise<T> {
    const answer = await res
    expect(answer.status).toBe(201)
    return answer.body
  }

  /**
   * An account of its own with, in one mode: a location `HQ` (Europe/Paris), a device `GATE` standing
   * there and an operator `W-1`. Its events are SETUP_EVENTS.
   */
  async function world(mode: 'test' | 'live' = 'test', name = uniq('acct')) {
    const key = await app().key({ account: name, mode })
    const api = app().client(key.secret)
    const location = await created(
      api.post<Location>('/v1/locations', { name: 'HQ', timezone: 'Europe/Paris' }),
    )
    const device = await created(api.post<Device>('/v1/devices', { code: 'GATE', location_id: location.id }))
    const operator = await created(api.post<Operator>('/v1/operators', { ident: 'W-1' }))
    return { key, name, api, location, device, operator }
  }
  type World = Awaited<ReturnType<typeof world>>

  /** A valid create body for the world: 08:00 to 16:00 UTC on 2 March 2026. */
  function bodyFor(w: World, overrides: Body = {}): Body {
    return {
      operator_ident: w.operator.ident,
      device_id: w.device.code,
      check_in: { time: '2026-03-02T08:00:00Z' },
      check_out: { time: '2026-03-02T16:00:00Z' },
      ...overrides,
    }
  }

  function without(body: Body, ...keys: string[]): Body {
    return Object.fromEntries(Object.entries(body).filter(([k]) => !keys.includes(k)))
  }

  async function createSession(w: World, overrides: Body = {}): Promise<Session> {
    const res = await w.api.post<Session>('/v1/sessions', bodyFor(w, overrides))
    expect(res.status).toBe(201)
    expectSessionShape(res.body)
    return res.body
  }

  /** The events of the world's account and mode after its set-up (which is checked too). */
  async function newEvents(w: World) {
    const events = await eventsOf(app(), w.key.account_id, w.key.mode === 'live')
    expect(events.slice(0, SETUP_EVENTS.length).map((e) => e.type)).toEqual(SETUP_EVENTS)
    return events.slice(SETUP_EVENTS.length)
  }

  async function newEventTypes(w: World) {
    return (await newEvents(w)).map((e) => e.type)
  }

  async function sessionRows(accountId: string) {
    return app().db.selectFrom('sessions').selectAll().where('account_id', '=', accountId).execute()
  }

  async function revisionRows(accountId: string) {
    return app().db.selectFrom('session_revisions').selectAll().where('account_id', '=', accountId).execute()
  }

  async function revisionsOf(api: ApiClient, id: string, query = '') {
    const res = await api.get<List<SessionRevision>>(`/v1/sessions/${id}/revisions${query}`)
    expect(res.status).toBe(200)
    return res.body
  }

  /** A refused create: the error, and no session, revision or event left behind. */
  async function expectCreateRefused(w: World, body: Body, code: string, param: string) {
    const res = await w.api.post('/v1/sessions', body)
    expectError(res, 422, 'validation_error', code, param)
    expect(await sessionRows(w.key.account_id)).toEqual([])
    expect(await revisionRows(w.key.account_id)).toEqual([])
    expect(await newEventTypes(w)).toEqual([])
  }

  /** A refused edit: the error, and the session, its revisions and the events unchanged. */
  async function expectEditRefused(w: World, session: Session, body: Body, code: string, param: string) {
    const eventsBefore = await newEventTypes(w)
    const revisionsBefore = await revisionsOf(w.api, session.id)
    const res = await w.api.patch(`/v1/sessions/${session.id}`, body)
    expectError(res, 422, 'validation_error', code, param)
    expect((await w.api.get(`/v1/sessions/${session.id}`)).body).toEqual(session)
    expect(await revisionsOf(w.api, session.id)).toEqual(revisionsBefore)
    expect(await newEventTypes(w)).toEqual(eventsBefore)
  }

  return {
    created,
    world,
    bodyFor,
    without,
    createSession,
    newEvents,
    newEventTypes,
    sessionRows,
    revisionRows,
    revisionsOf,
    expectCreateRefused,
    expectEditRefused,
  }
}

/** What `world()` makes: an account's key, client, location, device and operator. */
export type World = Awaited<ReturnType<ReturnType<typeof sessionHelpers>['world']>>
