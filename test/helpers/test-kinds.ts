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

/**
 * The helpers of the tests that drive a page in Chromium (the console, the kiosk) or run the
 * documentation's samples: they run on SQLite alone, the database `npm start` serves a reader. What
 * they add is the page's or the document's behaviour; the API under them is the same on both
 * databases and is tested on both by the API's own tests.
 */
const ONE_DATABASE_HELPERS = ['test/helpers/browser.ts', 'test/docs.test.ts'].map((file) =>
  path.normalize(file),
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
function reaches(file: string, helpers: string[], seen: Map<string, boolean>): boolean {
  const known = seen.get(file)
  if (known !== undefined) return known
  seen.set(file, false)
  const found =
    helpers.includes(file) ||
    relativeImports(file)
      .filter((target) => target.startsWith(`test${path.sep}`) && fs.existsSync(target))
      .some((target) => reaches(target, helpers, seen))
  seen.set(file, found)
  return found
}

export interface TestFilesByKind {
  /** Run on SQLite and on PostgreSQL. */
  withDatabase: string[]
  /** Pages in Chromium and the documents' samples: run on SQLite. */
  onOneDatabase: string[]
  /** Run once, without a database. */
  withoutDatabase: string[]
}

/** Every `*.test.ts` under test/, relative to the root, by what it needs. */
export function testFilesByKind(root: string): TestFilesByKind {
  const previous = process.cwd()
  process.chdir(root)
  try {
    const files = fs
      .readdirSync('test', { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => path.join('test', name))
      .sort()
    const database = new Map<string, boolean>()
    const oneDatabase = new Map<string, boolean>()
    const needsDatabase = files.filter((file) => reaches(file, DATABASE_HELPERS, database))
    const onOneDatabase = needsDatabase.filter((file) => reaches(file, ONE_DATABASE_HELPERS, oneDatabase))
    return {
      withDatabase: needsDatabase.filter((file) => !onOneDatabase.includes(file)),
      onOneDatabase,
      withoutDatabase: files.filter((file) => !needsDatabase.includes(file)),
    }
  } finally {
    process.chdir(previous)
  }
}
