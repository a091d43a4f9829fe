import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { builtScript, type Child, START_MS, spawnChild } from './process.js'

/** The pino line that says where the server listens: its base URL, then its port. */
export const LISTENING = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:(\d+))"/

/** A server process started by `startServerProcess`, with where its first-start key goes. */
export interface ServerProcess {
  child: Child
  /** FIRST_KEY_FILE: a path of its own, in a temporary folder. */
  keyFile: string
}

/**
 * `node dist/src/server.js` (what `npm start` runs after its build) on loopback, PORT=0, logging at
 * info, without Redis. Its stdout is a pipe, not a terminal, so a first start writes its key to
 * FIRST_KEY_FILE, which is given a fresh path here (`firstKey` reads it).
 */
export function startServerProcess(
  env: Record<string, string | undefined>,
  script = builtScript('server'),
): ServerProcess {
  const keyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-key-')), 'first-key.txt')
  const child = spawnChild(process.execPath, [script], {
    env: {
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      REDIS_URL: undefined,
      FIRST_KEY_FILE: keyFile,
      ...env,
    },
  })
  return { child, keyFile }
}

/** Waits for the line that says where the server listens; returns its base URL. */
export async function listeningUrl(child: Child, timeoutMs = START_MS): Promise<string> {
  return (await child.waitForStdout(LISTENING, timeoutMs))[1] ?? ''
}

/** The first-start key a server wrote to its FIRST_KEY_FILE; '' when it wrote none. */
export function firstKey(server: ServerProcess): string {
  return fs.existsSync(server.keyFile) ? fs.readFileSync(server.keyFile, 'utf8').trim() : ''
}

/** Every line of `output` parsed as JSON; throws naming the first line that is not. */
export function jsonLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>
      } catch {
        throw new Error(`not a JSON line: ${line}`)
      }
    })
}
