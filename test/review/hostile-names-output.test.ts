/**
 * review-ops: names in a review come from Teams a non-admin owner writes (spec.users, spec.groups,
 * access rules: free strings up to 1024 characters). The Markdown review (the default output, on
 * a terminal, and "for attaching to an audit ticket") escapes only `\`, `|` and line breaks:
 * - `<!--` hides every row after it once the review is rendered (GitHub, GitLab, Jira Markdown);
 * - ESC sequences reach the auditor's terminal raw: `ESC[1A ESC[2K` erases the rows above.
 * The reconciler's reports escape the same names (mdText); `teamkeys keys` prints owners raw too.
 */
import { describe, expect, it } from 'vitest';
import type { OwnedAccessKey, Team } from '../../src/api/types.js';
import { keyRow } from '../../src/auth/key-listing.js';
import { renderKeysMarkdown, renderKeysTable } from '../../src/cli/keys-output.js';
import { keyHealthText } from '../../src/gitops/report/key-health.js';
import { computeReview } from '../../src/review/compute.js';
import { renderReview } from '../../src/review/render.js';

const team = (name: string, spec: object) => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name, uid: `uid-${name}` }, spec }) as Team;
const key = (name: string, spec: object) => ({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name, creationTimestamp: '2026-11-01T00:00:00Z' }, spec }) as OwnedAccessKey;
const now = new Date('2026-11-27T00:00:00Z');

describe('hostile names in access-review and keys output', () => {
  // mallory owns team "side" (no roles): she may add any member strings to it.
  const teams = [team('side', { owner: { user: 'mallory' }, users: ['<!--', 'x\u001b[1A\u001b[2K\u001b]8;;https://evil.example/\u0007'] }), team('payments', { owner: { user: 'mallory' } })];
  const doc = computeReview({ teams, keys: [], group: 'management.service', source: 'memory:', now });

  it('the Markdown review writes no HTML comment opener a renderer would hide the rest behind', () => {
    const md = renderReview(doc, 'markdown');
    expect(md).not.toContain('<!--');
  });

  it('the Markdown review (printed to a terminal by default) carries no terminal control characters', () => {
    const md = renderReview(doc, 'markdown');
    // eslint-disable-next-line no-control-regex
    expect(md).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  it('teamkeys keys (table) carries no terminal control characters from an owner', () => {
    const row = keyRow(key('k', { subject: 'ci\u001b[2J\u001b[Hall keys fine' }), now);
    // eslint-disable-next-line no-control-regex
    expect(renderKeysTable([row])).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  it('teamkeys keys (markdown) and the plan/apply key health lines show control characters as \\uXXXX', () => {
    const row = keyRow(key('k', { subject: 'ci\u001b[2J' }), now);
    // eslint-disable-next-line no-control-regex
    expect(renderKeysMarkdown([row])).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    const lines = keyHealthText({ warnExpirySeconds: 14 * 86_400, warnUnusedSeconds: 90 * 86_400, expiring: [{ name: 'k\u009b2J', owner: 'user:ci\u001b[2J', expiresAt: '2026-11-28T00:00:00Z' }], unused: [] }, now.toISOString());
    expect(lines[1]).toBe('  k\\u009b2J (user:ci\\u001b[2J): expires 2026-11-28T00:00:00Z, in 1d');
  });

  it('the Markdown review shows a control character as \\uXXXX and keeps the name readable', () => {
    expect(renderReview(doc, 'markdown')).toContain('x&#92;u001b&#91;1A');
  });
});
