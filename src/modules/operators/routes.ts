import type { FastifyInstance } from 'fastify'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { CreateOperatorBody, ListOperatorsQuery, Operator, UpdateOperatorBody } from './schemas.js'
import {
  createOperator,
  deactivateOperator,
  listOperators,
  retrieveOperator,
  updateOperator,
} from './service.js'

export async function operatorRoutes(app: FastifyInstance): Promise<void> {
  registerResourceRoutes(app, {
    path: '/v1/operators',
    name: 'operator',
    tag: 'Operators',
    scope: 'operators',
    sites: 'per-site',
    schema: Operator,
    create: { body: CreateOperatorBody, run: createOperator },
    retrieve: retrieveOperator,
    update: { body: UpdateOperatorBody, run: updateOperator },
    remove: {
      summary: 'Deactivate an operator (soft delete: past sessions are kept; harmless when already inactive)',
      response: Operator,
      run: deactivateOperator,
    },
    list: { query: ListOperatorsQuery, run: listOperators },
  })
}
