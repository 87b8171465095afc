/**
 * `teamkeys rotate` against a real `teamkeys serve` process and against the embedded store: the
 * new value on stdout only (or in a 0600 --key-file), both values working during the overlap, the
 * previous one refused at once without one, confirmation, bad flags, and the audit trail.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startServe, type Served } from '../server/serve-process.js';
import { teamkeys } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-rotate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('teamkeys rotate against a served process', () => {
  let served: Served;
  beforeAll(async () => {
    served = await startServe(['--insecure-http']);
  }, 30_000);
  afterAll(async () => {
    await served?.stop();
  });

  const call = async (path: string, token: string, init: RequestInit = {}) => {
    const res = await fetch(`${served.url}${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } });
    return { status: res.status, body: (await res.json()) as { message?: string; items?: unknown[]; status?: { rotation?: Record<string, unknown> } } };
  };
  const newKey = async (name: string) => {
    const res = await call('/apis/management.service/v1/ownedaccesskeys', served.adminKey, { method: 'POST', body: JSON.stringify({ metadata: { name }, spec: { user: name } }) });
    expect(res.status).toBe(201);
    return (res.body as { spec?: { key: string } }).spec!.key;
  };
  const rotate = (args: string[]) => teamkeys(['rotate', ...args, '--server', served.url], { env: { TEAMKEYS_TOKEN: served.adminKey } });
  const works = async (token: string) => (await call('/apis/management.service/v1/teams', token)).status;

  it('prints the new value on stdout only; both values work during the overlap', async () => {
    const old = await newKey('ci');
    const r = rotate(['ci', '--overlap', '1h']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^tk_[0-9A-Za-z]{49}\n$/);
    const fresh = r.stdout.trim();
    expect(r.stderr).toMatch(/^ownedaccesskey\.management\.service\/ci rotated; the previous value works until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/);
    expect(await works(old)).toBe(200);
    expect(await works(fresh)).toBe(200);
    const key = await call('/apis/management.service/v1/ownedaccesskeys/ci', served.adminKey);
    expect(key.body.status?.rotation).toMatchObject({ overlapSeconds: 3600 });
    expect(JSON.stringify(key.body)).not.toContain(fresh);
  });

  it('without --overlap the previous value is refused at once, naming the rotation', async () => {
    const old = await newKey('now');
    const r = rotate(['now']);
    expect(r.code, r.stderr).toBe(0);
    const refused = await call('/apis/management.service/v1/teams', old);
    expect(refused.status).toBe(401);
    expect(refused.body.message).toMatch(/^access key "now" was rotated at \S+; its previous value stopped working at \S+$/);
    expect(await works(r.stdout.trim())).toBe(200);
  });

  it('--key-file writes the value 0600 and prints none; a link in its place is refused before anything rotates', async () => {
    const old = await newKey('filed');
    const file = join(dir, 'filed.key');
    const r = rotate(['filed', '--overlap', '5m', '--key-file', file]);
    expect(r.code, r.stderr).toBe(0);
    const value = readFileSync(file, 'utf8').trim();
    expect(value).toMatch(/^tk_[0-9A-Za-z]{49}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(r.stdout).toBe(`ownedaccesskey.management.service/filed rotated; the previous value works until ${(await call('/apis/management.service/v1/ownedaccesskeys/filed', served.adminKey)).body.status!.rotation!.previousValidUntil as string}; the new value is in ${file}\n`);
    expect(r.stderr + r.stdout).not.toContain(value);
    expect(await works(value)).toBe(200);
    expect(await works(old)).toBe(200);
    const link = join(dir, 'link.key');
    symlinkSync(join(dir, 'elsewhere'), link);
    const refused = rotate(['filed', '--key-file', link]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is a symbolic link or not a regular file');
    expect(await works(value)).toBe(200);
  });

  it('--await-confirmation keeps the previous value until --confirm; a second --confirm is a conflict', async () => {
    const old = await newKey('staged');
    const r = rotate(['staged', '--overlap', '0', '--await-confirmation']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('the previous value works until the rotation is confirmed');
    expect(await works(old)).toBe(200);
    const confirmed = rotate(['staged', '--confirm']);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stdout).toMatch(/^ownedaccesskey\.management\.service\/staged: rotation confirmed; the previous value works until \S+\n$/);
    expect(await works(old)).toBe(401);
    const again = rotate(['staged', '--confirm']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('no rotation of this key awaits confirmation');
  });

  it('--overlap 0s (or 0m) is no overlap, as 0 is: the previous value is refused at once', async () => {
    for (const zero of ['0s', '0m']) {
      const old = await newKey(`zero-${zero}`);
      const r = rotate([`zero-${zero}`, '--overlap', zero]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/rotated; the previous value works until now\n$|rotated; the previous value works until \S+\n$/);
      expect((await call('/apis/management.service/v1/teams', old)).status).toBe(401);
      expect(await works(r.stdout.trim())).toBe(200);
    }
  });

  it('refuses bad flags before anything is sent, and reports the server\'s refusals', async () => {
    for (const [flag, message] of [
      ['31d', '--overlap may be at most 30d, not "31d"'],
      ['1500ms', '--overlap must be whole seconds'],
      ['soon', '--overlap must be a duration such as 30s'],
    ]) {
      const r = rotate(['ci', '--overlap', flag!]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(message);
      expect(r.stdout).toBe('');
    }
    const missing = rotate(['nosuchkey']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('"nosuchkey" not found');
  });

  it('the audit trail records each rotation by its subresource and manager, never a value', async () => {
    await newKey('audited');
    const r = rotate(['audited', '--overlap', '90s']);
    expect(r.code, r.stderr).toBe(0);
    const events = await call('/apis/audit.management.service/v1/events?name=audited', served.adminKey);
    expect(JSON.stringify(events.body)).not.toContain(r.stdout.trim());
    const rotations = (events.body.items as { verb: string; fieldManager: string; objectRef: { subresource?: string }; annotations?: Record<string, string> }[]).filter((e) => e.objectRef.subresource === 'rotation');
    expect(rotations.map((e) => [e.verb, e.fieldManager, e.annotations])).toEqual([
      ['update', 'teamkeys', { 'rotation.management.service/overlap-seconds': '90', 'rotation.management.service/generated': 'true' }],
    ]);
  });
});

describe('teamkeys rotate on the embedded store', () => {
  const store = `sqlite:${join(dir, 'store.db')}`;

  it('is in the shell completion, with its flags', () => {
    const bash = teamkeys(['completion', 'bash']).stdout;
    expect(bash).toMatch(/compgen -W '[^']*\brotate\b/);
    const start = bash.indexOf('    rotate)');
    const section = bash.slice(start, bash.indexOf('\n      ;;', start));
    for (const flag of ['--overlap', '--await-confirmation', '--confirm', '--key-file', '--server', '--store']) expect(section).toContain(flag);
  });

  it('rotates, shows status.rotation in get, and never the value', () => {
    const manifest = join(dir, 'key.yaml');
    writeFileSync(manifest, ['apiVersion: management.service/v1', 'kind: OwnedAccessKey', 'metadata:', '  name: local', 'spec:', '  user: ana', ''].join('\n'));
    expect(teamkeys(['create', '-f', manifest, '--store', store]).code).toBe(0);
    const r = teamkeys(['rotate', 'local', '--overlap', '5m', '--store', store]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^tk_[0-9A-Za-z]{49}\n$/);
    const shown = teamkeys(['get', 'oak', 'local', '-o', 'yaml', '--store', store]);
    const obj = parse(shown.stdout) as { spec: Record<string, unknown>; status: { rotation: Record<string, unknown> } };
    expect(obj.spec.key).toBeUndefined();
    expect(obj.status.rotation).toMatchObject({ overlapSeconds: 300 });
    expect(shown.stdout).not.toContain(r.stdout.trim());
    const keyFile = join(dir, 'local.key');
    writeFileSync(keyFile, 'the value in use\n', { mode: 0o600 });
    const dry = teamkeys(['rotate', 'local', '--dry-run', '--key-file', keyFile, '--store', store]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^ownedaccesskey\.management\.service\/local rotated; the previous value works until \S+ \(dry run: nothing was changed\)\n$/);
    expect(readFileSync(keyFile, 'utf8')).toBe('the value in use\n');
    expect((parse(teamkeys(['get', 'oak', 'local', '-o', 'yaml', '--store', store]).stdout) as typeof obj).status.rotation).toEqual(obj.status.rotation);
  });
});
