import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { IdParams, ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { perAddressLimit } from '../../http/rate-limit.js'
import { registerResourceRoutes } from '../../http/resource-routes.js'
import {
  CreateDeviceBody,
  CreateDevicePairingBody,
  CurrentDevice,
  DeletedDevice,
  Device,
  DevicePairing,
  DevicePairingCode,
  ListDevicesQuery,
  UpdateDeviceBody,
} from './schemas.js'
import {
  createDevice,
  createPairingCode,
  currentDevice,
  deleteDevice,
  listDevices,
  pairDevice,
  retrieveDevice,
  unpairDevice,
  updateDevice,
} from './service.js'

const tags = ['Devices']

/** Pairings a client address may attempt a minute: a code cannot be guessed at that pace. */
const PAIRINGS_PER_MINUTE = 10

export async function deviceRoutes(instance: FastifyInstance): Promise<void> {
  registerResourceRoutes(instance, {
    path: '/v1/devices',
    name: 'device',
    tag: 'Devices',
    scope: 'devices',
    sites: 'per-site',
    schema: Device,
    create: { body: CreateDeviceBody, run: createDevice },
    retrieve: retrieveDevice,
    update: { body: UpdateDeviceBody, run: updateDevice },
    remove: {
      summary: 'Delete a device (sessions that refer to it stay readable; its key is revoked)',
      response: DeletedDevice,
      run: deleteDevice,
    },
    list: { query: ListDevicesQuery, run: listDevices },
  })
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/devices/:id/pairing-codes',
    {
      config: { scope: 'devices:write', sites: 'per-site' },
      schema: {
        tags,
        summary: 'Make a code that pairs the device once (valid 10 minutes)',
        params: IdParams,
        response: { 201: ref(DevicePairingCode, 'The code, shown this once.') },
      },
    },
    async (request, reply) => {
      const code = await app.db
        .transaction()
        .execute((trx) => createPairingCode(trx, requireAuth(request), request.params.id))
      reply.code(201)
      return code
    },
  )

  app.post(
    '/v1/device-pairings',
    {
      config: { public: true },
      onRequest: perAddressLimit(instance, 'pairing', PAIRINGS_PER_MINUTE, 60_000),
      schema: {
        tags,
        summary: 'Pair a device with a pairing code (no key; at most 10 a minute per address)',
        description:
          "An unknown, used or expired code: 422 `invalid_pairing_code`. The device's previous key is revoked. Emits `device.updated`.",
        security: [],
        body: CreateDevicePairingBody,
        response: { 201: ref(DevicePairing, 'The device and its key; the secret is shown this once.') },
      },
    },
    async (request, reply) => {
      const pairing = await app.db.transaction().execute((trx) => pairDevice(trx, request.body.code))
      reply.code(201)
      return pairing
    },
  )

  app.post(
    '/v1/devices/:id/unpair',
    {
      config: { scope: 'devices:write', sites: 'per-site' },
      schema: {
        tags,
        summary: 'Unpair a device: its key is revoked (refused within 5 s)',
        description: 'Emits `device.updated` when the device was paired.',
        params: IdParams,
        response: { 200: ref(Device, 'The device, no longer paired.') },
      },
    },
    (request) =>
      app.db.transaction().execute((trx) => unpairDevice(trx, requireAuth(request), request.params.id)),
  )

  app.get(
    '/v1/devices/current',
    {
      config: { scope: 'devices:read', deviceKey: 'only', sites: 'per-site' },
      schema: {
        tags,
        summary: "A device key's own device, its location, the service's clock and the PIN key",
        description: 'A device key only: an API key gets 403 `insufficient_scope`.',
        response: { 200: ref(CurrentDevice, 'The device as its key sees it.') },
      },
    },
    (request) => currentDevice(app.db, requireAuth(request)),
  )
}
