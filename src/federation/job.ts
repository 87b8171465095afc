/**
 * The job a token was issued to, in words: what the audit trail, `teamkeys keys` and whoami show
 * instead of a key name. GitHub's and GitLab's claims read as "repository acme/app on
 * refs/heads/main, workflow ci, run 42"; any other issuer's as its subject.
 */
import type { JWTPayload } from 'jose';

/** The most one claim takes in the description, escapes included (the key's displayName holds four). */
const maxPart = 200;

/**
 * A claim as the description shows it: as written when it is one plain word (letters in any
 * script, digits, `_./:@+#=-`), else quoted as JSON with control, format (bidi, zero-width) and
 * separator characters escaped; other characters, any script's, stay readable. Workflow and branch
 * names are the job author's: unquoted, `ci, run 42` or a newline forged the description's other
 * parts or the audit line it is written into (found by a review). Cut to maxPart after escaping,
 * so no claim pushes the minted key's displayName past its bound (a review's second pass).
 */
function text(v: unknown): string | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  let s = String(v).slice(0, maxPart);
  if (/^[\p{L}\p{N}\p{M}_./:@+#=-]+$/u.test(s)) return s;
  const quoted = (t: string) => JSON.stringify(t).replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}]/gu, (c) => c.split('').map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''));
  while (quoted(s).length > maxPart) s = s.slice(0, -1);
  return quoted(s);
}

export function describeJob(p: JWTPayload): string {
  const repository = text(p.repository) ?? text(p.project_path);
  const parts: string[] = [];
  if (repository) parts.push(`repository ${repository}`);
  const ref = text(p.ref);
  if (repository && ref) parts[0] += ` on ${ref}`;
  const workflow = text(p.workflow) ?? text(p.pipeline_source);
  if (workflow) parts.push(`workflow ${workflow}`);
  const run = text(p.run_id) ?? text(p.pipeline_id) ?? text(p.build_number);
  if (run) parts.push(`run ${run}`);
  if (parts.length === 0) parts.push(`subject ${text(p.sub) ?? '(none)'}`);
  return parts.join(', ');
}
