import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Scenario tests start real processes; two cores is all a machine here has.
    maxWorkers: 2,
    // Under CI a JSON report is written too, so .ci/run can print a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.ci/results.json' }]] : ['default'],
  },
});
