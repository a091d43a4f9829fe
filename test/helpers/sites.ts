import type { InjectOptions } from 'fastify'
import { expect } from 'vitest'
import { createKey } from '../../src/modules/keys/service.js'
import type { ApiClient, ApiResponse, TestApp } from './app.js'
import { type Device, errorOf, type Location, type Operator, uniq } from './assertions.js'

/**
 * An account with two locations, `here` and `there`, and what stands at each (decisions.md,
 * "Sites"): a device at each and one standing nowhere, an operator homed at each and one homed
 * nowhere; the owner's key (every location) and a key held to `here`.
 */
export interface SitesWorld {
  account: string
  accountId: string
  mode: 'test' | 'live'
  /** A key of every location. */
  owner: ApiClient
  /** A key held to `here` (every scope a key may hold). */
  restricted: ApiClient
  here: Location
  there: Location
  devices: { here: Device; there: Device; nowhere: Device }
  operators: { here: Operator; there: Operator; homeless: Operator }
}

async function created<T>(res: Promise<ApiResponse<T>>): Promise<T> {
  const answer = await res
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return answer.body
}

export async function sitesWorld(t: TestApp, mode: 'test' | 'live' = 'test'): Promise<SitesWorld> {
  const account = uniq('sites')
  const ownerKey = await t.key({ account, mode })
  const owner = t.client(ownerKey.secret)
  const location = (name: string) =>
    created(owner.post<Location>('/v1/locations', { name: uniq(name), timezone: 'UTC' }))
  const here = await location('here')
  const there = await location('there')
  const device = (location_id?: string) =>
    created(owner.post<Device>('/v1/devices', { code: uniq('gate'), location_id }))
  const operator = (home_location_id?: string) =>
    created(owner.post<Operator>('/v1/operators', { ident: uniq('op'), home_location_id }))
  const restrictedKey = await createKey(t.db, { account, mode, locationIds: [here.id] })
  return {
    account,
    accountId: ownerKey.account_id,
    mode,
    owner,
    restricted: t.client(restrictedKey.secret),
    here,
    there,
    devices: { here: await device(here.id), there: await device(there.id), nowhere: await device() },
    operators: {
      here: await operator(here.id),
      there: await operator(there.id),
      homeless: await operator(),
    },
  }
}

/** The id of the same kind (prefix) that names nothing: what a missing object is asked by. */
export const missingIdLike = (id: string) => id.replace(/_[0-9A-Z]+$/, `_${'0'.repeat(26)}`)

/**
 * Asserts that `api` is answered about the object `id` (`path(id)`) exactly as about an id that
 * names nothing: 404 `not_found`, the same code, param and message (the id aside), so nothing tells
 * the object exists. Also the control: the same request by `control` (a key that sees it) is not 404.
 */
export async function expectAnsweredAsMissing(
  api: ApiClient,
  request: { method: InjectOptions['method']; path: (id: string) => string; body?: unknown },
  id: string,
  control?: ApiClient,
): Promise<void> {
  const send = (client: ApiClient, path: string) =>
    client.request({
      method: request.method,
      url: path,
      ...(request.body === undefined ? {} : { payload: request.body as object }),
    })
  const missingId = missingIdLike(id)
  const real = await send(api, request.path(id))
  const missing = await send(api, request.path(missingId))
  expect(real.status, `${request.method} ${request.path(id)}: ${JSON.stringify(real.body)}`).toBe(404)
  const shape = (res: ApiResponse, named: string) => {
    const { request_id: _, ...error } = errorOf(res)
    return { status: res.status, ...error, message: error.message.replaceAll(named, '<id>') }
  }
  expect(shape(real, id)).toEqual(shape(missing, missingId))
  expect(shape(real, id)).toMatchObject({ type: 'not_found', code: 'resource_missing' })
  if (control) {
    const seen = await send(control, request.path(id))
    expect(seen.status, `control: ${JSON.stringify(seen.body)}`).not.toBe(404)
  }
}

/** A list's ids, every page walked (`limit` a page), and the pages' sizes. */
export async function walkList(
  api: ApiClient,
  path: string,
  limit: number,
): Promise<{ ids: string[]; pages: number[] }> {
  const ids: string[] = []
  const pages: number[] = []
  let cursor: string | null = null
  const join = path.includes('?') ? '&' : '?'
  do {
    const url: string = `${path}${join}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const res = await api.get<{ data: Array<{ id: string }>; has_more: boolean; next_cursor: string | null }>(
      url,
    )
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    ids.push(...res.body.data.map((item) => item.id))
    pages.push(res.body.data.length)
    cursor = res.body.has_more ? res.body.next_cursor : null
  } while (cursor)
  return { ids, pages }
}
