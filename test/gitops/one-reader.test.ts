/**
 * Issue 42, point 6: the checkout reader (the Action's plan, a folder) and the git-object reader
 * (the sidecar, --source URL, --ref) must parse the same bytes. `working-tree-encoding` makes a
 * checkout hold other bytes than git's objects, so a repository setting it is refused by both, at
 * the attribute's file:line:col; without it both read the same objects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';
import { newRepo, type Repo } from './git-repo.js';

describe('one reader of bytes', () => {
  let repo: Repo;
  const both = () => [teamkeys(['validate', '--source', repo.dir]), teamkeys(['validate', '--source', repo.dir, '--ref', 'HEAD'])];
  beforeAll(async () => {
    repo = await newRepo({ withExamples: false });
    repo.write('teams/platform.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: platform\nspec:\n  users: [ana]\n');
    repo.write('.gitattributes', '# committed in the pull request\n*.txt text\n*.yaml   working-tree-encoding=SHIFT_JIS\n');
    await repo.commit('re-encoded manifests');
  });
  afterAll(() => repo.cleanup());

  it('a repository whose .gitattributes re-encodes files is refused by the checkout reader and the git reader alike', () => {
    const [checkout, objects] = both();
    const refusal = ".gitattributes:3:10: working-tree-encoding=SHIFT_JIS re-encodes files between git's objects and the checkout";
    expect(checkout!.stdout).toContain(refusal);
    expect(objects!.stdout).toContain(refusal);
    expect(checkout!.code).toBe(1);
    expect(objects!.code).toBe(1);
    // The same refusal, line for line, whichever reader read it.
    const errors = (r: typeof checkout) => r!.stdout.split('\n').filter((l) => l.startsWith('.gitattributes'));
    expect(errors(checkout)).toEqual(errors(objects));
  });

  it('without the attribute both readers read the same objects', async () => {
    repo.write('.gitattributes', '*.txt text\n');
    await repo.commit('no re-encoding');
    const [checkout, objects] = both();
    expect(checkout!.code).toBe(0);
    expect(objects!.code).toBe(0);
    const counted = (r: typeof checkout) => r!.stdout.match(/checked 1 object \(1 Team\)/)?.[0];
    expect(counted(checkout)).toBeDefined();
    expect(counted(checkout)).toBe(counted(objects));
  });
});
