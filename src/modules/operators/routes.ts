import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { requireAuth } from '../../http/auth.js'
import { errors } from '../../http/errors.js'
import { listEnvelope } from '../../http/pagination.js'
import { errorResponses } from '../../http/schemas.js'
import { findOperator, listOperatorRows, toOperator } from './repository.js'
import {
  CreateOperatorBody,
  ListOperatorsQuery,
  Operator,
  OperatorIdParams,
  UpdateOperatorBody,
} from './schemas.js'
import { createOperator, deactivateOperator, updateOperator } from './service.js'

const tags = ['Operators']

export async function operatorRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/operators',
    {
      config: { scope: 'operators:write' },
      schema: {
        tags,
        summary: 'Create an operator',
        body: CreateOperatorBody,
        response: { 201: Operator, ...errorResponses(409, 413, 415, 422) },
      },
    },
    (request, reply) =>
      app.creates.run(request, reply, (trx) => createOperator(trx, requireAuth(request), request.body)),
  )

  app.get(
    '/v1/operators/:id',
    {
      config: { scope: 'operators:read' },
      schema: {
        tags,
        summary: 'Retrieve an operator',
        params: OperatorIdParams,
        response: { 200: Operator, ...errorResponses(404) },
      },
    },
    async (request) => {
      const row = await findOperator(app.db, requireAuth(request), request.params.id)
      if (!row) throw errors.notFound('operator', request.params.id)
      return toOperator(row)
    },
  )

  app.patch(
    '/v1/operators/:id',
    {
      config: { scope: 'operators:write' },
      schema: {
        tags,
        summary: 'Update, rename, relink, deactivate or reactivate an operator',
        params: OperatorIdParams,
        body: UpdateOperatorBody,
        response: { 200: Operator, ...errorResponses(404, 413, 415, 422) },
      },
    },
    (request) =>
      app.db
        .transaction()
        .execute((trx) => updateOperator(trx, requireAuth(request), request.params.id, request.body)),
  )

  app.delete(
    '/v1/operators/:id',
    {
      config: { scope: 'operators:write' },
      schema: {
        tags,
        summary: 'Deactivate an operator (soft delete; past sessions are kept)',
        params: OperatorIdParams,
        response: { 200: Operator, ...errorResponses(404) },
      },
    },
    (request) =>
      app.db.transaction().execute((trx) => deactivateOperator(trx, requireAuth(request), request.params.id)),
  )

  app.get(
    '/v1/operators',
    {
      config: { scope: 'operators:read' },
      schema: {
        tags,
        summary: 'List operators, newest first',
        querystring: ListOperatorsQuery,
        response: { 200: listEnvelope(Operator), ...errorResponses(422) },
      },
    },
    (request) => {
      const auth = requireAuth(request)
      return app.paginator.page(
        'operators',
        auth,
        request.query,
        (beforeId, take) => listOperatorRows(app.db, auth, request.query, beforeId, take),
        toOperator,
      )
    },
  )
}
