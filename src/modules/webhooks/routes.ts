import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { IdParams, listEnvelope, ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { errorResponses } from '../../http/schemas.js'
import {
  CreateEndpointBody,
  DeletedWebhookEndpoint,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  RecoverBody,
  RotateSecretBody,
  UpdateEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookRecovery,
} from './schemas.js'
import type { DeliverySender } from './sender.js'
import {
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  listEndpoints,
  recoverEndpoint,
  resendDelivery,
  retrieveDelivery,
  retrieveEndpoint,
  rotateSecret,
  sendTestEvent,
  type UrlPolicy,
  updateEndpoint,
} from './service.js'

const tags = ['Webhooks']

export function webhookRoutes(options: { urlPolicy: UrlPolicy; sender: DeliverySender }) {
  const { urlPolicy, sender } = options
  return async (instance: FastifyInstance): Promise<void> => {
    registerResourceRoutes(instance, {
      path: '/v1/webhook-endpoints',
      name: 'webhook_endpoint',
      tag: 'Webhooks',
      scope: 'webhooks',
      sites: 'account-wide',
      schema: WebhookEndpoint,
      create: {
        body: CreateEndpointBody,
        response: WebhookEndpointWithSecret,
        run: (trx, auth, body) => createEndpoint(trx, auth, body, urlPolicy),
      },
      retrieve: retrieveEndpoint,
      update: {
        body: UpdateEndpointBody,
        run: (trx, auth, id, body) => updateEndpoint(trx, auth, id, body, urlPolicy),
      },
      remove: {
        summary: 'Delete a webhook endpoint (its pending deliveries stop)',
        response: DeletedWebhookEndpoint,
        run: deleteEndpoint,
      },
      list: { query: ListEndpointsQuery, run: listEndpoints },
    })

    const app = instance.withTypeProvider<TypeBoxTypeProvider>()
    const write = { scope: 'webhooks:write' as const, sites: 'account-wide' as const }
    const read = { scope: 'webhooks:read' as const, sites: 'account-wide' as const }

    app.post(
      '/v1/webhook-endpoints/:id/rotate-secret',
      {
        config: write,
        // The body is optional (grace_hours has a default): a POST without one means `{}`.
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {}
        },
        schema: {
          tags,
          summary: 'Rotate the signing secret; the previous one stays valid for grace_hours',
          'x-idempotent': true,
          params: IdParams,
          body: RotateSecretBody,
          response: { 200: ref(WebhookEndpointWithSecret, 'The endpoint with its new signing secret.') },
        },
      },
      (request, reply) =>
        app.creates.run(
          request,
          reply,
          (trx) => rotateSecret(trx, requireAuth(request), request.params.id, request.body ?? {}),
          200,
        ),
    )

    app.post(
      '/v1/webhook-endpoints/:id/send-test',
      {
        config: write,
        schema: {
          tags,
          summary: 'Send a webhook_endpoint.test event to this endpoint alone',
          'x-idempotent': true,
          params: IdParams,
          response: {
            201: ref(WebhookDelivery, 'The delivery of the test event, due now.'),
            ...errorResponses(409),
          },
        },
      },
      (request, reply) =>
        app.creates.run(request, reply, (trx) => sendTestEvent(trx, requireAuth(request), request.params.id)),
    )

    app.post(
      '/v1/webhook-endpoints/:id/recover',
      {
        config: write,
        schema: {
          tags,
          summary: 'Redeliver a window: failed deliveries back to pending, missed ones created',
          description:
            'For the window [since, until) (at most 14 days back, never before the endpoint was created): every failed delivery of the endpoint goes back to `pending` with a new round of scheduled attempts (same `whd_` id), and every event the endpoint subscribes to but never got a delivery of (it was disabled) gets one. Safe to repeat: nothing that succeeded is sent again, and an event never has two deliveries to one endpoint.',
          params: IdParams,
          body: RecoverBody,
          response: {
            200: ref(WebhookRecovery, 'How many deliveries were recovered and created.'),
            ...errorResponses(409),
          },
        },
      },
      (request) => recoverEndpoint(app.db, requireAuth(request), request.params.id, request.body),
    )

    app.get(
      '/v1/webhook-deliveries',
      {
        config: read,
        schema: {
          tags,
          summary: 'The delivery log, newest first',
          querystring: ListDeliveriesQuery,
          response: { 200: listEnvelope(ref(WebhookDelivery), 'A page of deliveries, newest first.') },
        },
      },
      (request) => {
        const auth = requireAuth(request)
        return app.paginator.page(
          'webhook_delivery',
          auth,
          request.query,
          (beforeId, take) => listDeliveries(app.db, auth, request.query, beforeId, take),
          (delivery) => delivery,
        )
      },
    )

    app.get(
      '/v1/webhook-deliveries/:id',
      {
        config: read,
        schema: {
          tags,
          summary: 'A delivery with every attempt',
          params: IdParams,
          response: { 200: ref(WebhookDelivery, 'The delivery.') },
        },
      },
      (request) => retrieveDelivery(app.db, requireAuth(request), request.params.id),
    )

    app.post(
      '/v1/webhook-deliveries/:id/resend',
      {
        config: write,
        schema: {
          tags,
          summary: 'Send the same delivery again, now (one attempt; same whd_ id)',
          params: IdParams,
          response: {
            200: ref(WebhookDelivery, 'The delivery with its new attempt.'),
            ...errorResponses(409),
          },
        },
      },
      (request) => resendDelivery(app.db, requireAuth(request), request.params.id, sender),
    )
  }
}
