/**
 * The ROTATION and VALUE AGE columns of `teamkeys keys` against a served process whose keys are
 * rotated through the rotation subresource (the rotation contract): never rotated, an overlap
 * running, a rotation awaiting delivery, and one rotated with no overlap.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyRow } from '../../src/auth/key-listing.js';
import { startServe, type Served } from '../server/serve-process.js';
import { teamkeys } from '../support/cli.js';

describe('teamkeys keys shows where each rotation stands', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-keys-rot-'));
  let served: Served;
  let flags: string[];
  const values: string[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${served.url}/apis/management.service/v1/ownedaccesskeys${path}`, {
      method,
      headers: { Authorization: `Bearer ${served.adminKey}`, 'Content-Type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await res.json()) as { spec?: { key?: string }; status?: unknown };
    if (json.spec?.key) values.push(json.spec.key);
    return { status: res.status, json };
  };
  const rotate = (name: string, spec: Record<string, unknown>) => api('POST', `/${name}/rotation`, { apiVersion: 'management.service/v1', kind: 'KeyRotation', spec });

  beforeAll(async () => {
    served = await startServe(['--insecure-http', '--log-level', 'warn']);
    writeFileSync(join(dir, 'admin.key'), served.adminKey);
    values.push(served.adminKey);
    flags = ['--server', served.url, '--token-file', join(dir, 'admin.key')];
    for (const name of ['plain', 'overlapping', 'awaiting', 'switched']) {
      expect((await api('POST', '', { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name }, spec: { user: 'ana', ttl: 60 * 86_400 } })).status).toBe(201);
    }
    expect((await rotate('overlapping', { overlapSeconds: 3600 })).status).toBe(201);
    expect((await rotate('awaiting', { overlapSeconds: 3600, awaitConfirmation: true })).status).toBe(201);
    expect((await rotate('switched', { overlapSeconds: 0 })).status).toBe(201);
  });
  afterAll(async () => {
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('json and table: none, overlap until T, awaiting delivery, rotated T; never a value', () => {
    const json = teamkeys(['keys', ...flags, '--user', 'ana', '-o', 'json']);
    expect(json.stderr).toBe('');
    const rows = Object.fromEntries((JSON.parse(json.stdout) as KeyRow[]).map((r) => [r.name, r]));
    expect(rows.plain!.rotation).toEqual({ state: 'none', rotatedAt: null, previousValidUntil: null, overlapSeconds: null, lastUsedValue: null });
    const overlap = rows.overlapping!.rotation;
    expect(overlap).toMatchObject({ state: 'overlap', overlapSeconds: 3600 });
    expect(Date.parse(overlap.previousValidUntil!) - Date.parse(overlap.rotatedAt!)).toBe(3600_000);
    expect(rows.awaiting!.rotation).toMatchObject({ state: 'awaiting-delivery', previousValidUntil: null, overlapSeconds: 3600 });
    expect(rows.switched!.rotation).toMatchObject({ state: 'rotated', overlapSeconds: 0 });
    expect(rows.switched!.valueAgeSeconds).toBeLessThanOrEqual(rows.switched!.ageSeconds!);

    const table = teamkeys(['keys', ...flags, '--user', 'ana']);
    const line = (name: string) => table.stdout.split('\n').find((l) => l.startsWith(`${name} `))!;
    expect(line('plain')).toMatch(/\s—\s+\d+s\s+—$/);
    expect(line('overlapping')).toContain(`overlap until ${overlap.previousValidUntil}`);
    expect(line('awaiting')).toMatch(/\sawaiting delivery\s/);
    expect(line('switched')).toContain(`rotated ${rows.switched!.rotation.rotatedAt}`);
    for (const v of values) expect(json.stdout + table.stdout).not.toContain(v);
  });
});
