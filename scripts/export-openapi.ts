/**
 * Writes the service's OpenAPI document to `packages/client/openapi.json`, the input of the client's
 * generated types. Part of `npm run openapi:generate`; `test/client/generated.test.ts` fails when the
 * committed file differs from what this produces.
 *
 * The document is the one `GET /v1/openapi.json` serves, taken from an app built on `sqlite::memory:`
 * (nothing is written to disk but the output file), with object keys sorted at every level and the text
 * formatted by the repository's Biome settings, so the same code always gives the same bytes.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/connection.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { formatWithBiome, REPO_ROOT, runIfEntryPoint } from './script-tools.js'

export const OPENAPI_PATH = path.join(REPO_ROOT, 'packages', 'client', 'openapi.json')

/** The document exactly as the API serves it. */
export async function fetchOpenApiDocument(): Promise<unknown> {
  // Built from fixed settings, not the caller's environment, so the output never depends on it.
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', WORKER: 'off' })
  const { db } = openDatabase(config.databaseUrl)
  await migrateToLatest(db)
  const app = await buildApp({ config, db })
  try {
    await app.ready()
    const response = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
    if (response.statusCode !== 200) {
      throw new Error(`GET /v1/openapi.json answered ${response.statusCode}: ${response.body.slice(0, 500)}`)
    }
    return JSON.parse(response.body) as unknown
  } finally {
    await app.close()
  }
}

/** A copy with the keys of every object sorted; arrays keep their order (it can mean something). */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort())
      sorted[key] = sortKeys((value as Record<string, unknown>)[key])
    return sorted
  }
  return value
}

/** The text of `packages/client/openapi.json`. */
export async function renderOpenApiDocument(): Promise<string> {
  const document = await fetchOpenApiDocument()
  return formatWithBiome(`${JSON.stringify(sortKeys(document), null, 2)}\n`, OPENAPI_PATH)
}

export async function main(): Promise<void> {
  const text = await renderOpenApiDocument()
  mkdirSync(path.dirname(OPENAPI_PATH), { recursive: true })
  writeFileSync(OPENAPI_PATH, text)
  console.log(`Wrote ${path.relative(process.cwd(), OPENAPI_PATH)}`)
}

runIfEntryPoint(import.meta.url, main)
