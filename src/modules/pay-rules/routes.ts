import type { FastifyInstance } from 'fastify'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { operatorUsingPayRule } from '../operators/service.js'
import {
  CreatePayRuleBody,
  DeletedPayRule,
  ListPayRulesQuery,
  PayRule,
  UpdatePayRuleBody,
} from './schemas.js'
import { createPayRule, deletePayRule, listPayRules, retrievePayRule, updatePayRule } from './service.js'

export async function payRuleRoutes(app: FastifyInstance): Promise<void> {
  registerResourceRoutes(app, {
    path: '/v1/pay-rules',
    name: 'pay_rule',
    tag: 'Pay rules',
    // Pay rules are part of what timesheets compute: the same scopes as timesheets and pay periods.
    scope: 'timesheets',
    sites: 'account-wide',
    schema: PayRule,
    create: { body: CreatePayRuleBody, run: createPayRule },
    retrieve: retrievePayRule,
    update: { body: UpdatePayRuleBody, run: updatePayRule },
    remove: {
      summary: 'Delete a pay rule (409 `pay_rule_in_use` while an operator has it)',
      response: DeletedPayRule,
      run: (trx, auth, id) => deletePayRule(trx, auth, id, operatorUsingPayRule),
      errorStatuses: [409],
    },
    list: { query: ListPayRulesQuery, run: listPayRules },
  })
}
