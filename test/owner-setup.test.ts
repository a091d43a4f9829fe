import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OWNER_LINK_FILE } from '../src/server.js'
import { waitUntil } from './helpers/assertions.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { type Child, killAll, START_MS } from './helpers/process.js'
import {
  firstKey,
  jsonLines,
  listeningUrl,
  type ServerProcess,
  startServerProcess,
} from './helpers/server-process.js'

/**
 * The owner's set-up link (decisions.md, "Owner set-up"), through the real server process: on a
 * database with no person each start hands over a one-time link that makes the owner of the
 * `default` account, beside the first key (stdout a pipe here: written to owner-link.txt beside
 * FIRST_KEY_FILE, never logged); a new start voids the earlier link; once someone exists, none.
 */

const PUBLIC_URL = 'https://attendance.example.com'
const STOP_MS = 30_000
const ONE_START = START_MS + 20_000 + STOP_MS

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await killAll()
  await database.drop()
})

/** A start on this file's database, FIRST_KEY_FILE in a folder of its own; answers where it listens. */
async function start(): Promise<{ server: ServerProcess; url: string; linkFile: string }> {
  const server = startServerProcess({ DATABASE_URL: database.url, PUBLIC_URL, SHUTDOWN_GRACE_MS: '0' })
  const url = await listeningUrl(server.child)
  return { server, url, linkFile: path.join(path.dirname(server.keyFile), OWNER_LINK_FILE) }
}

async function stop(child: Child): Promise<void> {
  child.kill('SIGTERM')
  expect(await child.waitForExit(STOP_MS)).toEqual({ code: 0, signal: null })
}

function readLink(file: string): string {
  const link = fs.readFileSync(file, 'utf8').trim()
  expect(link).toMatch(/^https:\/\/attendance\.example\.com\/console\/accept-invite#token=[\w-]{43,}$/)
  return link
}

async function accept(url: string, link: string, email: string) {
  const res = await fetch(`${url}/v1/auth/accept-invite`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      token: new URL(link).hash.replace(/^#token=/, ''),
      email,
      password: 'the owner chose this one',
    }),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

describe('the owner set-up link at first start', () => {
  let earlier = ''

  it('first start: the key in FIRST_KEY_FILE alone, the link in owner-link.txt beside it (0600), a log line without it', {
    timeout: ONE_START,
  }, async () => {
    const { server, linkFile } = await start()
    expect(firstKey(server)).toMatch(/^sk_test_[\w-]+$/)
    earlier = readLink(linkFile)
    expect(fs.statSync(linkFile).mode & 0o777).toBe(0o600)
    const token = new URL(earlier).hash.slice('#token='.length)
    // The process's log is written asynchronously: its line may follow the listening line.
    const said = await waitUntil(
      () => jsonLines(server.child.stdout),
      (lines) => lines.some((line) => (line as { file?: string }).file === linkFile),
    )
    expect(said).toContainEqual(
      expect.objectContaining({ file: linkFile, msg: expect.stringContaining(linkFile) }),
    )
    await stop(server.child)
    expect(`${server.child.stdout}${server.child.stderr}`).not.toContain(token)
  })

  it('a second start, still without a person, hands over a new link and voids the first; the link makes the owner of default', {
    timeout: ONE_START,
  }, async () => {
    expect(earlier).not.toBe('')
    const { server, url, linkFile } = await start()
    // No second key: only the first start makes one.
    expect(firstKey(server)).toBe('')
    const link = readLink(linkFile)
    expect(link).not.toBe(earlier)
    const email = 'owner@example.com'
    const voided = await accept(url, earlier, email)
    expect(voided.status).toBe(422)
    expect(voided.body).toMatchObject({ error: { code: 'invalid_value', param: 'token' } })
    const accepted = await accept(url, link, email)
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200)
    expect(accepted.body).toMatchObject({
      object: 'auth_session',
      user: { email },
      accounts: [{ name: 'default', role: 'owner' }],
    })
    // Single use.
    expect((await accept(url, link, 'someone.else@example.com')).status).toBe(422)
    await stop(server.child)
  })

  it('once a person exists, a start hands over no link', { timeout: ONE_START }, async () => {
    const { server, linkFile } = await start()
    expect(fs.existsSync(linkFile)).toBe(false)
    expect(jsonLines(server.child.stdout).filter((line) => String(line.msg).includes('owner'))).toEqual([])
    await stop(server.child)
  })
})
