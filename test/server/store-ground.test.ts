/**
 * The SQLite store watches its own ground (src/store/backends/sqlite-guard.ts), on a real
 * `teamkeys serve`:
 * - its files removed under it: writes 503 with Retry-After, /readyz unready, a log line says why;
 *   a restart on the state directory refuses to make a new store silently and names --start-empty;
 * - a full disk (a small tmpfs this test mounts): 503 with Retry-After, /readyz unready, and ready
 *   again once space returns, with every acknowledged write (and its audit event) still there;
 * - a file system the kernel turned read-only under it (ext4 on a loop device, errors=remount-ro,
 *   an error triggered through sysfs): 503 with Retry-After and /readyz unready.
 * Mounting needs root: where this machine cannot mount, those cases are skipped with a loud message.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bin } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { startServe, type Served } from '../support/serve-process.js';

const adminKey = `StoreGround${'g'.repeat(53)}`;
const dir = mkdtempSync(join(tmpdir(), 'teamkeys-ground-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sh = (cmd: string) => spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });

/** Whether this machine lets the test mount a tmpfs (root, and a kernel that allows it here). */
function canMount(): boolean {
  const probe = mkdtempSync(join(tmpdir(), 'teamkeys-mount-probe-'));
  const ok = sh(`mount -t tmpfs -o size=1m tmpfs ${probe} && umount ${probe}`).status === 0;
  rmSync(probe, { recursive: true, force: true });
  if (!ok) process.stderr.write('\n!!! store-ground.test.ts: this machine cannot mount a tmpfs (not root?): the disk-full and read-only cases are SKIPPED !!!\n\n');
  return ok;
}
const mountable = canMount();

const readyz = (s: Served) => fetch(`${s.url.replace(/\/kubernetes\/management$/, '')}/readyz`);
const create = (s: Served, name: string) =>
  fetch(`${s.url}/apis/management.service/v1/teams`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${adminKey}` },
    body: JSON.stringify({ metadata: { name } }),
  });
const get = (s: Served, name: string) => fetch(`${s.url}/apis/management.service/v1/teams/${name}`, { headers: { Authorization: `Bearer ${adminKey}` } });

/** A 503 the way clients retry it: Retry-After, a Status with reason ServiceUnavailable. */
async function expectUnavailable(res: Response, says: string): Promise<void> {
  const body = (await res.json()) as { reason?: string; message?: string };
  expect({ status: res.status, retryAfter: res.headers.get('retry-after'), reason: body.reason }).toEqual({ status: 503, retryAfter: '1', reason: 'ServiceUnavailable' });
  expect(body.message).toContain(says);
}

/** Creates teams until one is refused (at most `max`); returns the names acknowledged and the refusal. */
async function createUntilRefused(s: Served, prefix: string, max: number): Promise<{ acknowledged: string[]; refused: Response | undefined }> {
  const acknowledged: string[] = [];
  for (let i = 0; i < max; i++) {
    const res = await create(s, `${prefix}-${i}`);
    if (res.status !== 201) return { acknowledged, refused: res };
    acknowledged.push(`${prefix}-${i}`);
  }
  return { acknowledged, refused: undefined };
}

describe('the store file removed under a running server', () => {
  it('answers writes 503, goes unready and says why; a restart on the state directory refuses to start empty unless told', async () => {
    const stateDir = join(dir, 'removed-state');
    mkdirSync(stateDir);
    const db = join(stateDir, 'teamkeys.db');
    const args = ['--store', `sqlite:${db}`, '--state-dir', stateDir, '--insecure-http'];
    const served = await startServe(args, { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    try {
      for (let i = 0; i < 5; i++) expect((await create(served, `before-${i}`)).status).toBe(201);
      for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });

      const refused = await eventually('a write is refused', async () => {
        const res = await create(served, `after-${Date.now()}`);
        return res.status === 201 ? undefined : res;
      });
      await expectUnavailable(refused, 'the SQLite file was removed');
      expect((await create(served, 'one-more')).status).toBe(503);
      expect((await readyz(served)).status).toBe(503);
      expect(served.stderr()).toContain('the SQLite file was removed from under the running server: writes are refused with 503 and /readyz is unready');
    } finally {
      await served.stop();
    }

    // A restart on the same state directory and store: refused, naming the flag, and no new file made.
    const restart = spawnSync(process.execPath, [bin, 'serve', '--listen', '127.0.0.1:0', ...args, '--encryption-key-file', `${db}.encryption.yaml`], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, TEAMKEYS_ADMIN_KEY: adminKey },
    });
    expect(restart.signal, 'the server refused to start rather than serve').toBeNull();
    expect(restart.status).not.toBe(0);
    expect(restart.stderr).toContain(`the SQLite store ${db} is missing`);
    expect(restart.stderr).toContain('--start-empty');
    expect(existsSync(db)).toBe(false);

    // Told to, it starts on a new, empty store.
    const empty = await startServe([...args, '--start-empty'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    try {
      expect((await get(empty, 'before-0')).status).toBe(404);
      expect((await readyz(empty)).status).toBe(200);
    } finally {
      await empty.stop();
    }
  }, 90_000);
});

describe.runIf(mountable)('a full disk and a read-only file system under a running server', () => {
  it('a full disk: writes 503 with Retry-After and /readyz unready; ready again once space returns, nothing acknowledged lost', async () => {
    const mnt = join(dir, 'full');
    mkdirSync(mnt);
    expect(sh(`mount -t tmpfs -o size=6m tmpfs ${mnt}`).status).toBe(0);
    let served: Served | undefined;
    try {
      const db = join(mnt, 'teamkeys.db');
      served = await startServe(['--store', `sqlite:${db}`, '--state-dir', join(mnt, 'state'), '--insecure-http'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
      const before = await createUntilRefused(served, 'roomy', 5);
      expect(before.acknowledged).toHaveLength(5);

      // Fill the file system to the last block.
      const filler = join(mnt, 'filler');
      const fd = openSync(filler, 'w');
      const chunk = Buffer.alloc(64 * 1024, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      } finally {
        closeSync(fd);
      }
      // The WAL may still have room of its own: writes go on until a page is needed that the disk has not got.
      const full = await createUntilRefused(served, 'full', 2000);
      expect(full.refused, 'a write was refused once the disk was full').toBeDefined();
      await expectUnavailable(full.refused!, 'the disk holding the SQLite file is full');
      expect((await readyz(served)).status).toBe(503);
      expect(served.stderr()).toContain('the disk holding the SQLite file is full: writes are answered 503 and /readyz is unready until a write succeeds');

      rmSync(filler);
      await eventually('/readyz is ready once space returns', async () => (await readyz(served!)).status === 200);
      expect((await create(served, 'after-space')).status).toBe(201);
      expect(served.stderr()).toContain('the SQLite file takes writes again');
      const acknowledged = [...before.acknowledged, ...full.acknowledged];
      for (const name of acknowledged) expect((await get(served, name)).status, name).toBe(200);
      // And each has its audit event, though the disk filled up around them.
      const events = await fetch(`${served.url}/apis/audit.management.service/v1/events?resource=teams&limit=5000`, { headers: { Authorization: `Bearer ${adminKey}` } });
      const audited = new Set(((await events.json()) as { items: { verb: string; objectRef: { name: string } }[] }).items.filter((e) => e.verb === 'create').map((e) => e.objectRef.name));
      expect(acknowledged.filter((name) => !audited.has(name))).toEqual([]);
    } finally {
      await served?.stop();
      sh(`umount ${mnt}`);
    }
  }, 120_000);

  it('a file system turned read-only by the kernel: writes 503 with Retry-After, /readyz unready, a log line says why', async () => {
    const image = join(dir, 'ro.img');
    const mnt = join(dir, 'ro');
    mkdirSync(mnt);
    const made = sh(`dd if=/dev/zero of=${image} bs=1M count=16 status=none && mkfs.ext4 -q ${image} && mount -o loop,errors=remount-ro ${image} ${mnt}`);
    if (made.status !== 0) {
      process.stderr.write(`\n!!! store-ground.test.ts: cannot mount an ext4 loop device here (${made.stderr.trim()}): the read-only case is SKIPPED !!!\n\n`);
      return;
    }
    let served: Served | undefined;
    try {
      const db = join(mnt, 'teamkeys.db');
      served = await startServe(['--store', `sqlite:${db}`, '--state-dir', join(mnt, 'state'), '--insecure-http'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
      expect((await create(served, 'writable')).status).toBe(201);
      // What ext4 does on an I/O error with errors=remount-ro: the file system turns read-only under the open files.
      const device = basename(sh(`findmnt -n -o SOURCE ${mnt}`).stdout.trim());
      expect(sh(`echo teamkeys-test > /sys/fs/ext4/${device}/trigger_fs_error`).status).toBe(0);
      const res = await create(served, 'read-only');
      await expectUnavailable(res, 'the disk holding the SQLite file failed a write');
      expect((await readyz(served)).status).toBe(503);
      expect(served.stderr()).toMatch(/the disk holding the SQLite file failed a write \(SQLITE_IOERR[A-Z_]*\): writes are answered 503/);
      expect((await get(served, 'writable')).status).toBe(200);
    } finally {
      await served?.stop();
      sh(`umount ${mnt}`);
    }
  }, 120_000);
});
