import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import type net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { freePort, ROOT } from './helpers/process.js'

/**
 * Every fenced code block of the documentation is run, checked, or explicitly marked as not runnable,
 * so that no sample rots silently. An HTML comment on the line right before a fence says how to treat it:
 *
 * - `<!-- not-run: <reason> -->`: skipped (a reason is required).
 * - `<!-- file: <name> -->`: the reader saves the block as `<name>` in the folder they are in at that
 *   point; the block is written there, in its turn (a later block runs it, as the document says).
 * - `<!-- offline: <command> -->`: the block fetches from the npm registry (`npm install … tsx`); this test
 *   never goes online, so the session runs `<command>` in its place, which installs the same packages from
 *   this checkout (`$REPO/…`).
 * - `<!-- output -->`: the block is what the previous runnable block prints: JSON blocks are compared as
 *   parsed values, other blocks as text (trailing spaces ignored).
 * - `<!-- prelude ... -->` (ts blocks): code run before the block, e.g. the variables it uses.
 *
 * Unmarked blocks: `sh` and `ts` blocks are run, `json` blocks must parse; any other language fails the
 * test. The blocks of one document run as a reader types them: in order, in one `bash -euo pipefail`
 * session, against a real service, in a fresh folder outside the repository that is also the session's
 * HOME (so `~/…` is in it too); nothing of the checkout is on PATH or in the folder. The environment has
 * what the documents tell the reader to set: BASE and KEY (ATTENDANCE_BASE_URL and ATTENDANCE_API_KEY,
 * the same; each document has an account of its own), REPO (the checkout: this repository, read only),
 * and a free HOOK_PORT. An unmarked `ts` block is a sample of the reader's project: saved in the current
 * folder as a `.ts` file and run with `node --import tsx`, as its document says. Every runnable block's
 * output that starts like JSON must be JSON values, none of them an error envelope. A session leaves no new
 * file in the repository (`git status`).
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
  marker: { kind: MarkerKind | 'invalid'; value: string } | undefined
}

const MARKER_KINDS = ['not-run', 'file', 'offline', 'output', 'prelude'] as const
type MarkerKind = (typeof MARKER_KINDS)[number]

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
  const match = new RegExp(`^(${MARKER_KINDS.join('|')})\\b:?\\s*([\\s\\S]*)$`).exec(text)
  if (!match) return { kind: 'invalid', value: text }
  return { kind: match[1] as MarkerKind, value: (match[2] as string).trim() }
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

interface SessionResult {
  code: number | null
  stdout: string
  stderr: string
  /** Stdout of each runnable block, by index in the document's block list. */
  outputs: Map<number, string>
}

/**
 * The repository's untracked files (`git status` entries `??`, one by one) that a session could have left:
 * what a sample leaves behind in a checkout is new files (headers.txt, receiver.log). A session runs
 * outside the repository and reaches it only through `$REPO`: files at its root, and under the top folders
 * the document's runnable blocks name after `$REPO/` (everywhere if one names `$REPO` alone). The rest is
 * other work in the same working tree, which goes on while a session runs (as do changes to tracked files).
 */
function untrackedFiles(blocks: Block[]): Set<string> {
  const commands = blocks
    .filter(isRunnable)
    .map((block) => (block.marker?.kind === 'offline' ? block.marker.value : block.code))
  const named = commands.flatMap((code) => [...code.matchAll(/\$\{?REPO\}?(\/[\w.-]+)?/g)].map((m) => m[1]))
  const reachable = (file: string) =>
    !file.includes('/') ||
    named.some((folder) => folder === undefined || file.startsWith(`${folder.slice(1)}/`))
  const out = execFileSync('git', ['status', '--porcelain=v1', '-z', '--untracked-files=all'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  return new Set(out.split('\0').filter((entry) => entry.startsWith('?? ') && reachable(entry.slice(3))))
}

/**
 * The test's environment without npm's: under `npm test` it names the repository as the project
 * (npm_config_local_prefix, INIT_CWD, …), so an `npm` a sample runs would act on the repository.
 */
function readerEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && name !== 'INIT_CWD'),
  )
}

/** How a document tells the reader to run its unnamed ts samples (a block with `file:` is run as it says). */
const RUN_SAMPLE = 'node --import tsx'

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`

/**
 * Runs the document's runnable blocks in order in one bash session, in a fresh folder outside the
 * repository (the reader's HOME, where the session starts).
 */
async function runDocument(
  blocks: Block[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<SessionResult> {
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-'))
  const home = path.join(workdir, 'home')
  // The test's own files: the blocks' sources and outputs, out of the reader's way.
  const outdir = path.join(workdir, 'out')
  fs.mkdirSync(home)
  fs.mkdirSync(outdir)
  const script: string[] = [
    'set -euo pipefail',
    // Background processes a sample starts (a webhook receiver) never outlive the session.
    `trap 'kill $(jobs -p) 2>/dev/null || true' EXIT`,
  ]
  const run: number[] = []
  blocks.forEach((block, index) => {
    const marker = block.marker
    const source = path.join(outdir, `${index}.block`)
    if (marker?.kind === 'file') {
      fs.writeFileSync(source, block.code)
      script.push(`cp ${quote(source)} ${quote(marker.value)}`)
      return
    }
    const out = path.join(outdir, `${index}.out`)
    let command: string
    if (marker?.kind === 'offline') command = marker.value
    else if (marker !== undefined && marker.kind !== 'prelude') return
    else if (block.lang === 'sh') command = block.code
    else if (block.lang === 'ts') {
      // A sample of the reader's project, in the folder they are in: its imports resolve there.
      const file = `sample-${block.line}.ts`
      fs.writeFileSync(source, `${marker?.kind === 'prelude' ? `${marker.value}\n` : ''}${block.code}`)
      command = `cp ${quote(source)} ${file} && ${RUN_SAMPLE} ${file}`
    } else return
    script.push(`echo ${quote(where(block))} > ${quote(path.join(outdir, 'current'))}`)
    script.push(`{\n${command}\n} > ${quote(out)}`)
    run.push(index)
  })
  const child = spawn('bash', ['-c', script.join('\n')], {
    cwd: home,
    env: {
      ...readerEnvironment(),
      HOME: home,
      // npm and npx never fetch: what a sample installs or runs comes from the checkout.
      npm_config_offline: 'true',
      npm_config_cache: path.join(workdir, 'npm-cache'),
      npm_config_update_notifier: 'false',
      REPO: ROOT,
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
    t = await buildTestApp({
      webhookAllowPrivateUrls: true,
      worker: 'inline',
      webhookBackoffScale: 0.001,
      // The sweep of forgotten check-outs passes between any two blocks, as it does (every 15 s)
      // between the commands of a reader who reads the prose between them: a document that opens a
      // session in the past with one command and closes it with the next fails here every time.
      sessionSweepIntervalMs: 20,
    })
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
        else if (marker?.kind === 'offline' && marker.value === '')
          problems.push(`${where(block)}: offline needs the command the test runs instead`)
        else if (marker?.kind === 'prelude' && block.lang !== 'ts')
          problems.push(`${where(block)}: a prelude is for ts blocks`)
        else if (marker?.kind === 'output' && !blocks.slice(0, index).some(isRunnable))
          problems.push(`${where(block)}: an output block with no runnable block before it`)
        else if (marker === undefined && !['sh', 'ts', 'json'].includes(block.lang))
          problems.push(
            `${where(block)}: a \`${block.lang || 'plain'}\` block cannot be run: mark it <!-- not-run: reason -->`,
          )
        else if (
          block.lang === 'ts' &&
          isRunnable(block) &&
          !fs.readFileSync(path.join(ROOT, document), 'utf8').includes(RUN_SAMPLE)
        )
          problems.push(
            `${where(block)}: a ts sample is run with \`${RUN_SAMPLE}\`, and its document must say so`,
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
  }

  // One session at a time: run at once, on SQLite the guide's check-out scan (step 4) was flagged
  // out_of_order in two runs of three while the other documents' sessions wrote.
  describe('sessions', () => {
    for (const { document, blocks } of documents.filter((doc) => doc.blocks.some(isRunnable))) {
      it(`${document}: its sh and ts samples run against the service`, {
        timeout: 150_000,
      }, async () => {
        const key = await t.key({ account: `docs-${document.replace(/\W+/g, '-')}` })
        const untrackedBefore = untrackedFiles(blocks)
        const result = await runDocument(
          blocks,
          {
            BASE: base,
            KEY: key.secret,
            ATTENDANCE_BASE_URL: base,
            ATTENDANCE_API_KEY: key.secret,
            HOOK_PORT: String(await freePort()),
          },
          120_000,
        )
        const left = [...untrackedFiles(blocks)].filter((entry) => !untrackedBefore.has(entry))
        expect(left, 'files the session left in the repository').toEqual([])
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
  })
})

function isRunnable(block: Block): boolean {
  return (
    ((block.lang === 'sh' || block.lang === 'ts') &&
      (block.marker === undefined || block.marker.kind === 'prelude')) ||
    block.marker?.kind === 'offline'
  )
}

function trimLines(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim()
}
