import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { SchemaId } from '../../src/api/resources.js';
import { validatorFor } from '../../src/api/schema/load.js';
// @ts-expect-error: a plain .mjs script without types; the test uses the generator's own ajv options.
import { schemaAjv } from '../../scripts/gen-validators.mjs';

const root = new URL('../../', import.meta.url).pathname;
const schemaOf: Record<string, SchemaId> = { Team: 'team.schema.json', OwnedAccessKey: 'ownedaccesskey.schema.json' };

function examples(): Record<string, unknown>[] {
  const dir = join(root, 'examples/gitops');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.yaml'));
  return files.flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as Record<string, unknown>));
}

/** Copies of an example, each wrong in one way or several (every keyword the schemas use). */
function invalid(team: Record<string, unknown>, key: Record<string, unknown>): Record<string, unknown>[] {
  const spec = (o: Record<string, unknown>) => o.spec as Record<string, unknown>;
  return [
    { ...team, apiVersion: 7 },
    { ...team, kind: 'Teams' },
    { kind: 'Team' },
    { ...team, metadata: { ...(team.metadata as object), creationTimestamp: 'yesterday', generation: 'one', managedFields: [{ operation: 'Merge', fieldsType: 'FieldsV2' }] } },
    { ...team, spec: { ...spec(team), users: 'ana', clusterRoles: [{ name: 3 }], unknownField: true } },
    { ...team, spec: { ...spec(team), access: [{ name: 'x', verbs: 'get', teams: [1] }] } },
    { ...key, kind: 'OwnedAccessKey', apiVersion: null },
    { ...key, spec: { ...spec(key), key: 'short!', ttl: -1, type: 'Admin' } },
    { ...key, spec: { ...spec(key), key: 'A'.repeat(300), ttl: 1.5, scope: { roles: [{ role: 'root' }] } } },
    { ...key, spec: { ...spec(key), ttl: '99999999999999999999999' } },
    { ...key, metadata: { name: 'k', resourceVersion: 5, labels: { a: 1 } }, spec: null },
    [],
    'Team',
  ] as Record<string, unknown>[];
}

describe('the validators compiled at build time', () => {
  it('the committed validators are exactly what schemas/ generates', () => {
    // Exits non-zero (and this throws) when someone edits a schema without regenerating.
    expect(() => execFileSync(process.execPath, ['scripts/gen-validators.mjs', '--check'], { cwd: root, stdio: 'pipe' })).not.toThrow();
  });

  it('give the same verdict and the same errors as ajv compiling the schemas at run time', async () => {
    const runtime = (await schemaAjv()) as { getSchema(id: string): ((data: unknown) => boolean) & { errors?: unknown } };
    const docs = examples();
    const team = docs.find((d) => d.kind === 'Team')!;
    const key = docs.find((d) => d.kind === 'OwnedAccessKey')!;
    expect(docs.length).toBeGreaterThanOrEqual(4);
    const cases = [...docs.map((doc) => ({ doc, valid: true })), ...invalid(team, key).map((doc) => ({ doc, valid: false }))];
    for (const { doc, valid } of cases) {
      const own = schemaOf[String((doc as { kind?: unknown }).kind)];
      // Every document against both kinds' schemas: the two validators must agree everywhere.
      for (const id of Object.values(schemaOf)) {
        const ahead = validatorFor(id);
        const now = runtime.getSchema(id);
        const verdict = ahead(doc);
        expect(verdict, JSON.stringify(doc)).toBe(now(doc));
        if (id === own) expect(verdict, JSON.stringify(doc)).toBe(valid);
        // Same keyword, path, params, message, schema and offending value, in the same order.
        expect(ahead.errors ?? null).toEqual(now.errors ?? null);
      }
    }
  });
});
