import { build, TARGETS } from '../../scripts/build.mjs'
import { withFileLock } from './process.js'

/** tsc's exit status when it found type errors but wrote every output file all the same. */
const TSC_ERRORS_OUTPUTS_WRITTEN = 2

/**
 * Global setup of both projects: brings dist/ up to date (scripts/build.mjs, what `npm start` runs
 * before it starts) before any test file runs, so that the tests' child processes start from the
 * compiled service (`node dist/src/…`, see `builtScript`) and never from a stale build, whatever
 * `npx vitest run` is given. A start from dist/ is ~0.5 s of CPU; through tsx it was ~1.5 s.
 *
 * Up to date, it is a hash of the inputs (~0.1 s); after an edit to src/, tsc's incremental build.
 * Under the lock the `npm start` and console tests hold while they build or read dist/, so that
 * two runs on one checkout never write it at the same time.
 *
 * Type errors do not stop the tests: tsc has written the JavaScript, which runs as tsx ran the
 * sources (tsx never checked types either); `npm test` runs the type check before the tests, and the
 * build stays unstamped, so the next run builds again. Any other failure does stop them.
 */
export default async function setup(): Promise<void> {
  await withFileLock('attendance-service-npm-start', async () => {
    for (const target of TARGETS) {
      const lines: string[] = []
      const { failed } = build({ targets: [target], log: (line) => lines.push(line) })
      if (!failed) continue
      if (target.name === 'server' && failed.status === TSC_ERRORS_OUTPUTS_WRITTEN) {
        console.warn(
          'build-setup: the server has type errors (above); its tests run the JavaScript tsc wrote',
        )
        continue
      }
      throw new Error(
        `scripts/build.mjs: the ${failed.name} build failed (exit ${failed.status}); the tests start ` +
          `the service from dist/.\n${lines.join('\n')}`,
      )
    }
  })
}
