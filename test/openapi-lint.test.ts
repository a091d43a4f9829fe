import { createConfig, lintFromString } from '@redocly/openapi-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_CODES } from '../src/core/errors.js'
import { buildTestApp, type TestApp } from './helpers/app.js'

describe('the OpenAPI document under a standard linter', () => {
  let t: TestApp
  let document: { components: { schemas: Record<string, unknown> } }
  beforeAll(async () => {
    t = await buildTestApp()
    document = (await t.client(undefined).get('/v1/openapi.json')).body as typeof document
  })
  afterAll(() => t.close())

  it("passes Redocly's recommended rules with no error", async () => {
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({
      source: JSON.stringify(document),
      absoluteRef: 'openapi.json',
      config,
    })
    const errors = problems
      .filter((problem) => problem.severity === 'error')
      .map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? '?'}`)
    expect(errors).toEqual([])
  })

  it('lists every error code of the table in the envelope, and nothing else', () => {
    const envelope = document.components.schemas.ErrorEnvelope as {
      properties: { error: { properties: { code: { enum: string[] } } } }
    }
    expect([...envelope.properties.error.properties.code.enum].sort()).toEqual(
      Object.keys(ERROR_CODES).sort(),
    )
  })
})
