import { defineConfig } from 'vitest/config';

/**
 * The tests `npm run test:mutation` (stryker.config.mjs) runs against each mutant of src/auth,
 * src/registry and src/gitops/plan: only in-process ones (no `teamkeys serve`, no CLI, no git,
 * in-process HTTP servers included), and not the property models at full size (escalation-watchers,
 * access-change-model; the escalation model runs small and seeded, below), which take half a
 * minute each and would run for nearly every mutant. Those still run in `npm test`; docs/mutation-testing.md says what this leaves
 * out.
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
      'test/gitops/access-change-lines.test.ts',
      'test/gitops/access-change-parts.test.ts',
      'test/gitops/access-change-report.test.ts',
      'test/gitops/access-policy.test.ts',
      'test/gitops/attribution.test.ts',
      'test/gitops/diff-object.test.ts',
      'test/gitops/diff-rules.test.ts',
      'test/gitops/ignore-fields.test.ts',
      'test/gitops/key-secret-moved.test.ts',
      'test/gitops/manifest-keys.test.ts',
      'test/gitops/merged.test.ts',
      'test/gitops/next-rotation-report.test.ts',
      'test/gitops/plan.test.ts',
      'test/gitops/plan-steps.test.ts',
      'test/gitops/planned-state.test.ts',
      'test/gitops/planner-agrees.test.ts',
      'test/gitops/report-code-values.test.ts',
      'test/gitops/rotation-decision.test.ts',
      'test/gitops/scheduled-rotation-own-key.test.ts',
      'test/gitops/scheduled-rotation-plan.test.ts',
      'test/gitops/withheld.test.ts',
      'test/gitops/withheld-rotation-age.test.ts',
      // In-process servers over HTTP (no process boundary): the request gate, authorization of
      // every route, impersonation, watches, access requests, sign-in's keys and the job token
      // exchange, which the tests above reach only in part.
      'test/server/access-requests.test.ts',
      'test/server/access-requests-break-glass.test.ts',
      'test/server/access-reviews-http.test.ts',
      'test/server/github-secret-scanning.test.ts',
      'test/server/http-errors.test.ts',
      'test/server/impersonation-http.test.ts',
      'test/server/indexed-request-paths.test.ts',
      'test/server/key-health-admin-lockout.test.ts',
      'test/server/key-health-reenable.test.ts',
      'test/server/kube-parity-http.test.ts',
      'test/server/leak-revocation.test.ts',
      'test/server/path-spellings.test.ts',
      'test/server/request-gate.test.ts',
      'test/server/watch-connection.test.ts',
      'test/server/watch-every-route.test.ts',
      'test/server/watch-future-rv.test.ts',
      'test/server/watch-http.test.ts',
      'test/signin/derived-team-key.test.ts',
      'test/signin/login-keys.test.ts',
      'test/federation/exchange.test.ts',
      'test/federation/kind.test.ts',
      'test/gitops/access-change.test.ts',
      // src/auth's code no test above reached (docs/mutation-testing.md, stop 46, w-nc-auth).
      'test/server/impersonation-refusals.test.ts',
      'test/auth/access-rule-subresources.test.ts',
      'test/auth/scope-rule-tables.test.ts',
      'test/auth/escalation-refusal-words.test.ts',
      'test/auth/activity-recorder.test.ts',
      'test/auth/bootstrap-admin.test.ts',
      'test/auth/authentication-edges.test.ts',
      'test/auth/index-and-expiry-edges.test.ts',
      // src/auth: survivors of the mutation set (stop 46, docs/mutation-testing.md): what a grant
      // confers and the 403 naming it, impersonate rules, the bearer header, the activity recorder's
      // stop.
      'test/auth/escalation-atoms.test.ts',
      'test/auth/impersonation-rules.test.ts',
      'test/auth/bearer-header.test.ts',
      'test/auth/activity-follow.test.ts',
      // The escalation model, small and seeded (env below): a few seconds, and it judges every
      // grant path at once, which the targeted tests above hold one case each (stop 46).
      'test/auth/escalation-model.test.ts',
    ],
    env: {
      ESCALATION_MODEL_RUNS: '10',
      ESCALATION_SIGNIN_RUNS: '6',
      ESCALATION_REQUEST_RUNS: '6',
      ESCALATION_RULE_RUNS: '8',
      ESCALATION_MODEL_SEED: '46',
    },
    // One worker imports src/ once for all the files a mutant's run needs, instead of once per file
    // (each run still gets a fresh worker, so a mutant never outlives its run): the first run went
    // from 48 s to 10 s of overhead. A file that replaces a module with vi.mock cannot share it,
    // so none is listed above. MUT_ISOLATE=1 isolates the files again, to check a doubtful result.
    isolate: process.env.MUT_ISOLATE === '1',
    // Counts a mutant reached in a file's hooks as covered by its tests (see the file).
    setupFiles: ['test/support/mutation-coverage-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
