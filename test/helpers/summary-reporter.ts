import type { Reporter, TestModule } from 'vitest/node'

/**
 * Ends the run with one plain line, `N passed, N failed, N skipped`, so CI logs state the count in a
 * form any tool reads, beside Vitest's own colourful summary.
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
    console.log(`\n${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped`)
  }
}
