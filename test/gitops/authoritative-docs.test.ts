/** docs/gitops.md lists exactly the fields the schemas mark x-teamkeys-authoritative. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resourceModels } from '../../src/api/model.js';
import { root } from '../support/cli.js';

describe('the authoritative fields', () => {
  it('docs/gitops.md lists the fields the schemas mark, kind by kind', () => {
    const docs = readFileSync(join(root, 'docs/gitops.md'), 'utf8');
    const section = docs.match(/<!-- authoritative-fields[^>]*-->\n([\s\S]*?)<!-- \/authoritative-fields -->/)?.[1];
    expect(section, 'the marked list in docs/gitops.md').toBeDefined();
    const listed = Object.fromEntries(
      section!
        .trim()
        .split('\n')
        .map((line) => line.match(/^- (\w+): (.*)$/)!)
        .map((m) => [m[1], [...m[2]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]).sort()]),
    );
    const models = resourceModels();
    const marked = Object.fromEntries(Object.values(models).map((m) => [m.info.kind, m.authoritativePaths.map((p) => p.join('.')).sort()]));
    expect(listed).toEqual(marked);
    expect(marked.Team).toEqual(['spec.access', 'spec.accessRequests', 'spec.clusterRoles', 'spec.groups', 'spec.imagePullSecrets', 'spec.owner', 'spec.users']);
  });
});
