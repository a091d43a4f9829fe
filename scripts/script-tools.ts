import { execFileSync } from 'node:child_process'
import { realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root: Biome finds its configuration (biome.json) from here. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** Formats `text` as Biome would format the file at `filePath`, so generated files pass the lint. */
export function formatWithBiome(text: string, filePath: string): string {
  const biome = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome')
  return execFileSync(
    process.execPath,
    [biome, 'format', `--stdin-file-path=${path.relative(REPO_ROOT, filePath)}`],
    { cwd: REPO_ROOT, input: text, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  )
}

/** Runs `main` when the module at `moduleUrl` is the script node was started with (not when imported). */
export function runIfEntryPoint(moduleUrl: string, main: () => Promise<void>): void {
  const script = process.argv[1]
  if (!script) return
  let entry = false
  try {
    entry = realpathSync(script) === fileURLToPath(moduleUrl)
  } catch {
    entry = false
  }
  if (!entry) return
  main().catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
