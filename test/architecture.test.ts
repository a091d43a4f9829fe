import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * The layers point one way: core (errors, the caller's identity, instants, schema shapes) and lib
 * at the bottom; db above them; feature modules above db; http/ (cross-cutting request handling)
 * above the modules; app, server, worker and cli on top. A module's `routes.ts` is its HTTP face
 * and may use http/ helpers; nothing else in a module may.
 */
const SRC = path.resolve(import.meta.dirname, '../src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') ? [full] : []
  })
}

function localImports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/from '(\.[^']+)'/g)].map((m) =>
    path.relative(SRC, path.resolve(path.dirname(file), m[1] as string)),
  )
}

/** `..` is outside src/: the client package, whose signature code the service shares. */
const layerOf = (relative: string) =>
  relative.startsWith('..') ? 'packages' : (relative.split(path.sep)[0] ?? '')

const ALLOWED: Record<string, string[]> = {
  core: ['core', 'lib'],
  lib: ['lib'],
  db: ['db', 'core', 'lib'],
  modules: ['modules', 'db', 'core', 'lib', 'packages'],
  http: ['http', 'modules', 'db', 'core', 'lib'],
}

describe('layering', () => {
  const files = sourceFiles(SRC).map((f) => ({ file: f, relative: path.relative(SRC, f) }))

  it('finds the source tree', () => {
    expect(files.length).toBeGreaterThan(40)
  })

  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    it(`${layer}/ imports only ${allowed.join(', ')}`, () => {
      const violations = files
        .filter((f) => layerOf(f.relative) === layer)
        .flatMap((f) => {
          const isRoutes = layer === 'modules' && path.basename(f.file) === 'routes.ts'
          const permitted = isRoutes ? [...allowed, 'http'] : allowed
          return localImports(f.file)
            .filter((target) => !permitted.includes(layerOf(target)))
            .map((target) => `${f.relative} -> ${target}`)
        })
      expect(violations).toEqual([])
    })
  }
})
