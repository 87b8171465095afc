// Mutation testing of the code whose mistakes cost most: who may do what (src/auth), what the API
// stores (src/registry) and what GitOps would change (src/gitops/plan). Slow, so not in `npm test`
// nor .ci/run: `npm run test:mutation`, see docs/mutation-testing.md.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: ['src/auth/**/*.ts', 'src/registry/**/*.ts', 'src/gitops/plan/**/*.ts'],
  testRunner: 'vitest',
  // perTest coverage already picks each mutant's tests; vitest's own search for the files related
  // to the mutated one would only cost time on every run.
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  // The machines here have two busy cores: one test runner unless STRYKER_CONCURRENCY says more.
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
  // A mutant that loops is cut off at 1.5x its tests' normal time plus 10 s.
  timeoutMS: 10_000,
  // Only mutants whose code or covering tests changed are run again; the file is a local cache
  // under reports/ (gitignored), not shared: see docs/mutation-testing.md.
  incremental: true,
  incrementalFile: 'reports/mutation/incremental.json',
  // event-recorder writes each mutant's result as it is tested (reports/mutation/events/), so a run
  // stopped early still tells which mutants survived.
  reporters: ['clear-text', 'progress-append-only', 'html', 'json', 'event-recorder'],
  eventReporter: { baseDir: 'reports/mutation/events' },
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // Not needed by the tests above, and large: kept out of the sandbox copy.
  ignorePatterns: ['dist-action', 'bench', 'coverage', '.teamkeys'],
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  // STRYKER_SAMPLE=reports/mutation/sample.json tests only the mutants a sample picked (see
  // scripts/mutation-sample.mjs and docs/mutation-testing.md, "A score from a sample").
  ...(process.env.STRYKER_SAMPLE
    ? {
        plugins: ['@stryker-mutator/*', new URL('./scripts/mutation-sample-checker.mjs', import.meta.url).pathname],
        checkers: ['sample'],
        // A sample's results would replace the whole cache with a few hundred mutants.
        incrementalFile: 'reports/mutation/sample-incremental.json',
      }
    : {}),
  cleanTempDir: true,
};
