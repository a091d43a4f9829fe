import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { generateTypes, SCHEMA_PATH } from '../../packages/client/scripts/generate-types.js'
import { OPENAPI_PATH, renderOpenApiDocument } from '../../scripts/export-openapi.js'

const STALE = 'is stale: run `npm run openapi:generate` and commit the result'

/** Where two texts first differ, for a failure message that does not print 100 KB. */
function firstDifference(committed: string, fresh: string): string {
  const a = committed.split('\n')
  const b = fresh.split('\n')
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      return `first difference at line ${i + 1}:\n  committed: ${a[i] ?? '<end of file>'}\n  generated: ${b[i] ?? '<end of file>'}`
    }
  }
  return 'no difference'
}

function readCommitted(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return '<missing>'
  }
}

describe('the client package’s generated files match the service', () => {
  it('packages/client/openapi.json and src/generated/schema.ts are what `npm run openapi:generate` writes', async () => {
    // Both regenerated in memory from the current code: the document the app serves, then its types.
    const document = await renderOpenApiDocument()
    const committedDocument = readCommitted(OPENAPI_PATH)
    if (committedDocument !== document) {
      expect.fail(`packages/client/openapi.json ${STALE}.\n${firstDifference(committedDocument, document)}`)
    }

    const types = await generateTypes(document)
    const committedTypes = readCommitted(SCHEMA_PATH)
    if (committedTypes !== types) {
      expect.fail(
        `packages/client/src/generated/schema.ts ${STALE}.\n${firstDifference(committedTypes, types)}`,
      )
    }
    expect(types).toContain('export interface paths')
  })
})
