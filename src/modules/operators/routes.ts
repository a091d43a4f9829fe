import type { FastifyInstance } from 'fastify'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { findOperator, listOperatorRows, toOperator } from './repository.js'
import { CreateOperatorBody, ListOperatorsQuery, Operator, UpdateOperatorBody } from './schemas.js'
import { createOperator, deactivateOperator, updateOperator } from './service.js'

export async function operatorRoutes(app: FastifyInstance): Promise<void> {
  registerResourceRoutes(app, {
    path: '/v1/operators',
    name: 'operator',
    tag: 'Operators',
    scope: 'operators',
    schema: Operator,
    createBody: CreateOperatorBody,
    updateBody: UpdateOperatorBody,
    listQuery: ListOperatorsQuery,
    create: createOperator,
    find: findOperator,
    update: updateOperator,
    remove: {
      summary: 'Deactivate an operator (soft delete: past sessions are kept; harmless when already inactive)',
      response: Operator,
      run: deactivateOperator,
    },
    list: listOperatorRows,
    toApi: toOperator,
  })
}
