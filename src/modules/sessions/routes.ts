import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../../core/errors.js'
import { IdParams, listEnvelope, paginationQuery, ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { createSession, deleteSession, updateSession } from './lifecycle.js'
import { listRevisionRows, sessionEverExisted, toRevision } from './repository.js'
import {
  CreateSessionBody,
  DeletedSession,
  ListSessionsQuery,
  Session,
  SessionRevision,
  UpdateSessionBody,
} from './schemas.js'
import { listSessions, retrieveSession } from './service.js'

export async function sessionRoutes(instance: FastifyInstance): Promise<void> {
  registerResourceRoutes(instance, {
    path: '/v1/sessions',
    name: 'session',
    tag: 'Sessions',
    scope: 'sessions',
    schema: Session,
    create: { body: CreateSessionBody, run: createSession },
    retrieve: retrieveSession,
    update: { body: UpdateSessionBody, run: updateSession },
    remove: {
      summary: 'Delete a session (its revisions are kept)',
      response: DeletedSession,
      run: deleteSession,
    },
    list: { query: ListSessionsQuery, run: listSessions },
  })

  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/v1/sessions/:id/revisions',
    {
      config: { scope: 'sessions:read' },
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
      if (!(await sessionEverExisted(app.db, auth, id))) throw errors.notFound('session', id)
      return app.paginator.page(
        `session_revisions:${id}`,
        auth,
        request.query,
        (beforeId, take) => listRevisionRows(app.db, auth, id, beforeId, take),
        toRevision,
      )
    },
  )
}
