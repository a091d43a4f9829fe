// oidc-provider (the SSO test's OpenID provider) ships JavaScript without types, and
// @types/oidc-provider is not a dependency: the little of it the tests use, as they use it.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>)
    /** The provider as a Node.js request listener (it is a Koa application). */
    callback(): (request: IncomingMessage, response: ServerResponse) => void
  }
}
