import path from 'node:path'
import type { Reporter, TestModule } from 'vitest/node'

/** How many of the slowest files the summary names. */
const SLOWEST = 12

/**
 * Ends the run with one plain line, `N passed, N failed, N skipped`, so CI logs state the count in a
 * form any tool reads, beside Vitest's own colourful summary; before it, the slowest files (with
 * their project), where the suite's time goes.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0 }
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') count.passed++
        else if (state === 'failed') count.failed++
        else count.skipped++
      }
      // A file that failed before its tests ran (an import or a beforeAll) counts as a failure.
      if (
        module.state() === 'failed' &&
        ![...module.children.allTests()].some((t) => t.result().state === 'failed')
      ) {
        count.failed++
      }
    }
    const slowest = [...testModules]
      .map((module) => ({
        name: `${module.project.name} ${path.relative(process.cwd(), module.moduleId)}`,
        ms: module.diagnostic().duration,
      }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST)
    console.log('\nslowest files:')
    for (const { name, ms } of slowest) console.log(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${name}`)
    console.log(`\n${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped`)
  }
}
