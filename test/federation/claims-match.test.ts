import { describe, expect, it } from 'vitest';
import { claimsMismatch, globMatch } from '../../src/federation/claims-match.js';

describe('globMatch: * is any run of characters, nothing else is special', () => {
  it.each([
    ['acme/app', 'acme/app', true],
    ['acme/app', 'acme/app2', false],
    ['acme/*', 'acme/app', true],
    ['acme/*', 'acme/', true],
    ['acme/*', 'acmex/app', false],
    ['refs/tags/v*', 'refs/tags/v1.2.0', true],
    ['refs/tags/v*', 'refs/heads/v1', false],
    ['*-release-*', 'x-release-y', true],
    ['*-release-*', 'release', false],
    ['a*a', 'a', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'acb', false],
    ['repo:acme/app:ref:refs/heads/.*', 'repo:acme/app:ref:refs/heads/main', false],
    ['*', '', true],
  ])('%s against %s: %s', (pattern, text, want) => expect(globMatch(pattern, text)).toBe(want));
});

describe('claimsMismatch: every entry must match; fork events need event_name pinned', () => {
  it.each([
    [{ repository_id: '1001' }, { repository_id: '1001' }, undefined],
    [{ repository_id: '1001' }, { repository_id: 1001 }, undefined],
    [{ repository_id: '1001' }, {}, 'the token has no claim "repository_id" the rule requires'],
    [{ repository_id: '1001' }, { repository_id: { id: '1001' } }, 'the token has no claim "repository_id" the rule requires'],
    [{ repository_id: '1001', ref: 'refs/heads/main' }, { repository_id: '1001', ref: 'refs/heads/dev' }, 'the token\'s claim "ref" does not match the rule'],
    [{ repository_id: '1001' }, { repository_id: '1001', event_name: 'pull_request' }, 'the token is from a pull_request event, which a fork can start: only a rule whose event_name names that event exactly trusts it'],
    // A glob matches the claim but is no decision to trust forks: the event must be named exactly (found by a review).
    [{ repository_id: '1001', event_name: 'pull_request*' }, { repository_id: '1001', event_name: 'pull_request_target' }, 'the token is from a pull_request_target event, which a fork can start: only a rule whose event_name names that event exactly trusts it'],
    [{ repository_id: '1001', event_name: '*' }, { repository_id: '1001', event_name: 'pull_request' }, 'the token is from a pull_request event, which a fork can start: only a rule whose event_name names that event exactly trusts it'],
    [{ repository_id: '1001', event_name: '*' }, { repository_id: '1001', event_name: 'push' }, undefined],
    [{ repository_id: '1001', event_name: 'pull_request_target' }, { repository_id: '1001', event_name: 'pull_request_target' }, undefined],
  ])('%j with %j', (claims, payload, want) => expect(claimsMismatch(claims as Record<string, string>, payload)).toBe(want));
});
