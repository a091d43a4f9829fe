import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
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
    return /\.tsx?$/.test(entry.name) ? [full] : []
  })
}

interface LocalImport {
  /** The imported file, relative to src/ (`.ts`, as in the tree). */
  target: string
  /** `import type` or `export type`: erased from the JavaScript, so no edge at run time. */
  typeOnly: boolean
}

/**
 * The relative `import`/`export … from` statements of a file, side-effect imports included. With
 * `verbatimModuleSyntax` only a statement marked `type` as a whole is erased; `import { type X }`
 * still loads its module.
 */
function localImports(file: string): LocalImport[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/^(?:import|export)\s+(type\s+)?(?:[^;']*?\sfrom\s+)?'(\.[^']+)'/gm)].map((m) => ({
    target: path.relative(SRC, sourceOf(path.resolve(path.dirname(file), m[2] as string))),
    typeOnly: m[1] !== undefined,
  }))
}

/** The source file an import names: `x.js` is `x.ts`, or `x.tsx` in the console. */
function sourceOf(imported: string): string {
  const ts = imported.replace(/\.js$/, '.ts')
  return existsSync(ts) ? ts : `${ts}x`
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
            .filter(({ target }) => !permitted.includes(layerOf(target)))
            .map(({ target }) => `${f.relative} -> ${target}`)
        })
      expect(violations).toEqual([])
    })
  }
})

/**
 * A feature module's repository (its SQL and row mapper) is its own: any other file reaches the
 * feature through its service, for a row type too (the service re-exports the row types it
 * returns), so a type-only import counts. `modules/shared/`, the kernel every module builds on, has
 * no repository and may import none.
 */
/**
 * The files of a module that hold its SQL: `repository.ts`, or, where one would hold several jobs,
 * `<part>-repository.ts` (e.g. `delivery-repository.ts`); and `<name>-read-model.ts`, a declared read
 * across other modules' tables (see READ_MODELS).
 */
const isRepositoryFile = (file: string) => /(?:^|-)repository\.ts$/.test(path.basename(file))
const isReadModelFile = (file: string) => /-read-model\.ts$/.test(path.basename(file))
const holdsSql = (file: string) => isRepositoryFile(file) || isReadModelFile(file)

describe('module boundaries', () => {
  const moduleOf = (relative: string) => {
    const [layer, feature] = relative.split(path.sep)
    return layer === 'modules' ? feature : undefined
  }
  const isRepository = (relative: string) => moduleOf(relative) !== undefined && holdsSql(relative)

  /** A route file that imports a repository (its own module's too): routes call their service. */
  const routesSkippingTheirService = (files: string[]) =>
    files.flatMap((file) => {
      const relative = path.relative(SRC, file)
      if (path.basename(relative) !== 'routes.ts') return []
      return localImports(file)
        .filter(({ target }) => holdsSql(target))
        .map(({ target }) => `${relative} imports ${target}: a route calls its service`)
    })

  it('every route calls its service: no routes.ts imports a repository', () => {
    expect(routesSkippingTheirService(sourceFiles(SRC))).toEqual([])
  })

  it('finds a route that skips its service', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'routes-'))
    try {
      const routes = path.join(dir, 'routes.ts')
      writeFileSync(routes, "import { findThing } from './repository.js'\nexport const r = findThing\n")
      writeFileSync(path.join(dir, 'repository.ts'), 'export const findThing = 1\n')
      const relative = path.relative(SRC, routes)
      expect(routesSkippingTheirService([routes])).toEqual([
        `${relative} imports ${path.relative(SRC, path.join(dir, 'repository.ts'))}: a route calls its service`,
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("no file imports another module's repository", () => {
    const violations = sourceFiles(SRC).flatMap((file) => {
      const relative = path.relative(SRC, file)
      return localImports(file)
        .filter(({ target }) => isRepository(target) && moduleOf(target) !== moduleOf(relative))
        .map(({ target }) => `${relative} imports ${target}: import its module's service instead`)
    })
    expect(violations).toEqual([])
  })
})

/**
 * Every table has one owner, the module whose repository reads and writes it; the tables of `db/` and
 * `http/` (settings, idempotency keys) belong to no module. Within a module only its repository files
 * and its read models hold SQL (query builders and `sql` templates).
 */
const TABLE_OWNERS: Record<string, string> = {
  accounts: 'keys',
  api_keys: 'keys',
  events: 'events',
  operators: 'operators',
  locations: 'locations',
  devices: 'devices',
  device_pairing_codes: 'devices',
  pin_keys: 'devices',
  sessions: 'sessions',
  session_revisions: 'sessions',
  scans: 'scans',
  pay_periods: 'pay-periods',
  pay_rules: 'pay-rules',
  closed_timesheet_days: 'pay-periods',
  webhook_endpoints: 'webhooks',
  webhook_deliveries: 'webhooks',
  webhook_attempts: 'webhooks',
  users: 'users',
  memberships: 'users',
  auth_sessions: 'users',
  user_tokens: 'users',
  sign_in_failures: 'users',
  sso_identities: 'users',
  audit_log: 'users',
}

/**
 * Reads across modules where reading across is the point (a timesheet is sessions seen with their
 * operators, locations and pay rules), each in the module whose job that read is, in a file named
 * `<name>-read-model.ts`, with the other modules' tables it reads. A read model writes
 * nothing.
 */
const READ_MODELS: Record<string, string[]> = {
  'modules/devices/device-zone-read-model.ts': ['locations'],
  'modules/scans/scan-site-read-model.ts': ['devices'],
  'modules/timesheets/timesheet-read-model.ts': [
    'closed_timesheet_days',
    'locations',
    'operators',
    'pay_periods',
    'pay_rules',
    'sessions',
  ],
}

const QUERY_START =
  /\.(?:selectFrom|insertInto|updateTable|deleteFrom|innerJoin|leftJoin)\(\s*'([a-z_]+)|\bcompiled(?:Insert|Update)?\(\s*'([a-z_]+)/g

/** A `sql` template's text, and in it a table after FROM, JOIN, INTO or UPDATE. */
const SQL_TEMPLATE = /\bsql(?:<[^>]*>)?`([^`]*)`/g
const TEMPLATE_TABLE = /\b(?:from|join|into|update)\s+"?([a-z_]+)"?/gi

/**
 * The tables a file's SQL names: the query builder's calls that start a query or join a table, and
 * the tables of the schema that its `sql` templates read or write.
 */
function tablesNamed(text: string): string[] {
  const built = [...text.matchAll(QUERY_START)].map((m) => (m[1] ?? m[2]) as string)
  const templated = [...text.matchAll(SQL_TEMPLATE)]
    .flatMap((template) => [...(template[1] as string).matchAll(TEMPLATE_TABLE)])
    .map((m) => (m[1] as string).toLowerCase())
    .filter((table) => table in TABLE_OWNERS)
  return [...new Set([...built, ...templated])].sort()
}

/** `<module> → <table>` for each table of another module that a module's repository files name. */
function foreignTables(files: { file: string; feature: string; text: string }[]): string[] {
  const foreign = files
    .filter((f) => isRepositoryFile(f.file))
    .flatMap((f) =>
      tablesNamed(f.text)
        .filter((table) => TABLE_OWNERS[table] !== f.feature)
        .map((table) => `${f.feature} → ${table}`),
    )
  return [...new Set(foreign)].sort()
}

describe('table owners', () => {
  const moduleFiles = sourceFiles(path.join(SRC, 'modules')).map((file) => ({
    file,
    relative: path.relative(SRC, file),
    feature: path.relative(SRC, file).split(path.sep)[1] as string,
    text: readFileSync(file, 'utf8'),
  }))

  it('every table of the schema has an owner, and every owner is a module', () => {
    const schema = readFileSync(path.join(SRC, 'db/schema.ts'), 'utf8')
    const tables = [
      ...(/export interface Database \{([^}]*)\}/.exec(schema)?.[1] ?? '').matchAll(/^\s+(\w+):/gm),
    ]
      .map((m) => m[1] as string)
      .filter((table) => table !== 'settings' && table !== 'idempotency_keys')
    expect(tables.length).toBeGreaterThan(10)
    expect(tables.filter((table) => !(table in TABLE_OWNERS))).toEqual([])
    const modules = new Set(moduleFiles.map((f) => f.feature))
    expect(Object.values(TABLE_OWNERS).filter((owner) => !modules.has(owner))).toEqual([])
  })

  it("a repository names only its module's tables", () => {
    expect(foreignTables(moduleFiles)).toEqual([])
  })

  it("finds a repository that reads another module's table, built or written as SQL", () => {
    const file = (name: string, text: string) => ({ file: `modules/scans/${name}`, feature: 'scans', text })
    expect(
      foreignTables([
        file(
          'repository.ts',
          "trx.selectFrom('scans').innerJoin('operators as o', 'o.id', 'scans.operator_id')",
        ),
        file(
          'batch-repository.ts',
          'await sql`select id from sessions where operator_id = $' + '{id} for update`.execute(trx)',
        ),
        file('service.ts', "trx.selectFrom('devices')"),
      ]),
    ).toEqual(['scans → operators', 'scans → sessions'])
  })

  it('a read model reads only the tables it declares, and writes none', () => {
    const readModels = moduleFiles.filter((f) => isReadModelFile(f.file))
    expect(readModels.map((f) => f.relative).sort()).toEqual(Object.keys(READ_MODELS).sort())
    for (const f of readModels) {
      const foreign = tablesNamed(f.text).filter((table) => TABLE_OWNERS[table] !== f.feature)
      expect(foreign, f.relative).toEqual([...(READ_MODELS[f.relative] ?? [])].sort())
      expect(
        /\.(?:insertInto|updateTable|deleteFrom)\(|\bcompiled(?:Insert|Update)\(/.test(f.text),
        f.relative,
      ).toBe(false)
    }
  })

  it('in a module, only its repositories and read models hold SQL', () => {
    const elsewhere = moduleFiles
      .filter((f) => !holdsSql(f.file))
      .filter((f) => tablesNamed(f.text).length > 0 || /\bsql`/.test(f.text))
      .map((f) => f.relative)
    expect(elsewhere).toEqual([])
  })

  it('reads the tables a query names, joins and compiled statements included', () => {
    const text = [
      "db.selectFrom('sessions as s').innerJoin('operators as o', 'o.id', 's.operator_id')",
      "trx.insertInto(\n  'scans')",
      "const insertRow = compiledInsert('devices', { id: true })",
      'sql`update pay_rules set x = 1 from generate_series(1, 2)`',
      "db.selectFrom(tableName).where('events', '=', 1)",
    ].join('\n')
    expect(tablesNamed(text)).toEqual(['devices', 'operators', 'pay_rules', 'scans', 'sessions'])
  })
})

/**
 * Runtime import cycles known today, each a set of files that import one another: the test fails on
 * any other cycle, and on one of these that grows. None since issue 24 item 2 removed db/'s.
 */
const KNOWN_CYCLES: string[][] = []

/**
 * The files that lie on a cycle of imports (runtime ones, or with `typeImports` type-only ones too),
 * one sorted list per cycle, relative to src/: the strongly connected components of the import graph
 * with more than one file (Tarjan's algorithm), or a file that imports itself.
 */
function importCycles(files: string[], { typeImports = false } = {}): string[][] {
  const graph = new Map(
    files.map((file) => [
      path.relative(SRC, file),
      localImports(file)
        .filter((i) => typeImports || !i.typeOnly)
        .map((i) => i.target),
    ]),
  )
  const order = new Map<string, number>()
  const lowest = new Map<string, number>()
  const stack: string[] = []
  const cycles: string[][] = []
  const visit = (file: string) => {
    const index = order.size
    order.set(file, index)
    lowest.set(file, index)
    stack.push(file)
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue
      if (!order.has(target)) {
        visit(target)
        lowest.set(file, Math.min(lowest.get(file) as number, lowest.get(target) as number))
      } else if (stack.includes(target)) {
        lowest.set(file, Math.min(lowest.get(file) as number, order.get(target) as number))
      }
    }
    if (lowest.get(file) !== index) return
    const component = stack.splice(stack.indexOf(file))
    if (component.length > 1 || graph.get(file)?.includes(file)) cycles.push(component.sort())
  }
  for (const file of graph.keys()) if (!order.has(file)) visit(file)
  return cycles
}

describe('import cycles', () => {
  const cycles = importCycles(sourceFiles(SRC))

  it('src/ has no runtime import cycle but the known ones', () => {
    const unknown = cycles.filter(
      (cycle) => !KNOWN_CYCLES.some((known) => cycle.every((file) => known.includes(file))),
    )
    expect(unknown).toEqual([])
  })

  it('src/ and console/src have no import cycle, type imports included', () => {
    const files = [...sourceFiles(SRC), ...sourceFiles(path.resolve(SRC, '../console/src'))]
    expect(importCycles(files, { typeImports: true })).toEqual([])
  })

  it('finds a cycle, through a re-export too, and leaves out type-only imports unless asked', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cycles-'))
    const write = (name: string, text: string) => {
      writeFileSync(path.join(dir, name), text)
      return path.join(dir, name)
    }
    try {
      const files = [
        write('a.ts', "import { b } from './b.js'\nimport type { D } from './d.js'\nexport const a = b\n"),
        write('b.ts', "export { c as b } from './c.js'\n"),
        write('c.ts', "import './a.js'\nexport const c = 1\n"),
        write('d.ts', "import { a } from './a.js'\nexport type D = typeof a\n"),
      ]
      const relative = (name: string) => path.relative(SRC, path.join(dir, name))
      expect(importCycles(files)).toEqual([[relative('a.ts'), relative('b.ts'), relative('c.ts')]])
      expect(importCycles(files, { typeImports: true })).toEqual([
        [relative('a.ts'), relative('b.ts'), relative('c.ts'), relative('d.ts')],
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
