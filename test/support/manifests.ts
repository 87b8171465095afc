/**
 * Teams and access keys as a test writes them: objects for the registry, the API and the client,
 * YAML for a GitOps source folder or kubectl -f. Only what the test names goes in; a test that is
 * about the exact text of a manifest (its lines, its quoting, a typo) writes the text itself.
 */
import { stringify } from 'yaml';

export const apiVersion = 'management.service/v1';

type Fields = Record<string, unknown>;

/** A Team named `name` with this spec (and metadata beside the name). */
export const team = (name: string, spec: Fields = {}, metadata: Fields = {}) => ({
  apiVersion,
  kind: 'Team',
  metadata: { name, ...metadata },
  spec,
});

/** An OwnedAccessKey named `name` with this spec (and metadata beside the name). */
export const accessKey = (name: string, spec: Fields, metadata: Fields = {}) => ({
  apiVersion,
  kind: 'OwnedAccessKey',
  metadata: { name, ...metadata },
  spec,
});

/** Objects as one YAML file, `---` between documents. */
export const toYaml = (...objects: object[]): string => objects.map((o) => stringify(o)).join('---\n');

/** A Team manifest file's text. */
export const teamYaml = (name: string, spec: Fields = {}, metadata: Fields = {}): string => toYaml(team(name, spec, metadata));

/** An OwnedAccessKey manifest file's text. */
export const accessKeyYaml = (name: string, spec: Fields, metadata: Fields = {}): string => toYaml(accessKey(name, spec, metadata));

export interface MonthlyKey {
  name?: string;
  /** Where the reconciler delivers the value (the key-secret annotation). */
  sink?: string;
  /** rotation-overlap; none: the reconciler's default. */
  overlap?: string;
}

/**
 * The scheduled-rotation tests' key: delivered to one sink and rotated every 30 days, for ci-bot,
 * as the YAML a GitOps folder holds.
 */
export function monthlyKeyYaml({ name = 'deploy-ci', sink = 'github:acme/payments/DEPLOY_KEY', overlap }: MonthlyKey = {}): string {
  const overlapLine = overlap === undefined ? '' : `    gitops.management.service/rotation-overlap: ${overlap}\n`;
  return `apiVersion: ${apiVersion}
kind: OwnedAccessKey
metadata:
  name: ${name}
  annotations:
    gitops.management.service/key-secret: ${sink}
    gitops.management.service/rotate-every: 30d
${overlapLine}spec:
  user: ci-bot
`;
}
