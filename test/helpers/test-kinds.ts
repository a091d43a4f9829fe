import fs from 'node:fs'
import path from 'node:path'

/**
 * The helpers through which a test file reaches a database (or a service, a browser or a child
 * process that opens one). A file that reaches none of them, through its own imports and those of
 * the test files it imports, touches no database: it runs once, not once per dialect.
 */
const DATABASE_HELPERS = ['test/helpers/database.ts', 'test/helpers/process.ts', 'test/helpers/redis.ts'].map(
  (file) => path.normalize(file),
)

/** Value imports (not `import type`) and re-exports, with a relative specifier. */
const RELATIVE_IMPORT = /^(?:import|export)\s+(?!type\b)[^'"]*?from\s+'(\.[^']+)'/gm

function relativeImports(file: string): string[] {
  const source = fs.readFileSync(file, 'utf8')
  return [...source.matchAll(RELATIVE_IMPORT)].map((match) => {
    const target = path.join(path.dirname(file), match[1] as string)
    return target.endsWith('.js') ? `${target.slice(0, -3)}.ts` : target
  })
}

/**
 * Whether `file` (relative to the root) reaches a database helper through the test files it imports.
 * Only test/ is followed: importing src/ never opens a database by itself, and a test that opens one
 * does it through test/helpers/database.ts (which refuses in the run without a dialect).
 */
function reachesDatabase(file: string, seen: Map<string, boolean>): boolean {
  const known = seen.get(file)
  if (known !== undefined) return known
  seen.set(file, false)
  const reaches =
    DATABASE_HELPERS.includes(file) ||
    relativeImports(file)
      .filter((target) => target.startsWith(`test${path.sep}`) && fs.existsSync(target))
      .some((target) => reachesDatabase(target, seen))
  seen.set(file, reaches)
  return reaches
}

/** Every `*.test.ts` under test/, relative to the root, split by whether it touches a database. */
export function testFilesByKind(root: string): { withDatabase: string[]; withoutDatabase: string[] } {
  const previous = process.cwd()
  process.chdir(root)
  try {
    const files = fs
      .readdirSync('test', { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => path.join('test', name))
      .sort()
    const seen = new Map<string, boolean>()
    const withDatabase = files.filter((file) => reachesDatabase(file, seen))
    return { withDatabase, withoutDatabase: files.filter((file) => !withDatabase.includes(file)) }
  } finally {
    process.chdir(previous)
  }
}
