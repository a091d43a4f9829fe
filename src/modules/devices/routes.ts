import type { FastifyInstance } from 'fastify'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import { CreateDeviceBody, DeletedDevice, Device, ListDevicesQuery, UpdateDeviceBody } from './schemas.js'
import { createDevice, deleteDevice, listDevices, retrieveDevice, updateDevice } from './service.js'

export async function deviceRoutes(app: FastifyInstance): Promise<void> {
  registerResourceRoutes(app, {
    path: '/v1/devices',
    name: 'device',
    tag: 'Devices',
    scope: 'devices',
    schema: Device,
    create: { body: CreateDeviceBody, run: createDevice },
    retrieve: retrieveDevice,
    update: { body: UpdateDeviceBody, run: updateDevice },
    remove: {
      summary: 'Delete a device (sessions that refer to it stay readable)',
      response: DeletedDevice,
      run: deleteDevice,
    },
    list: { query: ListDevicesQuery, run: listDevices },
  })
}
