import type { HTTPMethods, InjectOptions } from 'fastify'
import { expect } from 'vitest'
import { ALL_SCOPES, grants } from '../../src/modules/keys/scopes.js'
import type { ApiClient, ApiResponse, TestApp } from './app.js'
import { expectError, uniq } from './assertions.js'
import { pairedDevice } from './fixtures.js'
import type { RegisteredRoute } from './routes.js'

/** A request that the owner's key may send: a real path (its objects exist) and a valid body. */
export interface SecuredRequest {
  path: string
  body?: unknown
}

/**
 * Makes, with the owner's live key, what a route's request needs, and returns the request. `device`
 * is a device of the owner's, paired: a route a device key may call names it (a scan at it).
 */
export type PrepareRequest = (owner: ApiClient, device: { code: string }) => Promise<SecuredRequest>

/** The methods `app.inject` sends (light-my-request's list is shorter than Fastify's). */
const INJECTABLE = new Set(['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'])

function send(api: ApiClient, method: HTTPMethods, request: SecuredRequest): Promise<ApiResponse> {
  if (!INJECTABLE.has(method.toUpperCase())) throw new Error(`app.inject cannot send ${method}`)
  return api.request({
    method: method as InjectOptions['method'],
    url: request.path,
    ...(request.body === undefined ? {} : { payload: request.body as object }),
  })
}

/**
 * The security cases of one route, on objects of a fresh live-mode account:
 * - no key: 401;
 * - a key of that account with every scope but those granting `config.scope`: 403;
 * - on a route that names an object (a path parameter): the account's test key (wrong mode) and
 *   another account's live key: 404, as if the object did not exist;
 * - a device key of that account: 403 unless the route lets device keys call it (`config.deviceKey`);
 *   where it does, another device's key is refused (403) and the device's own key is not;
 * - then, as the control that makes the refusals mean something, the owner's key: not refused
 *   (refused with 403 on a route only a device key may call).
 */
export async function expectRouteSecured(t: TestApp, route: RegisteredRoute, prepare: PrepareRequest) {
  const scope = route.scope
  expect(scope, `${route.method} ${route.url} declares config.scope`).toBeDefined()
  if (scope === undefined) return
  const account = uniq('sec')
  const owner = t.client((await t.key({ account, mode: 'live' })).secret)
  const paired = await pairedDevice(t, owner)
  const request = await prepare(owner, paired.device)

  expectError(await send(t.client(undefined), route.method, request), 401, 'authentication_error')

  // Every scope except those granting one the route needs: a route needing several refuses a key
  // that lacks any of them.
  const needed = [scope].flat()
  const unscoped = await t.key({
    account,
    mode: 'live',
    scopes: ALL_SCOPES.filter((other) => !needed.some((one) => grants(new Set([other]), one))),
  })
  expectError(await send(t.client(unscoped.secret), route.method, request), 403, 'insufficient_scope')

  if (route.url.includes('/:')) {
    const wrongMode = t.client((await t.key({ account, mode: 'test' })).secret)
    expectError(await send(wrongMode, route.method, request), 404, 'not_found')
    const otherAccount = t.client((await t.key({ account: uniq('other'), mode: 'live' })).secret)
    expectError(await send(otherAccount, route.method, request), 404, 'not_found')
  }

  if (route.deviceKey === undefined) {
    expectError(await send(paired.api, route.method, request), 403, 'insufficient_scope')
  } else {
    const other = await pairedDevice(t, owner)
    if (route.deviceKey === 'also') {
      // A batch answers the refusal in the scan's slot, as it answers every scan's own outcome.
      const refused = await send(other.api, route.method, request)
      const error =
        refused.status === 200
          ? (refused.body as { data: Array<{ type?: string; code?: string }> }).data[0]
          : expectError(refused, 403, 'insufficient_scope')
      expect(error).toMatchObject({ type: 'insufficient_scope', code: 'device_mismatch' })
    }
    const byDevice = await send(paired.api, route.method, request)
    expect(byDevice.status, `${route.method} ${request.path}: ${JSON.stringify(byDevice.body)}`).toBeLessThan(
      300,
    )
  }

  const allowed = await send(owner, route.method, request)
  if (route.deviceKey === 'only') {
    expectError(allowed, 403, 'insufficient_scope')
    return
  }
  expect(allowed.status, `${route.method} ${request.path}: ${JSON.stringify(allowed.body)}`).toBeLessThan(300)
}
