import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { IdParams, listEnvelope, ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { Account, ApiKey, CreateApiKeyBody, CreatedApiKey, ListApiKeysQuery } from './schemas.js'
import {
  createApiKey,
  findOwnAccount,
  type KeyChanger,
  listApiKeys,
  retrieveApiKey,
  revokeApiKey,
} from './service.js'

export async function accountRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/v1/account',
    {
      // Any valid key, whatever its scopes (none needed): a key may always learn whose it is. A
      // device key too: the account's name is no more than its tablet already shows.
      config: { scope: [], deviceKey: 'also', sites: 'none' },
      schema: {
        tags: ['Account'],
        summary: "Retrieve the calling key's account",
        description:
          "The account the key belongs to (its `name`, as `keys create --account` made it) and the key's mode. Needs no scope; a device key may call it too.",
        response: { 200: ref(Account, 'The account of the key, in its mode.') },
      },
    },
    (request) => findOwnAccount(app.db, requireAuth(request)),
  )
}

const tags = ['API keys']

/**
 * The signed-in person making the change, as the audit log names them. Only a person reaches these
 * routes: they need `keys:*`, which no key holds.
 */
function changer(request: FastifyRequest): KeyChanger {
  const auth = requireAuth(request)
  return { actor: { type: 'user', id: auth.principalId, name: request.person?.name ?? null }, ip: request.ip }
}

/** `/v1/api-keys`: owners make, read and revoke the account's API keys (decisions.md, "API keys from the console"). */
export async function apiKeyRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/api-keys',
    {
      config: { scope: 'keys:write', sites: 'account-wide' },
      schema: {
        tags,
        summary: 'Create an API key',
        description:
          "A key of the account in the mode the body names, answered with its `secret` this once (the service keeps only its SHA-256). `scopes` default to every scope a key may hold; `users:*` and `keys:*` are people's only (422 `invalid_value`). `location_ids` holds the key to those locations of its mode. Scope `keys:write`: owners, signed in (no key holds it). Recorded in the audit log (`key_created`).",
        'x-idempotent': true,
        body: CreateApiKeyBody,
        response: { 201: ref(CreatedApiKey, 'The new key, with its secret (shown only here).') },
      },
    },
    (request, reply) =>
      app.creates.run(
        request,
        reply,
        (trx) => createApiKey(trx, requireAuth(request), changer(request), request.body),
        201,
        // Only the SHA-256 of a key is kept: a replay cannot show the secret again.
        (key) => ({ ...key, secret: null }),
      ),
  )

  app.get(
    '/v1/api-keys',
    {
      config: { scope: 'keys:read', sites: 'account-wide' },
      schema: {
        tags,
        summary: "List the account's API keys, newest first",
        description:
          "Both modes' keys, revoked ones included, never a secret. A paired device's key is its device's (pairing makes it, unpairing revokes it) and is not listed. Scope `keys:read`.",
        querystring: ListApiKeysQuery,
        response: { 200: listEnvelope(ref(ApiKey), 'A page of API keys, newest first.') },
      },
    },
    (request) => {
      const auth = requireAuth(request)
      return app.paginator.page(
        'api_key',
        auth,
        request.query,
        (beforeId, take) => listApiKeys(app.db, auth, beforeId, take),
        (key) => key,
      )
    },
  )

  app.get(
    '/v1/api-keys/:id',
    {
      config: { scope: 'keys:read', sites: 'account-wide' },
      schema: {
        tags,
        summary: 'Retrieve an API key',
        description: 'Never its secret. Scope `keys:read`.',
        params: IdParams,
        response: { 200: ref(ApiKey, 'The key.') },
      },
    },
    (request) => retrieveApiKey(app.db, requireAuth(request), request.params.id),
  )

  app.post(
    '/v1/api-keys/:id/revoke',
    {
      config: { scope: 'keys:write', sites: 'account-wide' },
      schema: {
        tags,
        summary: 'Revoke an API key',
        description:
          'Every process refuses the key within 5 s (401). Revoking a revoked key changes nothing. Scope `keys:write`. Recorded in the audit log (`key_revoked`).',
        params: IdParams,
        response: { 200: ref(ApiKey, 'The key, revoked.') },
      },
    },
    (request) =>
      app.db
        .transaction()
        .execute((trx) => revokeApiKey(trx, requireAuth(request), changer(request), request.params.id)),
  )
}
