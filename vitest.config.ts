import { defineConfig } from 'vitest/config';

/**
 * Test files that replace a module with vi.mock. Every other file shares its worker's module graph
 * with the files before it (isolate: false): importing the graph afresh for each of the 300-odd files
 * cost about 70 of the suite's 670 s. A module mock cannot reach a module an earlier file already
 * loaded, so these files run isolated, each with a fresh graph. test/support/isolation.test.ts checks
 * that this list names every file that mocks a module, and only those.
 */
export const mockingFiles = ['test/gitops/step-reads.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Scenario tests start real processes; two cores is all a machine here has.
    maxWorkers: 2,
    // Under CI a JSON report is written too, so .ci/run can print a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.ci/results.json' }]] : ['default'],
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: mockingFiles, isolate: false } },
      { extends: true, test: { name: 'isolated', include: mockingFiles, isolate: true } },
    ],
  },
});
