/**
 * The job's description (src/federation/job.ts) from claims its author writes (workflow and branch
 * names): found by a review (stop 63), `workflow: "ci, run 42"` or a newline forged its other parts
 * and the audit line it is written into. Each claim is a plain word as written, or a JSON string.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeJob } from '../../src/federation/job.js';

const part = String.raw`([\p{L}\p{N}\p{M}_./:@+#=-]+|"(?:[^"\\]|\\.)*")`;
const shape = new RegExp(`^repository ${part} on ${part}, workflow ${part}, run ${part}$`, 'u');
const decode = (p: string) => (p.startsWith('"') ? (JSON.parse(p) as string) : p);

describe('the job a token was issued to, in words', () => {
  it('reads as before for plain names, quotes what is not one, and keeps any script readable', () => {
    expect(describeJob({ repository: 'acme/app', ref: 'refs/heads/main', workflow: 'ci', run_id: '42' })).toBe('repository acme/app on refs/heads/main, workflow ci, run 42');
    expect(describeJob({ repository: 'acme/app', ref: 'refs/heads/main', workflow: 'ci, run 42', run_id: '1' })).toBe('repository acme/app on refs/heads/main, workflow "ci, run 42", run 1');
    expect(describeJob({ repository: 'acme/app', ref: 'refs/heads/x\nrun 9', workflow: 'Deploy \u202eprod', run_id: 7 })).toBe('repository acme/app on "refs/heads/x\\nrun 9", workflow "Deploy \\u202eprod", run 7');
    expect(describeJob({ repository: 'acme/app', ref: 'refs/heads/main', workflow: 'デプロイ', run_id: 3 })).toBe('repository acme/app on refs/heads/main, workflow デプロイ, run 3');
  });

  it('property: whatever the claims, one line with no control, format or separator character, each part at most 200 characters and reading back as its claim', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 300, unit: 'binary' }), fc.string({ minLength: 1, maxLength: 60, unit: 'binary' }), fc.string({ minLength: 1, maxLength: 60, unit: 'binary' }), fc.string({ minLength: 1, maxLength: 20 }), (repository, ref, workflow, run) => {
        const text = describeJob({ repository, ref, workflow, run_id: run });
        expect(text).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}]/u);
        const m = shape.exec(text);
        expect(m, text).not.toBeNull();
        m!.slice(1).forEach((p, i) => {
          const claim = [repository, ref, workflow, run][i]!;
          expect(p.length).toBeLessThanOrEqual(200);
          // Cut after escaping: what is shown is the claim's beginning, all of it when short.
          expect(claim.startsWith(decode(p)), `${p} of ${JSON.stringify(claim)}`).toBe(true);
          if (claim.length <= 30) expect(decode(p)).toBe(claim);
        });
      }),
      { numRuns: 500, seed: 63 },
    );
  });
});
