/**
 * Where a key's value goes: the value of the key-secret annotation. GitHub Actions secrets of a
 * repository, of one of its environments, or of an organization, or a 0600 file. Parsing is pure
 * (validate and plan name sinks without sending anything); the senders are github-secrets.ts and
 * file-sink.ts.
 */
import { posix } from 'node:path';

/** `github:OWNER/REPO/NAME`: a repository's Actions secret. */
export interface RepoSecret {
  type: 'repo';
  owner: string;
  repo: string;
  name: string;
}

/** `github-env:OWNER/REPO/ENVIRONMENT/NAME`: a secret of a repository's deployment environment. */
export interface EnvironmentSecret {
  type: 'environment';
  owner: string;
  repo: string;
  environment: string;
  name: string;
}

/** `github-org:ORG/NAME`: an organization's Actions secret. */
export interface OrgSecret {
  type: 'org';
  org: string;
  name: string;
}

/** `file:PATH`: a file the reconciler writes (mode 0600, atomically). */
export interface FileSink {
  type: 'file';
  path: string;
}

export type GitHubTarget = RepoSecret | EnvironmentSecret | OrgSecret;
export type SecretTarget = GitHubTarget | FileSink;

const owner = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const repo = /^[A-Za-z0-9._-]{1,100}$/;
// GitHub's rules: letters, digits and underscores, not starting with a digit or GITHUB_.
const secretName = /^[A-Za-z_][A-Za-z0-9_]*$/;
// GitHub allows more in an environment's name; the forms a URL path carries unambiguously are enough here.
const environment = /^[A-Za-z0-9._-]{1,255}$/;

export const sinkForms = 'github:OWNER/REPO/NAME, github-env:OWNER/REPO/ENVIRONMENT/NAME, github-org:ORG/NAME or file:PATH';

function nameError(n: string): string | undefined {
  if (!secretName.test(n) || /^GITHUB_/i.test(n)) return `${JSON.stringify(n)} is not a valid secret name (letters, digits and _, not starting with a digit or GITHUB_)`;
  return undefined;
}

function repoError(o: string, r: string): string | undefined {
  if (!owner.test(o)) return `${JSON.stringify(o)} is not a GitHub owner name`;
  if (!repo.test(r) || r === '.' || r === '..') return `${JSON.stringify(r)} is not a GitHub repository name`;
  return undefined;
}

/** The sink an annotation names, or why it names none. */
export function parseSecretTarget(value: string): SecretTarget | string {
  const colon = value.indexOf(':');
  const scheme = colon < 0 ? '' : value.slice(0, colon);
  const rest = value.slice(colon + 1);
  const parts = rest.split('/');
  switch (scheme) {
    case 'github': {
      if (parts.length !== 3 || parts.some((p) => !p)) return `must be github:OWNER/REPO/SECRET_NAME, not ${JSON.stringify(value)}`;
      const [o, r, n] = parts as [string, string, string];
      const bad = repoError(o, r) ?? nameError(n);
      return bad ?? { type: 'repo', owner: o, repo: r, name: n };
    }
    case 'github-env': {
      if (parts.length !== 4 || parts.some((p) => !p)) return `must be github-env:OWNER/REPO/ENVIRONMENT/SECRET_NAME, not ${JSON.stringify(value)}`;
      const [o, r, e, n] = parts as [string, string, string, string];
      const bad = repoError(o, r) ?? (environment.test(e) && e !== '.' && e !== '..' ? undefined : `${JSON.stringify(e)} is not an environment name this annotation accepts (letters, digits, ., _ and -)`) ?? nameError(n);
      return bad ?? { type: 'environment', owner: o, repo: r, environment: e, name: n };
    }
    case 'github-org': {
      if (parts.length !== 2 || parts.some((p) => !p)) return `must be github-org:ORG/SECRET_NAME, not ${JSON.stringify(value)}`;
      const [o, n] = parts as [string, string];
      const bad = (owner.test(o) ? undefined : `${JSON.stringify(o)} is not a GitHub organization name`) ?? nameError(n);
      return bad ?? { type: 'org', org: o, name: n };
    }
    case 'file': {
      if (!rest) return `must be file:PATH, not ${JSON.stringify(value)}`;
      if (rest.includes('\0')) return 'file: paths must not hold a NUL character';
      if (rest.endsWith('/')) return `file:${rest} names a folder: name the file the key is written to`;
      // A manifest author picks the path: it stays inside the key folder (--key-dir), never beside it.
      if (rest.startsWith('/') || /^[A-Za-z]:[\\/]/.test(rest) || rest.startsWith('\\')) return `file:${rest} is absolute: a file: path is relative to the key folder (--key-dir)`;
      if (rest.split(/[\\/]/).includes('..')) return `file:${rest} holds "..": a file: path stays inside the key folder (--key-dir)`;
      return { type: 'file', path: rest };
    }
    default:
      return `must be one of ${sinkForms}, not ${JSON.stringify(value)}`;
  }
}

export function formatTarget(t: SecretTarget): string {
  switch (t.type) {
    case 'repo':
      return `github:${t.owner}/${t.repo}/${t.name}`;
    case 'environment':
      return `github-env:${t.owner}/${t.repo}/${t.environment}/${t.name}`;
    case 'org':
      return `github-org:${t.org}/${t.name}`;
    case 'file':
      return `file:${t.path}`;
  }
}

/** How the messages name a sink: as GitHub's settings pages do. */
export function describeTarget(t: SecretTarget): string {
  switch (t.type) {
    case 'repo':
      return `GitHub secret ${t.name} of ${t.owner}/${t.repo}`;
    case 'environment':
      return `GitHub secret ${t.name} of environment ${t.environment} of ${t.owner}/${t.repo}`;
    case 'org':
      return `GitHub organization secret ${t.name} of ${t.org}`;
    case 'file':
      return `file ${t.path}`;
  }
}

/**
 * What makes two sinks the same place, or undefined for a value that names none: GitHub compares
 * owners, repositories, environments and secret names without case; a file path by its normal form.
 */
export function sinkIdentity(value: string): string | undefined {
  const t = parseSecretTarget(value);
  if (typeof t === 'string') return undefined;
  if (t.type === 'file') return `file:${posix.normalize(t.path)}`;
  return formatTarget(t).toLowerCase();
}
