/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, a `.cpuprofile` JSON file): where the process
 * spent its time, as self time by category and by function, and as inclusive time by package.
 *
 *   npx tsx bench/profile-summary.ts <file.cpuprofile>… [--top 25] [--from-ms 5000] [--sum]
 *
 * `--sum` reads the files as one profile (the test workers' profiles, test/helpers/cpu-profile-setup.ts).
 *
 * `--from-ms` leaves out the samples of the first milliseconds (start-up, warm-up).
 *
 * Categories come from each frame's script: `node:*` (Node.js internals, by module), a package
 * under node_modules (by package name), the service's own code (`src/<folder>`), or V8's
 * `(garbage collector)` / `(program)` / `(idle)`. Native frames (no script: C++ bindings such as
 * better-sqlite3's `run`/`all`, or V8 builtins like `JSON.stringify`) are charged to the category
 * of the JavaScript that called them, as `native ← <category>`, so that a statement's execution
 * counts for the driver that ran it rather than vanishing into one "native" bucket.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
  columnNumber: number
}

interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}

export interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

const SPECIAL = new Set(['(garbage collector)', '(program)', '(idle)', '(root)'])

/** `node:internal/streams/writable` → `node:streams`; `…/node_modules/@fastify/x/…` → `@fastify/x`. */
export function categoryOfUrl(url: string): string | undefined {
  if (url === '') return undefined
  if (url.startsWith('node:')) {
    const parts = url.slice('node:'.length).split('/')
    const name = parts[0] === 'internal' ? (parts[1] ?? 'internal') : parts[0]
    return `node:${(name ?? '').replace(/\.js$/, '')}`
  }
  const modules = url.lastIndexOf('/node_modules/')
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/')
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? 'node_modules')
  }
  const src = url.match(/\/(?:dist\/)?src\/(.*)$/)
  if (src?.[1]) {
    const folders = src[1].split('/')
    // src/modules/<name>/… by module; src/<folder>/… by folder; src/<file> by file.
    if (folders[0] === 'modules' && folders.length > 2) return `src/modules/${folders[1]}`
    return `src/${folders[0]}`
  }
  if (url.includes('/bench/')) return 'bench'
  return 'other scripts'
}

function shortLocation(frame: CallFrame): string {
  if (frame.url === '') return ''
  const url = frame.url.replace(/^file:\/\//, '')
  const modules = url.lastIndexOf('/node_modules/')
  const short =
    modules >= 0
      ? url.slice(modules + '/node_modules/'.length)
      : url.startsWith('node:')
        ? url
        : url.replace(/^.*\/(dist\/)?(src|bench)\//, '$2/')
  return `${short}:${frame.lineNumber + 1}`
}

interface Row {
  name: string
  ms: number
}

export interface ProfileSummary {
  totalMs: number
  idleMs: number
  categories: Row[]
  functions: Row[]
  inclusive: Row[]
}

/**
 * `fromMs`: only samples taken at least this long after the profile started (to leave out
 * start-up and warm-up: module loading, schema compilation, JIT).
 */
export function summariseProfile(profile: CpuProfile, fromMs = 0): ProfileSummary {
  const byId = new Map<number, ProfileNode>()
  const parent = new Map<number, number>()
  for (const node of profile.nodes) {
    byId.set(node.id, node)
    for (const child of node.children ?? []) parent.set(child, node.id)
  }

  // The category of each node: its own script's, or for a native frame the nearest caller's.
  const category = new Map<number, string>()
  const categoryOf = (id: number): string => {
    const known = category.get(id)
    if (known !== undefined) return known
    const frame = byId.get(id)?.callFrame
    let result: string
    if (!frame) result = 'unknown'
    else if (SPECIAL.has(frame.functionName)) result = frame.functionName
    else {
      const own = categoryOfUrl(frame.url)
      if (own !== undefined) result = own
      else {
        const up = parent.get(id)
        const callerCategory = up === undefined ? 'unknown' : categoryOf(up)
        result = callerCategory.startsWith('native ← ') ? callerCategory : `native ← ${callerCategory}`
      }
    }
    category.set(id, result)
    return result
  }

  // Self time per node: each sample's time delta goes to the node it hit.
  const self = new Map<number, number>()
  let atMs = 0
  profile.samples.forEach((id, i) => {
    const deltaMs = (profile.timeDeltas[i] ?? 0) / 1000
    atMs += deltaMs
    if (atMs >= fromMs) self.set(id, (self.get(id) ?? 0) + deltaMs)
  })

  const categories = new Map<string, number>()
  const functions = new Map<string, number>()
  let totalMs = 0
  let idleMs = 0
  for (const [id, ms] of self) {
    const frame = byId.get(id)?.callFrame
    if (!frame) continue
    totalMs += ms
    if (frame.functionName === '(idle)') idleMs += ms
    const cat = categoryOf(id)
    categories.set(cat, (categories.get(cat) ?? 0) + ms)
    const where = shortLocation(frame)
    const name = `${frame.functionName || '(anonymous)'}${where ? ` ${where}` : ` [${cat}]`}`
    functions.set(name, (functions.get(name) ?? 0) + ms)
  }

  // Inclusive time per category: a sample counts once for every category on its stack.
  const inclusive = new Map<string, number>()
  const stackCategories = new Map<number, Set<string>>()
  const categoriesOnStack = (id: number): Set<string> => {
    const known = stackCategories.get(id)
    if (known) return known
    const up = parent.get(id)
    const set = new Set(up === undefined ? [] : categoriesOnStack(up))
    const cat = categoryOf(id)
    if (cat !== '(root)' && !cat.startsWith('native ← ')) set.add(cat)
    stackCategories.set(id, set)
    return set
  }
  for (const [id, ms] of self) {
    for (const cat of categoriesOnStack(id)) inclusive.set(cat, (inclusive.get(cat) ?? 0) + ms)
  }

  const sorted = (map: Map<string, number>) =>
    [...map].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms)
  return {
    totalMs,
    idleMs,
    categories: sorted(categories),
    functions: sorted(functions),
    // Node.js internals are left out here: on most stacks they are only the event loop's and
    // promises' trampolines (processTicksAndRejections), not work of their own.
    inclusive: sorted(inclusive).filter((row) => !SPECIAL.has(row.name) && !row.name.startsWith('node:')),
  }
}

/** The summary as Markdown tables; percentages are of the busy (non-idle) time. */
export function formatSummary(summary: ProfileSummary, top = 20): string {
  const busy = summary.totalMs - summary.idleMs
  const pct = (ms: number) => `${((100 * ms) / busy).toFixed(1)} %`
  const table = (title: string, rows: Row[]) => [
    '',
    `| ${title} | ms | of busy |`,
    '|---|---:|---:|',
    ...rows
      .slice(0, top)
      .map((r) => `| ${r.name.replaceAll('|', '\\|')} | ${r.ms.toFixed(0)} | ${pct(r.ms)} |`),
  ]
  return [
    `sampled ${(summary.totalMs / 1000).toFixed(1)} s, idle ${(summary.idleMs / 1000).toFixed(1)} s, busy ${(busy / 1000).toFixed(1)} s`,
    ...table(
      'self time by category',
      summary.categories.filter((r) => r.name !== '(idle)'),
    ),
    ...table(
      'self time by function',
      summary.functions.filter((r) => !r.name.startsWith('(idle)')),
    ),
    ...table('inclusive time by package / service folder (once per sample)', summary.inclusive),
  ].join('\n')
}

/** Several profiles as one (`--sum`: the test workers' profiles, one a test file). */
export function sumSummaries(summaries: ProfileSummary[]): ProfileSummary {
  const rows = (pick: (summary: ProfileSummary) => Row[]) => {
    const totals = new Map<string, number>()
    for (const summary of summaries)
      for (const row of pick(summary)) totals.set(row.name, (totals.get(row.name) ?? 0) + row.ms)
    return [...totals].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms)
  }
  return {
    totalMs: summaries.reduce((sum, summary) => sum + summary.totalMs, 0),
    idleMs: summaries.reduce((sum, summary) => sum + summary.idleMs, 0),
    categories: rows((summary) => summary.categories),
    functions: rows((summary) => summary.functions),
    inclusive: rows((summary) => summary.inclusive),
  }
}

export function readProfile(file: string): CpuProfile {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile
}

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      top: { type: 'string', default: '20' },
      'from-ms': { type: 'string', default: '0' },
      sum: { type: 'boolean', default: false },
    },
  })
  const top = Number(values.top)
  const fromMs = Number(values['from-ms'])
  if (positionals.length === 0 || !Number.isInteger(top) || top < 1 || !(fromMs >= 0)) {
    console.error('usage: tsx bench/profile-summary.ts <file.cpuprofile>… [--top N] [--from-ms MS] [--sum]')
    process.exit(2)
  }
  if (values.sum) {
    const summaries = positionals.map((file) => summariseProfile(readProfile(file), fromMs))
    console.log(`## ${positionals.length} profiles summed\n`)
    console.log(formatSummary(sumSummaries(summaries), top))
    return
  }
  for (const file of positionals) {
    console.log(`## ${path.basename(file)}\n`)
    console.log(formatSummary(summariseProfile(readProfile(file), fromMs), top))
    console.log('')
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
