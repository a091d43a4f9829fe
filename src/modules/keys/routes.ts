import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { Account } from './schemas.js'
import { findOwnAccount } from './service.js'

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
