import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { IdParams, listEnvelope, paginationQuery, ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { errorResponses } from '../../http/schemas.js'
import { createSession, deleteSession, reviewSession, updateSession } from './lifecycle.js'
import {
  ApproveSessionBody,
  CreateSessionBody,
  DeletedSession,
  ListSessionsQuery,
  RejectSessionBody,
  Session,
  SessionRevision,
  UpdateSessionBody,
} from './schemas.js'
import {
  assertSessionEverExisted,
  isWorkDateKey,
  listRevisions,
  listSessions,
  retrieveSession,
  workDateKeyOf,
} from './service.js'

export async function sessionRoutes(instance: FastifyInstance): Promise<void> {
  registerResourceRoutes(instance, {
    path: '/v1/sessions',
    name: 'session',
    tag: 'Sessions',
    scope: 'sessions',
    sites: 'per-site',
    schema: Session,
    create: { body: CreateSessionBody, run: createSession },
    retrieve: retrieveSession,
    update: { body: UpdateSessionBody, run: updateSession },
    remove: {
      summary: 'Delete a session (its revisions are kept)',
      response: DeletedSession,
      run: deleteSession,
      errorStatuses: [409],
    },
  })

  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

  // The list is declared here rather than by registerResourceRoutes: besides newest first (by id,
  // as every list) it pages by work date, a key of two parts, under a cursor of its own.
  app.get(
    '/v1/sessions',
    {
      config: { scope: 'sessions:read', sites: 'per-site' },
      schema: {
        tags: ['Sessions'],
        summary: 'List sessions, newest first or by work date',
        querystring: ListSessionsQuery,
        response: {
          200: listEnvelope(ref(Session), 'A page of sessions, newest first or by work date (`order`).'),
        },
      },
    },
    (request) => {
      const auth = requireAuth(request)
      const { query } = request
      if (query.order === 'work_date') {
        return app.paginator.pageByKey(
          'session:work_date',
          auth,
          query,
          (after, take) => listSessions(app.db, auth, query, { order: 'work_date', after }, take),
          workDateKeyOf,
          isWorkDateKey,
          (session) => session,
        )
      }
      // The list name every cursor of this list carried before it had an order: they stay valid.
      return app.paginator.page(
        'session',
        auth,
        query,
        (beforeId, take) => listSessions(app.db, auth, query, { order: 'created', beforeId }, take),
        (session) => session,
      )
    },
  )

  for (const [verb, decision, body] of [
    ['approve', 'approved', ApproveSessionBody],
    ['reject', 'rejected', RejectSessionBody],
  ] as const) {
    app.post(
      `/v1/sessions/:id/${verb}`,
      {
        config: { scope: 'sessions:approve', sites: 'per-site' },
        // The body is optional for approve; for reject, a POST without one gets the 422 of a
        // missing `note` rather than a 400: either way it means `{}`.
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {}
        },
        schema: {
          tags: ['Sessions'],
          summary: verb === 'approve' ? 'Approve a session after review' : 'Reject a session after review',
          description: `Sets \`review_status\` to \`${decision}\` with \`reviewed_at\`, \`reviewed_by\` (the key) and \`review_note\`${
            verb === 'approve'
              ? ' (the body and its `note` are optional)'
              : ' (`note` is required: 422 `missing_param`; a rejected session stays readable and counts for nothing)'
          }. An open session: 409 \`session_open\`; a work date in a closed pay period: 409 \`period_closed\`${
            verb === 'approve'
              ? '; a session without a check-out (closed for an over-long shift): 409 `check_out_missing`, set it by PATCH first'
              : ''
          }. A signed-in person whose membership is the session's operator: 403 \`self_approval\` (nobody approves their own work). Writes a revision (action \`${decision}\`) and emits \`session.updated\` with \`previous_attributes\`. Scope \`sessions:approve\`, which \`sessions:write\` does not imply.`,
          params: IdParams,
          body,
          response: { 200: ref(Session, `The session, ${decision}.`), ...errorResponses(409) },
        },
      },
      (request) =>
        app.db
          .transaction()
          .execute((trx) =>
            reviewSession(trx, requireAuth(request), request.params.id, decision, request.body?.note),
          ),
    )
  }
  app.get(
    '/v1/sessions/:id/revisions',
    {
      config: { scope: 'sessions:read', sites: 'per-site' },
      schema: {
        tags: ['Sessions'],
        summary: "A session's edit history, newest first (kept after the session is deleted)",
        params: IdParams,
        querystring: Type.Object(paginationQuery, { additionalProperties: false }),
        response: { 200: listEnvelope(ref(SessionRevision), 'A page of revisions, newest first.') },
      },
    },
    async (request) => {
      const auth = requireAuth(request)
      const { id } = request.params
      await assertSessionEverExisted(app.db, auth, id)
      return app.paginator.page(
        `session_revisions:${id}`,
        auth,
        request.query,
        (beforeId, take) => listRevisions(app.db, auth, id, beforeId, take),
        (revision) => revision,
      )
    },
  )
}
