/**
 * action.yml states its inputs' defaults in YAML, where nothing can be imported: they must equal
 * the defaults the code owns (the CLI's flags start from the same constants), so the Action and
 * `teamkeys plan` behave alike when neither is told otherwise.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { defaultGroup } from '../../src/api/resources.js';
import { formatDuration } from '../../src/duration.js';
import { defaultReconcileOptions } from '../../src/gitops/reconcile-defaults.js';
import { root } from '../support/cli.js';

const inputs = (parse(readFileSync(join(root, 'action.yml'), 'utf8')) as { inputs: Record<string, { default?: string }> }).inputs;

describe('action.yml defaults', () => {
  it.each([
    ['api-group', defaultGroup],
    ['max-prune', String(defaultReconcileOptions.maxPrune)],
    ['warn-expiry', formatDuration(defaultReconcileOptions.warnExpiryMs)],
    ['warn-unused', formatDuration(defaultReconcileOptions.warnUnusedMs)],
  ])('%s is the code default %s', (name, expected) => {
    expect(inputs[name]?.default).toBe(expected);
  });
});

describe('action.yml and docs/action.md agree', () => {
  it('source-id: both say to leave it unset (the default id is what the CLI and the sidecar compute)', () => {
    const docs = readFileSync(join(root, 'docs/action.md'), 'utf8');
    expect(docs).toContain('Leave `source-id` unset.');
    const description = (inputs['source-id'] as { description?: string }).description ?? '';
    expect(description).toMatch(/Leave it unset/);
    expect(description).not.toMatch(/\(set it;/);
    expect(inputs['source-id']?.default).toBe('');
  });
});
