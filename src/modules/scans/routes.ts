import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { ApiError, errors } from '../../core/errors.js'
import { ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { ErrorEnvelope } from '../../http/schemas.js'
import { CreateScanBatchBody, CreateScanBody, ListScansQuery, Scan } from './schemas.js'
import {
  checkScanBatch,
  checkScanPin,
  listScans,
  recordScan,
  recordScanBatch,
  retrieveScan,
} from './service.js'

const ScanBatchResult = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(Type.Union([ref(Scan), ErrorEnvelope.properties.error]), {
      description:
        'One entry per scan sent, in the order sent: the scan recorded, or the `error` of the envelope `POST /v1/scans` would have answered with.',
    }),
    has_more: Type.Literal(false),
    next_cursor: Type.Null(),
  },
  { additionalProperties: false, description: 'What each scan of the batch did, in input order.' },
)

export async function scanRoutes(instance: FastifyInstance): Promise<void> {
  registerResourceRoutes(instance, {
    path: '/v1/scans',
    name: 'scan',
    tag: 'Scans',
    scope: 'scans',
    sites: 'per-site',
    schema: Scan,
    create: {
      body: CreateScanBody,
      summary: 'Record a scan at a device: checks the operator in or out',
      run: recordScan,
      before: checkScanPin,
      deviceKey: 'also',
    },
    retrieve: retrieveScan,
    list: { query: ListScansQuery, run: listScans },
  })

  // Untyped on purpose: the envelope's `error.type` is built from the error table at run time,
  // which TypeBox cannot type, so the answer is checked by the response schema instead.
  instance.post(
    '/v1/scans/batch',
    {
      config: { scope: 'scans:write', deviceKey: 'also', sites: 'per-site' },
      schema: {
        tags: ['Scans'],
        summary: 'Record scans a device synced at once, in time order; each is applied as POST /v1/scans',
        'x-idempotent': true,
        body: CreateScanBatchBody,
        response: { 200: ScanBatchResult },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request)
      const body = request.body as CreateScanBatchBody
      const checked = await checkScanBatch(instance.db, auth, body)
      return instance.creates.run(
        request,
        reply,
        async (trx) => {
          const outcomes = await recordScanBatch(trx, auth, checked)
          const data = outcomes.map((outcome) => {
            if ('scan' in outcome) return outcome.scan
            const error = outcome.error instanceof ApiError ? outcome.error : errors.internal()
            if (error !== outcome.error) request.log.error({ err: outcome.error }, 'a scan of a batch failed')
            return { ...error.toBody(), request_id: request.id }
          })
          return { object: 'list' as const, data, has_more: false as const, next_cursor: null }
        },
        200,
      )
    },
  )
}
