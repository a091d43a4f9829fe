import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ApiError, ERROR_CODES, ERROR_TYPES, errors } from '../../src/core/errors.js'

const SRC = path.resolve(import.meta.dirname, '../../src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') ? [full] : []
  })
}

/** Every factory, called with placeholder arguments of the right kinds. */
function everyFactoryResult(): Array<[string, ApiError]> {
  return Object.entries(errors).map(([name, factory]) => {
    const args = Array.from({ length: factory.length }, (_, i) => {
      if (name === 'requestRejected' && i === 0) return 400
      if (name === 'methodNotAllowed' && i === 2) return ['GET']
      return 'x'
    })
    return [name, (factory as (...a: unknown[]) => ApiError)(...args)]
  })
}

/**
 * A code outside the table cannot compile (the constructor is private and `coded` takes an
 * `ErrorCode`); these tests hold the rest: factories agree with the table, the table has no
 * unused code, and call sites go through the named factories.
 */
describe('the error code table', () => {
  it('every factory builds an ApiError whose code, type and status agree with the table', () => {
    for (const [name, error] of everyFactoryResult()) {
      expect(error, name).toBeInstanceOf(ApiError)
      if (error.code === undefined) {
        expect(['authentication', 'internal', 'requestRejected'], name).toContain(name)
        expect(Object.keys(ERROR_TYPES)).toContain(error.type)
        continue
      }
      expect(ERROR_CODES[error.code], name).toEqual({ type: error.type, status: error.status })
    }
  })

  it('every code of the table has a factory (no code without a use)', () => {
    const built = new Set(everyFactoryResult().map(([, error]) => error.code))
    expect(Object.keys(ERROR_CODES).filter((code) => !built.has(code as keyof typeof ERROR_CODES))).toEqual(
      [],
    )
  })

  it('no file outside core/errors.ts builds an error except through a named factory', () => {
    const offenders = sourceFiles(SRC)
      .filter((file) => !file.endsWith(path.join('core', 'errors.ts')))
      .filter((file) => /ApiError\.(coded|uncoded)\(|errors\.validation\(/.test(readFileSync(file, 'utf8')))
      .map((file) => path.relative(SRC, file))
    expect(offenders).toEqual([])
  })
})
