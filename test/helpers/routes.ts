import diagnostics from 'node:diagnostics_channel'
import type { FastifyInstance, HTTPMethods } from 'fastify'
import type { SiteRule } from '../../src/http/auth.js'
import type { Scope } from '../../src/modules/keys/scopes.js'

/** One route as the app registered it. */
export interface RegisteredRoute {
  method: HTTPMethods
  /** Fastify's form, with its prefix: `/v1/operators/:id`. */
  url: string
  /** `config.scope`: what a key needs for it (every one of them, when a list). */
  scope: Scope | Scope[] | undefined
  /** `config.public`: served without a key. */
  public: boolean
  /** `config.deviceKey`: whether a device key may call it (`also`, `only`) or not (undefined). */
  deviceKey: 'also' | 'only' | undefined
  /** `config.sites`: what a principal held to some locations may do there. */
  sites: SiteRule | undefined
  /** `config.signedIn`: a route of the signed-in person (a session cookie), not of an account. */
  signedIn: boolean
}

const routesByApp = new WeakMap<FastifyInstance, RegisteredRoute[]>()

// Fastify publishes every instance on this channel as it is created, before anything is registered
// on it: an onRoute hook added here sees each route of every app built in this process, so the tests
// read the app's own route table without a seam in buildApp.
diagnostics.subscribe('fastify.initialization', (message) => {
  const { fastify } = message as { fastify: FastifyInstance }
  const routes: RegisteredRoute[] = []
  routesByApp.set(fastify, routes)
  fastify.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as {
      scope?: Scope | Scope[]
      public?: boolean
      deviceKey?: 'also' | 'only'
      sites?: SiteRule
      signedIn?: boolean
    }
    for (const method of [route.method].flat()) {
      routes.push({
        method,
        url: route.url,
        scope: config.scope,
        public: config.public === true,
        deviceKey: config.deviceKey,
        sites: config.sites,
        signedIn: config.signedIn === true,
      })
    }
  })
})

/** Every route `app` registered, HEAD routes included, in registration order. */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  const routes = routesByApp.get(app)
  if (!routes) throw new Error('The app was created before test/helpers/routes.ts was imported')
  return routes
}
