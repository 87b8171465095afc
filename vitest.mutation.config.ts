import { defineConfig } from 'vitest/config';

/**
 * The tests `npm run test:mutation` (stryker.config.mjs) runs against each mutant of src/auth,
 * src/registry and src/gitops/plan: only in-process ones (no `teamkeys serve`, no CLI, no git), and
 * not the property models (escalation-model, escalation-watchers, access-change-model) nor the
 * 600-review access-change scenarios, which take minutes each and would run for nearly every mutant.
 * Those still run in `npm test`; docs/mutation-testing.md says what this leaves out.
 */
export default defineConfig({
  test: {
    include: [
      'test/auth/authorization.test.ts',
      'test/auth/escalation-paths.test.ts',
      'test/auth/fail-closed.test.ts',
      'test/auth/failure-limit.test.ts',
      'test/auth/identity-cache.test.ts',
      'test/auth/key-health.test.ts',
      'test/auth/key-lifecycle.test.ts',
      'test/auth/key-listing.test.ts',
      'test/auth/key-rotation*.test.ts',
      'test/auth/one-decision.test.ts',
      'test/auth/review-findings.test.ts',
      'test/auth/scope-containment.test.ts',
      'test/auth/team-index-watch.test.ts',
      'test/auth/team-references.test.ts',
      'test/registry/*.test.ts',
      'test/gitops/access-change-report.test.ts',
      'test/gitops/access-policy.test.ts',
      'test/gitops/diff-rules.test.ts',
      'test/gitops/ignore-fields.test.ts',
      'test/gitops/key-secret-moved.test.ts',
      'test/gitops/manifest-keys.test.ts',
      'test/gitops/merged.test.ts',
      'test/gitops/next-rotation-report.test.ts',
      'test/gitops/plan.test.ts',
      'test/gitops/planned-state.test.ts',
      'test/gitops/planner-agrees.test.ts',
      'test/gitops/report-code-values.test.ts',
      'test/gitops/scheduled-rotation-own-key.test.ts',
      'test/gitops/scheduled-rotation-plan.test.ts',
      'test/gitops/withheld.test.ts',
      'test/gitops/withheld-rotation-age.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
