/**
 * The job a token was issued to, in words: what the audit trail, `teamkeys keys` and whoami show
 * instead of a key name. GitHub's and GitLab's claims read as "repository acme/app on
 * refs/heads/main, workflow ci, run 42"; any other issuer's as its subject.
 */
import type { JWTPayload } from 'jose';

/**
 * A claim as the description shows it: as written when it is one plain word (a name, a ref, an
 * id), else quoted as JSON with every character outside printable ASCII escaped. Workflow and
 * branch names are the job author's: unquoted, `ci, run 42` or a newline forged the description's
 * other parts or the audit line it is written into (found by a review).
 */
function text(v: unknown): string | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  const s = String(v).slice(0, 200);
  if (/^[\w./:@+#=-]+$/.test(s)) return s;
  return JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
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
