import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { errors } from '../../core/errors.js'
import { IdParams, listEnvelope, ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { errorResponses } from '../../http/schemas.js'
import { findScan, listScanRows, toScan } from './repository.js'
import { CreateScanBody, ListScansQuery, Scan } from './schemas.js'
import { recordScan } from './service.js'

const tags = ['Scans']

export async function scanRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/scans',
    {
      config: { scope: 'scans:write' },
      schema: {
        tags,
        summary: 'Record a scan at a device: checks the operator in or out',
        'x-idempotent': true,
        body: CreateScanBody,
        response: { 201: ref(Scan, 'The scan, with what it did (`result`).'), ...errorResponses(409) },
      },
    },
    (request, reply) =>
      app.creates.run(request, reply, (trx) => recordScan(trx, requireAuth(request), request.body)),
  )

  app.get(
    '/v1/scans/:id',
    {
      config: { scope: 'scans:read' },
      schema: {
        tags,
        summary: 'Retrieve a scan',
        params: IdParams,
        response: { 200: ref(Scan, 'The scan.') },
      },
    },
    async (request) => {
      const row = await findScan(app.db, requireAuth(request), request.params.id)
      if (!row) throw errors.notFound('scan', request.params.id)
      return toScan(row)
    },
  )

  app.get(
    '/v1/scans',
    {
      config: { scope: 'scans:read' },
      schema: {
        tags,
        summary: 'List scans, newest first',
        querystring: ListScansQuery,
        response: { 200: listEnvelope(ref(Scan), 'A page of scans, newest first.') },
      },
    },
    (request) => {
      const auth = requireAuth(request)
      return app.paginator.page(
        'scan',
        auth,
        request.query,
        (beforeId, take) => listScanRows(app.db, auth, request.query, beforeId, take),
        toScan,
      )
    },
  )
}
