import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Static, TObject, TSchema } from 'typebox'
import { errors } from '../core/errors.js'
import type { AuthContext } from '../core/identity.js'
import { IdParams, listEnvelope, ref } from '../core/schemas.js'
import type { Executor, Trx } from '../db/connection.js'
import type { ScopeResource } from '../modules/keys/scopes.js'
import { requireAuth } from './auth.js'
import { errorResponses } from './schemas.js'

/**
 * The standard routes of a resource, declared once: create (idempotent), retrieve, update, delete
 * and list. Each resource supplies its schemas and service functions; the HTTP shape (status codes,
 * scopes, error responses, transactions, pagination) is the same for all of them.
 */
export interface ResourceDefinition<
  Row extends { id: string },
  Api,
  Create extends TObject,
  Update extends TObject,
  Query extends TObject,
> {
  /** e.g. `/v1/locations` */
  path: string
  /** e.g. `location`: used in messages and the pagination scope */
  name: string
  tag: string
  scope: ScopeResource
  /** The resource's named schema (with `$id`); routes refer to it, never copy it. */
  schema: TSchema
  /** The create answer when it differs from `schema` (a webhook endpoint shows its secret once). */
  createResponse?: TSchema
  createBody: Create
  updateBody: Update
  listQuery: Query
  create: (trx: Trx, auth: AuthContext, body: Static<Create>) => Promise<Api>
  find: (db: Executor, auth: AuthContext, id: string) => Promise<Row | undefined>
  update: (trx: Trx, auth: AuthContext, id: string, body: Static<Update>) => Promise<Api>
  /** Absent for resources that cannot be deleted. */
  remove?: {
    summary: string
    /** A named schema (with `$id`): the deleted object, or the resource itself for a soft delete. */
    response: TSchema
    run: (trx: Trx, auth: AuthContext, id: string) => Promise<unknown>
    /** Error statuses of the delete's own rules (a session in a closed pay period: 409). */
    errorStatuses?: number[]
  }
  list: (
    db: Executor,
    auth: AuthContext,
    query: Static<Query>,
    beforeId: string | undefined,
    take: number,
  ) => Promise<Row[]>
  toApi: (row: Row) => Api
}

export function registerResourceRoutes<
  Row extends { id: string },
  Api,
  Create extends TObject,
  Update extends TObject,
  Query extends TObject,
>(instance: FastifyInstance, def: ResourceDefinition<Row, Api, Create, Update, Query>): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  const tags = [def.tag]
  const read = { scope: `${def.scope}:read` as const }
  const write = { scope: `${def.scope}:write` as const }
  const byId = `${def.path}/:id`
  const label = def.name.replaceAll('_', ' ')
  const article = /^[aeiou]/.test(label) ? 'an' : 'a'

  app.post(
    def.path,
    {
      config: write,
      schema: {
        tags,
        summary: `Create ${article} ${label}`,
        'x-idempotent': true,
        body: def.createBody,
        response: { 201: ref(def.createResponse ?? def.schema, `The created ${label}.`) },
      },
    },
    (request, reply) =>
      app.creates.run(request, reply, (trx) =>
        def.create(trx, requireAuth(request), request.body as Static<Create>),
      ),
  )

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
    async (request) => {
      const row = await def.find(app.db, requireAuth(request), request.params.id)
      if (!row) throw errors.notFound(def.name, request.params.id)
      return def.toApi(row)
    },
  )

  app.patch(
    byId,
    {
      config: write,
      schema: {
        tags,
        summary: `Update ${article} ${label}`,
        params: IdParams,
        body: def.updateBody,
        response: { 200: ref(def.schema, `The updated ${label}.`), ...errorResponses(409) },
      },
    },
    (request) =>
      app.db
        .transaction()
        .execute((trx) =>
          def.update(trx, requireAuth(request), request.params.id, request.body as Static<Update>),
        ),
  )

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

  app.get(
    def.path,
    {
      config: read,
      schema: {
        tags,
        summary: `List ${label}s, newest first`,
        querystring: def.listQuery,
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
        (beforeId, take) => def.list(app.db, auth, query, beforeId, take),
        def.toApi,
      )
    },
  )
}
