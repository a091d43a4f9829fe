import type { FastifyInstance } from 'fastify'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { detachDevices } from '../devices/service.js'
import {
  CreateLocationBody,
  DeletedLocation,
  ListLocationsQuery,
  Location,
  UpdateLocationBody,
} from './schemas.js'
import { createLocation, deleteLocation, listLocations, retrieveLocation, updateLocation } from './service.js'

export async function locationRoutes(app: FastifyInstance): Promise<void> {
  registerResourceRoutes(app, {
    path: '/v1/locations',
    name: 'location',
    tag: 'Locations',
    scope: 'locations',
    sites: { read: 'per-site', write: 'account-wide' },
    schema: Location,
    create: { body: CreateLocationBody, run: createLocation },
    retrieve: retrieveLocation,
    update: { body: UpdateLocationBody, run: updateLocation },
    remove: {
      summary: 'Delete a location (sessions that refer to it stay readable)',
      response: DeletedLocation,
      run: (trx, auth, id) => deleteLocation(trx, auth, id, detachDevices),
    },
    list: { query: ListLocationsQuery, run: listLocations },
  })
}
