import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { ROOT } from './helpers/process.js'

/**
 * Every fenced code block of the documentation is run, checked, or explicitly marked as not runnable,
 * so that no sample rots silently. An HTML comment on the line right before a fence says how to treat it:
 *
 * - `<!-- not-run: <reason> -->`: skipped (a reason is required).
 * - `<!-- file: <name> -->`: the block is written to `<name>` in the document's working directory.
 * - `<!-- output -->`: the block is what the previous runnable block prints: JSON blocks are compared as
 *   parsed values, other blocks as text (trailing spaces ignored).
 * - `<!-- prelude ... -->` (ts blocks): code run before the block, e.g. the variables it uses.
 *
 * Unmarked blocks: `sh` and `ts` blocks are run, `json` blocks must parse; any other language fails the
 * test. The `sh` and `ts` blocks of one document run in order in one `bash -euo pipefail` session against a
 * real service (BASE and KEY, the same as ATTENDANCE_BASE_URL and ATTENDANCE_API_KEY, and a free HOOK_PORT in
 * the environment; each document has an account of its own),
 * from a working directory that has `packages/` and `node_modules/` of this repository, so commands written
 * for a checkout work. A `ts` block is written to a file and run with `node --import tsx`. Every runnable
 * block's output that starts like JSON must be JSON values, none of them an error envelope.
 */

const DOCUMENTS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
  'packages/client/README.md',
]

interface Block {
  document: string
  /** 1-based line of the opening fence. */
  line: number
  lang: string
  code: string
  marker: { kind: 'not-run' | 'file' | 'output' | 'prelude' | 'invalid'; value: string } | undefined
}

function parseBlocks(document: string): Block[] {
  const lines = fs.readFileSync(path.join(ROOT, document), 'utf8').split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i] as string)
    if (!open) continue
    const fence = open[2] as string
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && !(lines[i] as string).trim().startsWith(fence); i++)
      body.push(lines[i] as string)
    if (i >= lines.length) throw new Error(`${document}:${start + 1}: unclosed code fence`)
    blocks.push({
      document,
      line: start + 1,
      lang: (open[3] as string).toLowerCase(),
      code: `${body.join('\n')}\n`,
      marker: markerBefore(lines, start),
    })
  }
  return blocks
}

/** The HTML comment ending on the line right before the fence, if any. */
function markerBefore(lines: string[], fenceIndex: number): Block['marker'] {
  const previous = lines[fenceIndex - 1]?.trimEnd() ?? ''
  if (!previous.endsWith('-->')) return undefined
  let first = fenceIndex - 1
  while (first >= 0 && !(lines[first] as string).includes('<!--')) first--
  if (first < 0) return { kind: 'invalid', value: previous }
  const text = lines
    .slice(first, fenceIndex)
    .join('\n')
    .replace(/^[\s\S]*?<!--/, '')
    .replace(/-->\s*$/, '')
    .trim()
  const match = /^(not-run|file|output|prelude)\b:?\s*([\s\S]*)$/.exec(text)
  if (!match) return { kind: 'invalid', value: text }
  return { kind: match[1] as 'not-run' | 'file' | 'output' | 'prelude', value: (match[2] as string).trim() }
}

const where = (block: Block) => `${block.document}:${block.line}`

/**
 * The JSON values of an output: concatenated values (two curl answers) and values between lines of text
 * (a line that starts with `{` or `[` starts a value, which must parse); throws on a value that does not.
 */
function parseJsonSequence(text: string): unknown[] {
  const values: unknown[] = []
  let rest = text.trim()
  while (rest.length > 0) {
    if (!startsLikeJson(rest)) {
      const newline = rest.indexOf('\n')
      rest = newline < 0 ? '' : rest.slice(newline + 1).trim()
      continue
    }
    let depth = 0
    let inString = false
    let end = -1
    for (let i = 0; i < rest.length; i++) {
      const c = rest[i]
      if (inString) {
        if (c === '\\') i++
        else if (c === '"') inString = false
      } else if (c === '"') inString = true
      else if (c === '{' || c === '[') depth++
      else if (c === '}' || c === ']') {
        depth--
        if (depth === 0) {
          end = i + 1
          break
        }
      }
    }
    if (end < 0) throw new Error(`not JSON: ${rest.slice(0, 200)}`)
    values.push(JSON.parse(rest.slice(0, end)))
    rest = rest.slice(end).trim()
  }
  return values
}

const startsLikeJson = (text: string) => /^\s*[[{]/.test(text)

async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

interface SessionResult {
  code: number | null
  stdout: string
  stderr: string
  /** Stdout of each runnable block, by index in the document's block list. */
  outputs: Map<number, string>
}

/** Runs the document's runnable blocks in order in one bash session. */
async function runDocument(
  blocks: Block[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<SessionResult> {
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-'))
  fs.symlinkSync(path.join(ROOT, 'packages'), path.join(workdir, 'packages'))
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(workdir, 'node_modules'))
  const outdir = path.join(workdir, '.out')
  fs.mkdirSync(outdir)
  const script: string[] = [
    'set -euo pipefail',
    // Background processes a sample starts (a webhook receiver) never outlive the session.
    `trap 'kill $(jobs -p) 2>/dev/null || true' EXIT`,
  ]
  const run: number[] = []
  blocks.forEach((block, index) => {
    if (block.marker?.kind === 'file') {
      fs.writeFileSync(path.join(workdir, block.marker.value), block.code)
      return
    }
    if (block.marker !== undefined && block.marker.kind !== 'prelude') return
    const out = path.join(outdir, `${index}.out`)
    script.push(`echo ${JSON.stringify(where(block))} > ${JSON.stringify(path.join(outdir, 'current'))}`)
    if (block.lang === 'sh') {
      script.push(`{\n${block.code}\n} > ${JSON.stringify(out)}`)
    } else if (block.lang === 'ts') {
      const file = path.join(workdir, `block-${index}.mts`)
      const prelude = block.marker?.kind === 'prelude' ? `${block.marker.value}\n` : ''
      fs.writeFileSync(file, `${prelude}${block.code}`)
      script.push(`node --import tsx ${JSON.stringify(file)} > ${JSON.stringify(out)}`)
    } else return
    run.push(index)
  })
  const child = spawn('bash', ['-c', script.join('\n')], {
    cwd: workdir,
    env: {
      ...process.env,
      PATH: `${path.join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
      // npx must never fetch a package: everything a sample runs is in this repository.
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
      ...env,
    },
    detached: true,
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const timer = setTimeout(() => {
    stderr += `\n(killed after ${timeoutMs} ms)`
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
  }, timeoutMs)
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()))
  const code = await new Promise<number | null>((resolve) => child.on('exit', (exit) => resolve(exit)))
  clearTimeout(timer)
  // Whatever a sample left running (its process group is the session's) ends with the session.
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
  } catch {
    // The group is already gone.
  }
  await closed
  const outputs = new Map<number, string>()
  for (const index of run) {
    const file = path.join(outdir, `${index}.out`)
    if (fs.existsSync(file)) outputs.set(index, fs.readFileSync(file, 'utf8'))
  }
  if (code !== 0) {
    const current = fs.existsSync(path.join(outdir, 'current'))
      ? fs.readFileSync(path.join(outdir, 'current'), 'utf8').trim()
      : '?'
    stderr = `block at ${current} failed\n${stderr}`
  }
  fs.rmSync(workdir, { recursive: true, force: true })
  return { code, stdout, stderr, outputs }
}

const documents = DOCUMENTS.map((document) => ({ document, blocks: parseBlocks(document) }))

describe('documentation samples', () => {
  let t: TestApp
  let base: string

  beforeAll(async () => {
    expect(
      fs.existsSync(path.join(ROOT, 'packages/client/dist/index.js')),
      'packages/client/dist is missing: run `npm run build -w @attendance/client` (npm test does)',
    ).toBe(true)
    t = await buildTestApp({ webhookAllowPrivateUrls: true, worker: 'inline', webhookBackoffScale: 0.001 })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(t.app.server.address() as net.AddressInfo).port}`
  })

  afterAll(async () => {
    await t?.close()
  })

  it('the guide is linked first in the README', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')
    const links = [...readme.matchAll(/^- \[[^\]]*\]\(([^)]+)\)/gm)].map((match) => match[1])
    expect(links[0]).toBe('docs/guide.md')
  })

  describe('the guide after the README (a newcomer runs both, in that order)', () => {
    const guide = fs.readFileSync(path.join(ROOT, 'docs/guide.md'), 'utf8')
    const guideBlocks = parseBlocks('docs/guide.md').filter((block) => block.lang === 'sh')
    const identsCreated = (text: string) =>
      new Set([...text.matchAll(/\\?"ident\\?":\s*\\?"([^"\\]+)/g)].map((m) => m[1]))

    it('starts the service on a database of its own, so that its first list is empty as it says', () => {
      const start = guideBlocks.find((block) => /\bnpm start\b/.test(block.code))
      expect(start?.code).toMatch(/\bDATABASE_URL=sqlite:\S+ npm start\b/)
      expect(start?.code).not.toMatch(/DATABASE_URL=sqlite:data\/attendance\.db\b/)
    })

    it('creates no operator the README creates (a second create would answer 409)', () => {
      const readme = identsCreated(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'))
      const ours = identsCreated(guideBlocks.map((block) => block.code).join('\n'))
      expect(readme.size).toBeGreaterThan(0)
      expect(ours.size).toBeGreaterThan(0)
      expect([...ours].filter((ident) => readme.has(ident))).toEqual([])
    })

    it('prints the error of a failed call instead of nulls: every jq filter names it', () => {
      const filters = guideBlocks.flatMap((block) =>
        [...block.code.matchAll(/\bjq\s+(?:-\w+\s+)*('[^']*'|\S+)/g)].map((m) => `${where(block)}: ${m[1]}`),
      )
      expect(filters.length).toBeGreaterThan(10)
      expect(filters.filter((filter) => !/\berror\b/.test(filter))).toEqual([])
    })

    it('has the reader save their own code in a folder of their own, outside the repository', () => {
      const saves = [...guide.matchAll(/Save this as `([^`]+)` in `([^`]+)`/g)]
      expect(saves.length).toBe(guide.split('Save this as').length - 1)
      for (const [, , folder] of saves) {
        expect(folder).toMatch(/^~\//)
        const made = guideBlocks.find((block) => block.code.includes(`mkdir -p ${folder} && cd ${folder}`))
        expect(made, `a block that makes and enters ${folder}`).toBeDefined()
      }
    })
  })

  for (const { document, blocks } of documents) {
    it(`${document}: every code block is runnable, checked, or marked`, () => {
      const problems: string[] = []
      blocks.forEach((block, index) => {
        const marker = block.marker
        if (marker?.kind === 'invalid')
          problems.push(`${where(block)}: unknown marker <!-- ${marker.value} -->`)
        else if (marker?.kind === 'not-run' && marker.value === '')
          problems.push(`${where(block)}: not-run needs a reason`)
        else if (marker?.kind === 'file' && !/^[\w.-]+$/.test(marker.value))
          problems.push(`${where(block)}: bad file name ${marker.value}`)
        else if (marker?.kind === 'prelude' && block.lang !== 'ts')
          problems.push(`${where(block)}: a prelude is for ts blocks`)
        else if (marker?.kind === 'output' && !blocks.slice(0, index).some(isRunnable))
          problems.push(`${where(block)}: an output block with no runnable block before it`)
        else if (marker === undefined && !['sh', 'ts', 'json'].includes(block.lang))
          problems.push(
            `${where(block)}: a \`${block.lang || 'plain'}\` block cannot be run: mark it <!-- not-run: reason -->`,
          )
      })
      expect(problems).toEqual([])
    })

    const jsonBlocks = blocks.filter((block) => block.lang === 'json' && block.marker === undefined)
    if (jsonBlocks.length > 0) {
      it(`${document}: its JSON samples parse`, () => {
        for (const block of jsonBlocks) {
          expect(() => JSON.parse(block.code), where(block)).not.toThrow()
        }
      })
    }

    if (blocks.some(isRunnable)) {
      it(`${document}: its sh and ts samples run against the service`, { timeout: 60_000 }, async () => {
        const key = await t.key({ account: `docs-${document.replace(/\W+/g, '-')}` })
        const result = await runDocument(
          blocks,
          {
            BASE: base,
            KEY: key.secret,
            ATTENDANCE_BASE_URL: base,
            ATTENDANCE_API_KEY: key.secret,
            HOOK_PORT: String(await freePort()),
          },
          50_000,
        )
        expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0)
        blocks.forEach((block, index) => {
          const output = result.outputs.get(index)
          if (output !== undefined && startsLikeJson(output)) {
            const values = parseJsonSequence(output)
            for (const value of values) {
              expect(
                value !== null && typeof value === 'object' && 'error' in value,
                `${where(block)} printed an error: ${JSON.stringify(value)}`,
              ).toBe(false)
            }
          }
          if (block.marker?.kind === 'output') {
            const source = blocks.slice(0, index).findLastIndex(isRunnable)
            const actual = result.outputs.get(source) ?? ''
            if (block.lang === 'json')
              expect(parseJsonSequence(actual), `${where(block)} vs what it shows`).toEqual(
                parseJsonSequence(block.code),
              )
            else expect(trimLines(actual), `${where(block)} vs what it shows`).toBe(trimLines(block.code))
          }
        })
      })
    }
  }
})

function isRunnable(block: Block): boolean {
  return (
    (block.lang === 'sh' || block.lang === 'ts') &&
    (block.marker === undefined || block.marker.kind === 'prelude')
  )
}

function trimLines(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim()
}
