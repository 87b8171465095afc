/**
 * Whether one key scope is within another (auth/scope-containment.ts), the rule that keeps a scoped
 * key from making a wider key. Table-driven on the pure rule: `npm run test:mutation` found its
 * mutants held only by the escalation property model, which the mutation run leaves out.
 */
import { describe, expect, it } from 'vitest';
import type { OwnedAccessKeySpec } from '../../src/api/types.js';
import { scopeWithin } from '../../src/auth/scope-containment.js';

type Scope = NonNullable<OwnedAccessKeySpec['scope']>;
const readTeams = { verbs: ['get'], resources: [{ group: 'management.service', resources: ['teams'] }] };
const writeKeys = { verbs: ['create'], resources: [{ group: 'management.service', resources: ['ownedaccesskeys'] }] };
const outer: Scope = { roles: [{ role: 'cli' }], rules: [readTeams, writeKeys] };

describe('a scope within another', () => {
  it.each<[string, Scope | undefined, Scope | undefined, boolean]>([
    ['anything is within no scope', { rules: [readTeams] }, undefined, true],
    ['anything is within an empty scope', undefined, { rules: [] }, true],
    ['no scope (everything) is not within a narrowing one', undefined, outer, false],
    ['an empty scope is not within a narrowing one', { rules: [] }, outer, false],
    ['a subset of the rules is within', { rules: [writeKeys] }, outer, true],
    ['the same rules and role are within', { roles: [{ role: 'cli' }], rules: [readTeams, writeKeys] }, outer, true],
    ['one rule more is not', { rules: [writeKeys, { verbs: ['delete'], resources: [{ group: 'management.service', resources: ['teams'] }] }] }, outer, false],
    ['a role the outer lacks is not', { roles: [{ role: 'runner' }] }, outer, false],
    ['the cli flag the outer lacks is not', { rules: [writeKeys], allowServiceCli: true }, outer, false],
    ['the cli flag off adds nothing', { rules: [writeKeys], allowServiceCli: false }, outer, true],
    ['the cli flag both have is within', { rules: [writeKeys], allowServiceCli: true }, { ...outer, allowServiceCli: true }, true],
  ])('%s', (_label, inner, out, within) => {
    expect(scopeWithin(inner, out)).toBe(within);
  });
});
