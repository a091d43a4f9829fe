import { onServer } from '../test/helpers/postgres-run.js'

export interface BenchSchema {
  /** `baseUrl` with the schema as its `search_path`. */
  url: string
  /** Drops the schema, unless `keep`. */
  drop: () => Promise<void>
}

/**
 * A PostgreSQL schema for one benchmark run, so that runs never see each other's tables or the
 * tests'. `replace` drops a schema of that name first (a run that was interrupted left it).
 */
export async function benchSchema(
  baseUrl: string,
  name: string,
  options: { replace?: boolean; keep?: boolean; log?: (line: string) => void } = {},
): Promise<BenchSchema> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name))
    throw new Error(`schema name must be a plain lower-case name: ${name}`)
  const admin = (statement: string) => onServer(baseUrl, statement)
  if (options.replace) await admin(`drop schema if exists ${name} cascade`)
  await admin(`create schema ${name}`)
  const url = new URL(baseUrl)
  url.searchParams.set('options', `-c search_path=${name}`)
  return {
    url: url.toString(),
    drop: async () => {
      if (options.keep) options.log?.(`kept PostgreSQL schema ${name}`)
      else await admin(`drop schema if exists ${name} cascade`)
    },
  }
}
