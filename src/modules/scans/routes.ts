import type { FastifyInstance } from 'fastify'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { CreateScanBody, ListScansQuery, Scan } from './schemas.js'
import { listScans, recordScan, retrieveScan } from './service.js'

export async function scanRoutes(app: FastifyInstance): Promise<void> {
  registerResourceRoutes(app, {
    path: '/v1/scans',
    name: 'scan',
    tag: 'Scans',
    scope: 'scans',
    schema: Scan,
    create: {
      body: CreateScanBody,
      summary: 'Record a scan at a device: checks the operator in or out',
      run: recordScan,
    },
    retrieve: retrieveScan,
    list: { query: ListScansQuery, run: listScans },
  })
}
