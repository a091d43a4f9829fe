import type { FastifyInstance } from 'fastify'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { findDevice, listDeviceRows, toDevice } from './repository.js'
import { CreateDeviceBody, DeletedDevice, Device, ListDevicesQuery, UpdateDeviceBody } from './schemas.js'
import { createDevice, deleteDevice, updateDevice } from './service.js'

export async function deviceRoutes(app: FastifyInstance): Promise<void> {
  registerResourceRoutes(app, {
    path: '/v1/devices',
    name: 'device',
    tag: 'Devices',
    scope: 'devices',
    schema: Device,
    createBody: CreateDeviceBody,
    updateBody: UpdateDeviceBody,
    listQuery: ListDevicesQuery,
    create: createDevice,
    find: findDevice,
    update: updateDevice,
    remove: {
      summary: 'Delete a device (sessions that refer to it stay readable)',
      response: DeletedDevice,
      run: deleteDevice,
    },
    list: listDeviceRows,
    toApi: toDevice,
  })
}
