import type { FastifyInstance } from 'fastify'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { findLocation, listLocationRows, toLocation } from './repository.js'
import {
  CreateLocationBody,
  DeletedLocation,
  ListLocationsQuery,
  Location,
  UpdateLocationBody,
} from './schemas.js'
import { createLocation, deleteLocation, updateLocation } from './service.js'

export async function locationRoutes(app: FastifyInstance): Promise<void> {
  registerResourceRoutes(app, {
    path: '/v1/locations',
    name: 'location',
    tag: 'Locations',
    scope: 'locations',
    schema: Location,
    createBody: CreateLocationBody,
    updateBody: UpdateLocationBody,
    listQuery: ListLocationsQuery,
    create: createLocation,
    find: findLocation,
    update: updateLocation,
    remove: {
      summary: 'Delete a location (sessions that refer to it stay readable)',
      response: DeletedLocation,
      run: deleteLocation,
    },
    list: listLocationRows,
    toApi: toLocation,
  })
}
