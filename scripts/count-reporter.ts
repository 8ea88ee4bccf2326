import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints one plain `N passed, N failed, N skipped` line at the end of a run, the form CI reads.
 * A file that fails to load counts as a failure even though it holds no test.
 */
export default class CountReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      if (testModule.state() === "failed" && testModule.children.size === 0) failed++;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
