import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, errors } from '../core/errors.js'
import { isDatabaseUnreachable } from '../db/connection.js'
import { lingerBeforeClosing } from './client-errors.js'
import { validationToApiError } from './validation.js'

export const BODY_LIMIT_BYTES = 1024 * 1024

/**
 * The one place that writes error bodies. Every non-2xx answer, from a route, a hook, the body
 * parser, the router or an unexpected exception, leaves through `sendError`.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error, request)
    // The client may still be sending the body: it is read and dropped so that the 413 reaches it.
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') lingerBeforeClosing(request.raw)
    if (apiError.code === 'database_timeout')
      request.log.warn({ err: error }, 'the database did not answer in time')
    else if (apiError.status >= 500) {
      // The stack goes to the log with the request id; the body says nothing of internals.
      request.log.error({ err: error, request_id: request.id }, 'unhandled error')
    }
    return sendError(request, reply, apiError)
  })

  const routes: Array<{ method: string; pattern: RegExp }> = []
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const pattern = new RegExp(`^${route.url.replace(/:[^/]+/g, '[^/]+')}/?$`)
    for (const method of methods) routes.push({ method, pattern })
  })

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))]
    const error = allowed.length
      ? errors.methodNotAllowed(request.method, path, allowed.sort())
      : errors.routeNotFound(request.method, path)
    return sendError(request, reply, error)
  })
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  return reply
    .code(error.status)
    .headers(error.headers)
    .header('x-request-id', request.id)
    .type('application/json; charset=utf-8')
    .send({ error: { ...error.toBody(), request_id: request.id } })
}

function toApiError(error: FastifyError, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error
  if (error.validation) return validationToApiError(error.validation, error.validationContext)
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.bodyTooLarge(BODY_LIMIT_BYTES)
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType(String(request.headers['content-type'] ?? ''))
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidJson('The body is empty but Content-Type is application/json.')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errors.invalidJson()
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return errors.invalidJson()
  }
  // A 503 the client can retry, not a 500: the request was fine, the database was slow, locked or
  // out of reach (its connection lost under the request).
  if (isDatabaseUnreachable(error)) return errors.databaseTimeout()
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) return errors.requestRejected(status, error.message)
  return errors.internal()
}
