import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Static, TObject, TSchema } from 'typebox'
import type { AuthContext } from '../core/identity.js'
import { IdParams, listEnvelope, ref } from '../core/schemas.js'
import type { Db, Executor, Trx } from '../db/types.js'
import type { ScopeResource } from '../modules/keys/scopes.js'
import { requireAuth, type SiteRule } from './auth.js'
import { errorResponses } from './schemas.js'

/**
 * The standard routes of a resource, declared once: create (idempotent), retrieve, update, delete
 * and list, each present when the resource has the service function for it. The HTTP shape (status
 * codes, scopes, error responses, transactions, pagination) is the same for all of them; the
 * services own the rules, the reads included (a 404 comes from the service).
 */
export interface ResourceDefinition<
  Api extends { id: string },
  Create extends TObject,
  Update extends TObject,
  Query extends TObject,
> {
  /** e.g. `/v1/locations` */
  path: string
  /** e.g. `location`: used in summaries and the pagination scope */
  name: string
  tag: string
  scope: ScopeResource
  /**
   * Where its objects live, for a principal held to sites (`config.sites`): one rule for every
   * route, or one for its reads and one for its writes (locations: read at one's sites, made only
   * by an unrestricted principal).
   */
  sites: SiteRule | { read: SiteRule; write: SiteRule }
  /** The resource's named schema (with `$id`); routes refer to it, never copy it. */
  schema: TSchema
  create?: {
    body: Create
    /** When creating it means more than "create" (a scan checks an operator in or out). */
    summary?: string
    /** The answer when it differs from `schema` (a webhook endpoint shows its secret once). */
    response?: TSchema
    run: (trx: Trx, auth: AuthContext, body: Static<Create>) => Promise<unknown>
    /**
     * Checks run before the create's transaction, whose effects outlast a refusal (a scan's PIN:
     * a wrong one is counted although the scan is refused) or that must not hold a write lock.
     */
    before?: (db: Db, auth: AuthContext, body: Static<Create>) => Promise<void>
    /** A device key may create too (a scan at its own device): see `config.deviceKey`. */
    deviceKey?: 'also'
  }
  retrieve: (db: Executor, auth: AuthContext, id: string) => Promise<Api>
  update?: {
    body: Update
    run: (trx: Trx, auth: AuthContext, id: string, body: Static<Update>) => Promise<Api>
  }
  remove?: {
    summary: string
    /** A named schema (with `$id`): the deleted object, or the resource itself for a soft delete. */
    response: TSchema
    run: (trx: Trx, auth: AuthContext, id: string) => Promise<unknown>
    /** Error statuses of the delete's own rules (a session in a closed pay period: 409). */
    errorStatuses?: number[]
  }
  /** Absent when the resource pages its list by another key than the id (sessions by work date). */
  list?: {
    query: Query
    run: (
      db: Executor,
      auth: AuthContext,
      query: Static<Query>,
      beforeId: string | undefined,
      take: number,
    ) => Promise<Api[]>
  }
}

export function registerResourceRoutes<
  Api extends { id: string },
  Create extends TObject,
  Update extends TObject,
  Query extends TObject,
>(instance: FastifyInstance, def: ResourceDefinition<Api, Create, Update, Query>): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  const tags = [def.tag]
  const sites = typeof def.sites === 'string' ? { read: def.sites, write: def.sites } : def.sites
  const read = { scope: `${def.scope}:read` as const, sites: sites.read }
  const write = { scope: `${def.scope}:write` as const, sites: sites.write }
  const byId = `${def.path}/:id`
  const label = def.name.replaceAll('_', ' ')
  const article = /^[aeiou]/.test(label) ? 'an' : 'a'

  const create = def.create
  if (create) {
    app.post(
      def.path,
      {
        config: { ...write, ...(create.deviceKey ? { deviceKey: create.deviceKey } : {}) },
        schema: {
          tags,
          summary: create.summary ?? `Create ${article} ${label}`,
          'x-idempotent': true,
          body: create.body,
          response: { 201: ref(create.response ?? def.schema, `The created ${label}.`) },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request)
        const body = request.body as Static<Create>
        await create.before?.(app.db, auth, body)
        return app.creates.run(request, reply, (trx) => create.run(trx, auth, body))
      },
    )
  }

  app.get(
    byId,
    {
      config: read,
      schema: {
        tags,
        summary: `Retrieve ${article} ${label}`,
        params: IdParams,
        response: { 200: ref(def.schema, `The ${label}.`) },
      },
    },
    (request) => def.retrieve(app.db, requireAuth(request), request.params.id),
  )

  const update = def.update
  if (update) {
    app.patch(
      byId,
      {
        config: write,
        schema: {
          tags,
          summary: `Update ${article} ${label}`,
          params: IdParams,
          body: update.body,
          response: { 200: ref(def.schema, `The updated ${label}.`), ...errorResponses(409) },
        },
      },
      (request) =>
        app.db
          .transaction()
          .execute((trx) =>
            update.run(trx, requireAuth(request), request.params.id, request.body as Static<Update>),
          ),
    )
  }

  const remove = def.remove
  if (remove) {
    app.delete(
      byId,
      {
        config: write,
        schema: {
          tags,
          summary: remove.summary,
          params: IdParams,
          response: {
            200: ref(
              remove.response,
              remove.response === def.schema
                ? `The ${label}, deactivated (a soft delete).`
                : `The ${label} is gone: its id, with \`deleted: true\`.`,
            ),
            ...errorResponses(...(remove.errorStatuses ?? [])),
          },
        },
      },
      (request) =>
        app.db.transaction().execute((trx) => remove.run(trx, requireAuth(request), request.params.id)),
    )
  }

  const list = def.list
  if (!list) return
  app.get(
    def.path,
    {
      config: read,
      schema: {
        tags,
        summary: `List ${label}s, newest first`,
        querystring: list.query,
        response: { 200: listEnvelope(ref(def.schema), `A page of ${label}s, newest first.`) },
      },
    },
    (request) => {
      const auth = requireAuth(request)
      const query = request.query as Static<Query> & { limit?: number; cursor?: string }
      return app.paginator.page(
        def.name,
        auth,
        query,
        (beforeId, take) => list.run(app.db, auth, query, beforeId, take),
        (item) => item,
      )
    },
  )
}
