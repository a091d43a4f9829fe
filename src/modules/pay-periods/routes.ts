import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { IdParams, listEnvelope, ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { errorResponses } from '../../http/schemas.js'
import { CreatePayPeriodBody, ListPayPeriodsQuery, PayPeriod } from './schemas.js'
import {
  closePayPeriod,
  createPayPeriod,
  listPayPeriods,
  reopenPayPeriod,
  retrievePayPeriod,
} from './service.js'

const tags = ['Pay periods']

export async function payPeriodRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/pay-periods',
    {
      config: { scope: 'timesheets:write', sites: 'account-wide' },
      schema: {
        tags,
        summary: 'Create a pay period',
        description:
          'Inclusive dates, at most 62 days. `end_date` before `start_date`, or a longer period: 422 `invalid_date_range`; sharing a day with another period of the account and mode: 409 `overlapping_period`. Scope `timesheets:write`. Emits `pay_period.created`.',
        'x-idempotent': true,
        body: CreatePayPeriodBody,
        response: { 201: ref(PayPeriod, 'The created pay period (`status: open`).') },
      },
    },
    (request, reply) =>
      app.creates.run(request, reply, (trx) => createPayPeriod(trx, requireAuth(request), request.body)),
  )

  app.get(
    '/v1/pay-periods/:id',
    {
      config: { scope: 'timesheets:read', sites: 'none' },
      schema: {
        tags,
        summary: 'Retrieve a pay period',
        params: IdParams,
        response: { 200: ref(PayPeriod, 'The pay period.') },
      },
    },
    (request) => retrievePayPeriod(app.db, requireAuth(request), request.params.id),
  )

  app.get(
    '/v1/pay-periods',
    {
      config: { scope: 'timesheets:read', sites: 'none' },
      schema: {
        tags,
        summary: 'List pay periods, newest first',
        querystring: ListPayPeriodsQuery,
        response: { 200: listEnvelope(ref(PayPeriod), 'A page of pay periods, newest first.') },
      },
    },
    (request) => {
      const auth = requireAuth(request)
      return app.paginator.page(
        'pay_period',
        auth,
        request.query,
        (beforeId, take) => listPayPeriods(app.db, auth, request.query, beforeId, take),
        (period) => period,
      )
    },
  )

  const action = (verb: 'close' | 'reopen', summary: string, description: string) =>
    app.post(
      `/v1/pay-periods/:id/${verb}`,
      {
        config: { scope: ['timesheets:write', 'sessions:approve'], sites: 'account-wide' },
        schema: {
          tags,
          summary,
          description: `${description} Scopes \`timesheets:write\` and \`sessions:approve\`.`,
          params: IdParams,
          response: { 200: ref(PayPeriod, 'The pay period.'), ...errorResponses(409) },
        },
      },
      (request) =>
        app.db
          .transaction()
          .execute((trx) =>
            (verb === 'close' ? closePayPeriod : reopenPayPeriod)(
              trx,
              requireAuth(request),
              request.params.id,
            ),
          ),
    )
  action(
    'close',
    'Close a pay period',
    "409 `period_not_over` until the day after `end_date` has begun in every time zone of the account's locations (UTC without any; the message gives the instant it can close). Then 409 `pending_reviews` while a session whose work date is in the period is `pending`, still open, or completed without a check-out and not rejected (the message gives the counts). Afterwards creating, editing, deleting, approving or rejecting such a session answers 409 `period_closed`, and scans that would open or complete one are flagged `period_closed`. Closing a closed period changes nothing. Emits `pay_period.closed`.",
  )
  action(
    'reopen',
    'Reopen a closed pay period',
    'Its sessions can be changed and reviewed again. Reopening an open period changes nothing. Emits `pay_period.reopened`.',
  )
}
