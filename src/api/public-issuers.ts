/**
 * Issuers that sign tokens for anyone's jobs (every repository on GitHub, every project on
 * GitLab.com, every Buildkite organization, every Terraform Cloud organization): a rule for one
 * must pin whose jobs these are, with one of the owner claims exactly, or by a glob that keeps the
 * owner (`acme/*`, `repo:acme/*`). Pinning `ref: refs/*` or `event_name: push` alone passed "pins
 * something" and trusted every owner's jobs (found by a review). A private issuer (a company's own
 * GitLab or CI) signs only for its own jobs and is not listed.
 *
 * Claims naming something other than the job's owner do not count: `job_workflow_ref` names a
 * reusable workflow, which any repository may call (its token then carries the caller's
 * repository), so pinning it alone trusts every caller (found by the same review's second pass).
 */

interface PublicIssuer {
  name: string;
  matches: (issuer: string) => boolean;
  /** Owner claims: null for exact values only, a RegExp for the text a glob's first `*` must follow. */
  owners: Record<string, RegExp | null>;
}

const host = (origin: string) => (issuer: string) => issuer === origin || issuer.startsWith(`${origin}/`);

const publicIssuers: PublicIssuer[] = [
  {
    name: 'GitHub Actions',
    matches: host('https://token.actions.githubusercontent.com'),
    owners: { repository_id: null, repository_owner_id: null, repository_owner: null, enterprise_id: null, enterprise: null, repository: /^[^/*]+\//, sub: /^repo:[^/*:]+\// },
  },
  {
    name: 'GitLab.com',
    matches: host('https://gitlab.com'),
    owners: { project_id: null, namespace_id: null, namespace_path: null, project_path: /^[^/*]+\//, sub: /^project_path:[^/*:]+\// },
  },
  {
    name: 'Buildkite',
    matches: host('https://agent.buildkite.com'),
    owners: { organization_id: null, organization_slug: null, sub: /^organization:[^:*]+:/ },
  },
  {
    name: 'Terraform Cloud',
    matches: host('https://app.terraform.io'),
    owners: { terraform_organization_id: null, terraform_organization_name: null, sub: /^organization:[^:*]+:/ },
  },
];

/** Whether a claim's pattern keeps the owner: exact, or a glob whose text before `*` names it. */
function keepsOwner(pattern: unknown, prefix: RegExp | null): boolean {
  if (typeof pattern !== 'string' || pattern === '') return false;
  const star = pattern.indexOf('*');
  if (star < 0) return true;
  return prefix !== null && prefix.test(pattern.slice(0, star));
}

/** Why a rule for `issuer` with these claims trusts every owner's jobs, or undefined when it does not (or the issuer is not public). */
export function ownerPinMissing(issuer: string, claims: Readonly<Record<string, unknown>>): string | undefined {
  const known = publicIssuers.find((p) => p.matches(issuer));
  if (!known || Object.entries(known.owners).some(([name, prefix]) => keepsOwner(claims[name], prefix))) return undefined;
  return `${known.name} signs tokens for anyone's jobs: pin whose jobs these are with one of ${Object.keys(known.owners).join(', ')}, exactly or by a glob that keeps the owner (acme/*); the claims given would trust jobs of every owner`;
}
