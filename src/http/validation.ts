import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type {
  FastifySchemaCompiler,
  FastifySchemaValidationError,
  preValidationAsyncHookHandler,
} from 'fastify'
import { type ApiError, errors } from '../core/errors.js'

const shared: Options = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false }

// Bodies are JSON and keep their types: `"ident": 5` is `invalid_type`, never coerced to "5".
// Query strings and path parameters are text and are coerced to the schema's types.
const bodyAjv = addFormats.default(new Ajv({ ...shared, coerceTypes: false }))
const textAjv = addFormats.default(new Ajv({ ...shared, coerceTypes: true }))

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object)

/** Turns the first schema violation into the 422 `validation_error` of docs/concepts.md. */
export function validationToApiError(
  issues: FastifySchemaValidationError[],
  context: string | undefined,
): ApiError {
  const issue = issues[0]
  if (!issue) return errors.invalidValue(undefined, 'The request is invalid.')
  const base = pointerToParam(issue.instancePath)
  const params = issue.params as Record<string, unknown>

  if (context === 'body' && base === '' && issue.keyword === 'type') {
    return errors.invalidBody()
  }
  // A cursor is opaque: one the schema refuses (too long, repeated) is malformed, like a forged one.
  if (context === 'querystring' && base === 'cursor') return errors.invalidCursor()
  switch (issue.keyword) {
    case 'required': {
      const param = join(base, String(params.missingProperty))
      return errors.missingParam(param)
    }
    case 'additionalProperties': {
      const param = join(base, String(params.additionalProperty))
      return errors.unknownParam(param)
    }
    case 'type': {
      const expected = String(params.type).replace(',', ' or ')
      return errors.invalidType(base, expected)
    }
    default:
      return errors.invalidValue(base, `Invalid value for ${base}: ${describe(issue)}.`)
  }
}

function describe(issue: FastifySchemaValidationError): string {
  const params = issue.params as Record<string, unknown>
  switch (issue.keyword) {
    case 'maxLength':
      return `must be at most ${params.limit} characters`
    case 'minLength':
      return `must be at least ${params.limit} character${params.limit === 1 ? '' : 's'}`
    case 'minimum':
      return `must be at least ${params.limit}`
    case 'maximum':
      return `must be at most ${params.limit}`
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`
    case 'const':
      return `must be ${String(params.allowedValue)}`
    default:
      return issue.message ?? 'invalid'
  }
}

/** `/check_in/time` → `check_in.time`; `/enabled_events/2` → `enabled_events[2]`. */
function pointerToParam(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((acc, segment) => (/^\d+$/.test(segment) ? `${acc}[${segment}]` : join(acc, segment)), '')
}

function join(base: string, name: string): string {
  return base === '' ? name : `${base}.${name}`
}

/**
 * PostgreSQL text cannot hold a NUL character, and no field of this API has a use for one: any
 * string (or object key) with one, anywhere in the body, query or path, is refused with 422 before
 * validation, once for every route.
 */
export const rejectNulCharacters: preValidationAsyncHookHandler = async (request) => {
  for (const value of [request.params, request.query, request.body]) {
    const param = findNul(value)
    if (param !== undefined) {
      throw errors.invalidValue(
        param || undefined,
        `${param || 'The request'} must not contain NUL characters.`,
      )
    }
  }
}

/** Depth-first, with an explicit stack: a body may nest thousands of levels deep within 1 MiB. */
function findNul(root: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[root, '']]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [value, path] = next
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}[${i}]`])
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i] as [string, unknown]
        const name = path === '' ? key : `${path}.${key}`
        if (key.includes('\u0000')) return name
        stack.push([item, name])
      }
    }
  }
  return undefined
}
