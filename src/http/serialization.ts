import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

type Schema = Record<string, unknown>

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The response serialiser (fast-json-stringify) picks the branch of an `anyOf` by validating the
 * value against each branch with Ajv: on a list of sessions, seven unions a session (`string |
 * null`, `check_out: { time } | null` with its `date-time` format, the literals of `source` and
 * `status`), 4 % of the CPU of `GET /v1/sessions`. The same shapes written as JSON Schema type
 * lists and enums are serialised with a `typeof` test instead. So the serialiser is given this
 * rewriting of every response schema, while the schemas themselves (and so the OpenAPI document,
 * where a union reads better) stay as declared:
 *
 * - `anyOf: [X, { type: 'null' }]`, where X has one `type` and no union or reference of its own,
 *   becomes X with `type: [X.type, 'null']`;
 * - `anyOf` of `const` literals of one JSON type becomes `{ type, enum }`.
 *
 * Both mean what the union means. Anything else is left as it is.
 */
export function serializationSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(serializationSchema)
  if (!isSchema(schema)) return schema
  const out: Schema = {}
  for (const [key, value] of Object.entries(schema)) out[key] = serializationSchema(value)
  const options = out.anyOf
  if (Array.isArray(options)) {
    const simpler = nullableOf(options) ?? enumOf(options)
    if (simpler !== undefined) {
      delete out.anyOf
      Object.assign(out, simpler)
    }
  }
  return out
}

const SINGLE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array'])
const UNION_KEYWORDS = ['anyOf', 'oneOf', 'allOf', '$ref', 'not', 'if', 'enum', 'const']

function nullableOf(options: unknown[]): Schema | undefined {
  if (options.length !== 2) return undefined
  const nullAt = options.findIndex((o) => isSchema(o) && o.type === 'null' && Object.keys(o).length === 1)
  if (nullAt === -1) return undefined
  const other = options[1 - nullAt]
  if (!isSchema(other) || typeof other.type !== 'string' || !SINGLE_TYPES.has(other.type)) return undefined
  if (UNION_KEYWORDS.some((keyword) => keyword in other)) return undefined
  return { ...other, type: [other.type, 'null'] }
}

function enumOf(options: unknown[]): Schema | undefined {
  if (options.length === 0) return undefined
  const values: unknown[] = []
  for (const option of options) {
    if (!isSchema(option) || !('const' in option)) return undefined
    if (Object.keys(option).some((key) => key !== 'const' && key !== 'type')) return undefined
    values.push(option.const)
  }
  const kinds = new Set(values.map((value) => typeof value))
  const [kind] = kinds
  if (kinds.size !== 1 || (kind !== 'string' && kind !== 'boolean')) return undefined
  return { type: kind, enum: values }
}

type SerializerFactory = ReturnType<typeof SerializerSelector>
type Serializer = ReturnType<ReturnType<SerializerFactory>>

/**
 * Serialisers already compiled in this process, by the shared schemas and options they were compiled
 * with, then by the response schema's JSON. fast-json-stringify checks a schema against its
 * meta-schema, resolves its references and generates code: an app has some 700 response schemas (a
 * route's statuses; most of them the same error envelope), and compiling each was 28 % of the test
 * workers' CPU, where every test file builds apps (docs/performance-log.md). A serialiser is a pure
 * function of those inputs (the schemas are JSON: TypeBox's symbols are not read), so the same
 * schema of another route, or of an app built again in the process, takes it as it is.
 */
const compiled = new Map<string, Map<string, Serializer>>()

/**
 * Fastify's own serialiser factory, given the rewritten schemas: the route's and the shared ones
 * (`app.addSchema`) that `$ref`s point to. For the `schemaController.compilersFactory` option.
 */
export function serializerFactory(): SerializerFactory {
  const fastifyFactory = SerializerSelector()
  return (externalSchemas, options) => {
    const shared = isSchema(externalSchemas)
      ? Object.fromEntries(Object.entries(externalSchemas).map(([id, s]) => [id, serializationSchema(s)]))
      : externalSchemas
    const compile = fastifyFactory(shared, options)
    const context = JSON.stringify([shared, options ?? null])
    const byContext = compiled.get(context) ?? new Map<string, Serializer>()
    compiled.set(context, byContext)
    return (route) => {
      const key = JSON.stringify(route.schema)
      const known = byContext.get(key)
      if (known) return known
      const serializer = compile({ ...route, schema: serializationSchema(route.schema) })
      byContext.set(key, serializer)
      return serializer
    }
  }
}
