/**
 * Only for `npm run test:mutation` (vitest.mutation.config.ts), after Stryker's own setup file.
 *
 * Stryker counts a mutant reached while no test runs as "static": in a file's beforeAll or afterAll
 * (our shared setups start a server or build a world there), or by a timer between tests. A static
 * mutant is run against every test of the suite in a fresh environment: about 20 s each here, and
 * a third of the mutants of src/auth and src/registry were static for that reason alone.
 *
 * Here, during Stryker's first (coverage) run, a mutant first reached in a file's hooks is counted
 * as covered by each test of that file instead. That is what running it needs: Stryker activates a
 * non-static mutant in its beforeAll, which runs before the file's own hooks, and a run of any of
 * the file's tests runs those hooks. A mutant reached while the file is imported stays static,
 * since only a fresh import sees it.
 */
import { afterAll, beforeAll, beforeEach, inject } from 'vitest';

type Hits = Record<string, number>;
interface Coverage {
  static: Hits;
  perTest: Record<string, Hits>;
}
interface StrykerNamespace {
  mutantCoverage?: Coverage;
}

// Stryker provides these to its runs; plain `vitest --config vitest.mutation.config.ts` does not.
const globalNamespace = (inject as (key: string) => unknown)('globalNamespace') as string | undefined;
const mode = (inject as (key: string) => unknown)('mode');

if (globalNamespace !== undefined && mode === 'dry-run') {
  const ns = ((globalThis as Record<string, unknown>)[globalNamespace] ??= {}) as StrykerNamespace;
  let atImport: Hits = {};
  const tests = new Set<string>();

  beforeAll(() => {
    atImport = { ...(ns.mutantCoverage?.static ?? {}) };
  });
  beforeEach(({ task }) => {
    tests.add(rawTestId(task));
  });
  // Registered after the file's own afterAll hooks run (hooks unwind as a stack), so the hits of
  // its teardown are counted too.
  afterAll(() => {
    const coverage = ns.mutantCoverage;
    if (coverage === undefined || tests.size === 0) return;
    for (const [mutant, hits] of Object.entries(coverage.static)) {
      if (atImport[mutant] !== undefined) continue;
      delete coverage.static[mutant];
      for (const test of tests) {
        const perTest = (coverage.perTest[test] ??= {});
        perTest[mutant] = (perTest[mutant] ?? 0) + hits;
      }
    }
  });
}

// Stryker's own test id (its stryker-setup.js): the file path, '#', the suite and test names.
function rawTestId(task: { name: string; file?: { filepath: string }; suite?: Suite }): string {
  const parts = [task.name];
  for (let suite = task.suite; suite; suite = suite.suite) parts.unshift(suite.name);
  return `${task.file?.filepath ?? 'unknown.js'}#${parts.join(' ').trim()}`;
}
interface Suite {
  name: string;
  suite?: Suite;
}
