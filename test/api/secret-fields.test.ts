/**
 * Every writeOnly field of the schemas, one row each: refused in a git manifest at its own
 * line, redacted in a report, and censored in a log line. The rows come from the schemas, so a
 * secret added to a schema is covered here without touching this file or the code under test.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { resourceModels } from '../../src/api/model.js';
import { loggerOptions } from '../../src/cli/logging.js';
import { redact } from '../../src/gitops/report/report.js';
import { parseManifests } from '../../src/gitops/source/manifests.js';
import { validateManifests } from '../../src/gitops/validate.js';

const models = Object.values(resourceModels());
const secret = 'S3cr3t-value-that-must-not-leak';

function setIn(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let node = obj;
  for (const part of path.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[path[path.length - 1]!] = value;
}

const rows = models.flatMap((m) => m.secretPaths.map((path) => ({ kind: m.info.kind, apiVersion: m.info.apiVersion, path })));

function objectWith(row: (typeof rows)[number]): Record<string, unknown> {
  const spec = row.kind === 'Team' ? { displayName: 'T' } : { team: 't' };
  const obj: Record<string, unknown> = { apiVersion: row.apiVersion, kind: row.kind, metadata: { name: 'x' }, spec };
  setIn(obj, row.path, secret);
  return obj;
}

describe('every writeOnly field of the schemas', () => {
  it('has rows: the schemas mark the known secrets writeOnly', () => {
    const dotted = rows.map((r) => r.path.join('.'));
    for (const known of ['spec.key', 'spec.identity.connectorData', 'spec.oidcLogin.idToken', 'spec.oidcLogin.refreshToken']) expect(dotted).toContain(known);
  });

  it.each(rows.map((r) => [`${r.kind} ${r.path.join('.')}`, r] as const))('%s is refused in git at its line', (_name, row) => {
    const text = stringify(objectWith(row));
    const { manifests } = parseManifests(text, 'repo/x.yaml');
    const { desired, errors } = validateManifests(manifests, models);
    expect(desired).toEqual([]);
    const dotted = row.path.join('.');
    const error = errors.find((e) => e.message.startsWith(`${dotted} must not be kept in git`));
    expect(error, JSON.stringify(errors)).toBeDefined();
    const line = text.split('\n').findIndex((l) => l.includes(secret)) + 1;
    expect(error!.line).toBe(line);
    expect(JSON.stringify(errors)).not.toContain(secret);
  });

  it.each(rows.map((r) => [`${r.kind} ${r.path.join('.')}`, r] as const))('%s is redacted in a report', (_name, row) => {
    const change = { path: row.path.join('.'), before: objectWith(row), after: { nested: objectWith(row) } };
    const out = JSON.stringify(redact(change));
    expect(out).not.toContain(secret);
    expect(out).toContain('[redacted]');
  });

  it.each(rows.map((r) => [`${r.kind} ${r.path.join('.')}`, r] as const))('%s is censored in a log line', (_name, row) => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const logger = pino(loggerOptions('info'), sink);
    logger.info(objectWith(row), 'the object itself');
    logger.info({ object: objectWith(row) }, 'an object one level down');
    logger.info({ [row.path[row.path.length - 1]!]: secret }, 'the field by its name');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).not.toContain(secret);
      expect(line).toContain('[redacted]');
    }
  });
});
