/**
 * Delivery before forgetting (issue 41, found point 3): `apply --key-dir` records each new key as
 * pending delivery to its `<name>.key` before the server makes the value, and confirms it once the
 * file holds it. The real CLI is killed (SIGKILL) at seeded points chosen by the server's store:
 * right after a key's create is stored (the answer, with the only copy of the value, never
 * arrives) or as a delivery is about to be confirmed (the file is written, the record is not).
 * The next plan must report every such key, and the next apply must leave each key's file holding
 * a value that authenticates. A write that fails (a file-size limit standing in for a full disk)
 * is reported and retried the same way.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { teamkeysAsync } from '../support/cli.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { accessKeyYaml } from '../support/manifests.js';
import { seededRandom, testSeed } from '../support/seeded-random.js';

const seed = testSeed(4117);
const runs = 5;
const keysPerRun = 6;

type KillPoint = { at: 'create' | 'confirm'; nth: number };

/** The server's store, which kills the CLI at the armed point (and, before a confirmation, keeps it from being stored). */
class KillingStore {
  armed?: { point: KillPoint; prefix: string; pid: number; seen: number };
  constructor(readonly inner: MemoryStore) {}
  proxy(): MemoryStore {
    return new Proxy(this.inner, {
      get: (target, prop, receiver) => {
        if (prop === 'create') return this.create.bind(this);
        if (prop === 'guaranteedUpdate') return this.guaranteedUpdate.bind(this);
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }
  private hit(kind: KillPoint['at'], key: string): boolean {
    const a = this.armed;
    if (!a || a.point.at !== kind || !key.includes(`ownedaccesskeys/${a.prefix}`)) return false;
    if (++a.seen !== a.point.nth) return false;
    process.kill(a.pid, 'SIGKILL');
    this.armed = undefined;
    return true;
  }
  async create(key: string, obj: never): Promise<never> {
    const made = await this.inner.create(key, obj);
    this.hit('create', key);
    return made as never;
  }
  async guaranteedUpdate(key: string, pre: never, tryUpdate: never): Promise<never> {
    if (this.hit('confirm', key)) throw new Error('the client was killed before this write');
    return this.inner.guaranteedUpdate(key, pre, tryUpdate) as Promise<never>;
  }
}

describe(`apply --key-dir killed at random points (seed ${seed}; replay with TEAMKEYS_TEST_SEED=${seed})`, () => {
  const work = mkdtempSync(join(tmpdir(), 'teamkeys-key-dir-delivery-'));
  const tokenFile = join(work, 'token');
  const killing = new KillingStore(new MemoryStore());
  let server: InProcess;

  beforeAll(async () => {
    writeFileSync(tokenFile, `${adminKey}\n`);
    server = await startInProcess({ store: new CachedStore(killing.proxy()) });
  });
  afterAll(async () => {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** A source of `count` keys named `<prefix>0..`, and the flags plan and apply share for it. */
  function fixture(prefix: string, count: number) {
    const dir = join(work, prefix);
    mkdirSync(join(dir, 'src'), { recursive: true });
    const names = Array.from({ length: count }, (_, i) => `${prefix}${i}`);
    for (const n of names) writeFileSync(join(dir, 'src', `${n}.yaml`), accessKeyYaml(n, { user: `${n}-user` }));
    const reports = join(dir, 'reports');
    const keyDir = join(dir, 'keys');
    const flags = ['--source', join(dir, 'src'), '--source-id', prefix, '--server', server.base, '--token-file', tokenFile, '--report-dir', reports];
    const report = () => JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report;
    const withoutReports = flags.slice(0, -2);
    return { names, keyDir, flags, withoutReports, report };
  }

  /** Whether a value authenticates against the server (a key without roles may be refused, 403, but not unknown, 401). */
  async function authenticates(value: string): Promise<boolean> {
    const res = await fetch(`${server.api}/teams`, { headers: { Authorization: `Bearer ${value}` } });
    return res.status !== 401;
  }

  /** Whether the key's file holds a value the server accepts. */
  async function delivered(keyDir: string, name: string): Promise<boolean> {
    const file = join(keyDir, `${name}.key`);
    return existsSync(file) && authenticates(readFileSync(file, 'utf8').trim());
  }

  it('a wrong value is refused (so the checks below can fail)', async () => {
    expect(await authenticates('x'.repeat(64))).toBe(false);
  });

  const random = seededRandom(seed);
  const points: KillPoint[] = Array.from({ length: runs }, () => ({ at: random() < 0.5 ? 'create' : 'confirm', nth: 1 + Math.floor(random() * keysPerRun) }));

  it.each(points.map((p, i) => [i, p] as const))('kill %i (%o): the next plan reports every stranded key and the next apply delivers it', async (i, point) => {
    const { names, keyDir, flags, report } = fixture(`r${i}-k`, keysPerRun);
    const killed = await teamkeysAsync(['apply', ...flags, '--key-dir', keyDir], { onSpawn: (pid) => (killing.armed = { point, prefix: `r${i}-k`, pid, seen: 0 }) });
    expect(killed.signal, 'the apply was killed').toBe('SIGKILL');
    const live = (await (await server.fetch(`${server.api}/ownedaccesskeys`)).json()) as { items: { metadata: { name: string; annotations?: Record<string, string> } }[] };
    const made = live.items.filter((k) => names.includes(k.metadata.name));
    const pending = made.filter((k) => k.metadata.annotations?.['gitops.management.service/key-delivered']?.startsWith('pending:')).map((k) => k.metadata.name);
    // The kill point guarantees a key whose delivery was not confirmed: its create's answer, or its confirmation, was lost.
    expect(pending.length).toBeGreaterThan(0);
    const stranded: string[] = [];
    for (const k of made) if (!(await delivered(keyDir, k.metadata.name))) stranded.push(k.metadata.name);
    // Never silently unchanged: every key without a working file is marked pending.
    for (const n of stranded) expect(pending, `${n} has no working file`).toContain(n);

    const plan = await teamkeysAsync(['plan', ...flags]);
    expect(plan.code, plan.stderr).toBe(0);
    const planned = report();
    // Every key whose delivery is pending is reported, to be rotated and delivered again.
    for (const n of pending) expect(planned.objects.find((o) => o.name === n)?.rotation?.reason, n).toBe('unrecorded');

    const again = await teamkeysAsync(['apply', ...flags, '--key-dir', keyDir]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const applied = report();
    for (const n of pending) expect(applied.objects.find((o) => o.name === n)?.rotation?.sink, n).toBe(`file:${n}.key`);
    for (const n of names) expect(await delivered(keyDir, n), `${n}: its file holds a working value`).toBe(true);
    // And the run after that has nothing left to deliver.
    const settled = await teamkeysAsync(['plan', ...flags, '--detailed-exitcode']);
    expect(settled.code, settled.stdout).toBe(0);
  });

  it('a key file that cannot be written (a full disk) is reported, and the next apply rotates and writes it', async () => {
    const { names, keyDir, flags, withoutReports, report } = fixture('full-k', 2);
    mkdirSync(keyDir, { recursive: true });
    // RLIMIT_FSIZE 0: every write of a non-empty file fails with EFBIG (Node ignores SIGXFSZ), as on a full disk.
    // (The report goes to stdout: no file can be written in this run.)
    const failed = await teamkeysAsync(['apply', ...withoutReports, '--key-dir', keyDir, '-o', 'json'], { shell: 'ulimit -f 0' });
    expect(failed.code, failed.stderr).toBe(1);
    const first = JSON.parse(failed.stdout) as Report;
    for (const n of names) {
      const entry = first.objects.find((o) => o.name === n)!;
      expect(entry.result).toBe('Failed');
      expect(entry.error).toMatch(/its key was not written: .*the next plan reports it and the next apply rotates it and writes it again/);
      expect(await delivered(keyDir, n)).toBe(false);
    }
    const plan = await teamkeysAsync(['plan', ...flags, '--detailed-exitcode']);
    expect(plan.code, 'changes pending').toBe(2);
    for (const n of names) expect(report().objects.find((o) => o.name === n)?.rotation?.reason).toBe('unrecorded');
    const again = await teamkeysAsync(['apply', ...flags, '--key-dir', keyDir]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    for (const n of names) expect(await delivered(keyDir, n)).toBe(true);
  });
});
