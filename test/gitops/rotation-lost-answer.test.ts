/**
 * The reconciler's scheduled rotation when the server's answer is lost (issue 41, found point 7):
 * the rotation carries an idempotency key and is sent once more with it when no answer came, so
 * the server rotates once and says the value cannot be shown again; the run fails with the
 * previous value working (the rotation awaits confirmation), and the next run rotates and delivers.
 * A loopback proxy between the real CLI and the server forwards the first rotation and then cuts
 * the connection before the answer reaches the CLI.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import { teamkeysAsync } from '../support/cli.js';
import { day, ManualClock } from '../support/clock.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { monthlyKeyYaml } from '../support/manifests.js';

describe('a scheduled rotation whose answer is lost', () => {
  const clock = new ManualClock(Date.now() - 31 * day);
  const work = mkdtempSync(join(tmpdir(), 'teamkeys-lost-answer-'));
  const keyDir = join(work, 'keys');
  let server: InProcess;
  let proxy: Server;
  let proxyUrl = '';
  let rotationsForwarded = 0;
  let cutNextRotation = false;

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    proxy = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('end', () => {
        const rotation = req.method === 'POST' && /\/rotation(\?|$)/.test(req.url ?? '');
        const cut = rotation && cutNextRotation && !Buffer.concat(chunks).toString().includes('"confirm":true');
        if (rotation) rotationsForwarded++;
        const out = request(`${server.base}${req.url}`, { method: req.method, headers: req.headers }, (up) => {
          // The server answered (the rotation is made); the client never hears it.
          if (cut) {
            cutNextRotation = false;
            up.resume();
            up.on('end', () => req.socket.destroy());
            return;
          }
          res.writeHead(up.statusCode!, up.headers);
          up.pipe(res);
        });
        out.on('error', () => req.socket.destroy());
        out.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const address = proxy.address();
    proxyUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    writeFileSync(join(work, 'token'), `${adminKey}\n`);
    mkdirSync(join(work, 'src'));
    writeFileSync(
      join(work, 'src', 'deploy.yaml'),
      monthlyKeyYaml({ sink: 'file:deploy.key' }),
    );
  });
  afterAll(async () => {
    await new Promise((r) => proxy.close(r));
    await server.close();
    rmSync(work, { recursive: true, force: true });
  });

  const apply = async () => {
    const { code } = await teamkeysAsync(['apply', '--source', join(work, 'src'), '--source-id', 'lost', '--server', proxyUrl, '--token-file', join(work, 'token'), '--report-dir', join(work, 'reports'), '--key-dir', keyDir]);
    return { code, report: JSON.parse(readFileSync(join(work, 'reports', 'report.json'), 'utf8')) as Report };
  };
  const works = async (value: string) => (await fetch(`${server.api}/ownedaccesskeys/deploy-ci`, { headers: { Authorization: `Bearer ${value}` } })).status !== 401;
  const rotation = async () => ((await (await server.fetch(`${server.api}/ownedaccesskeys/deploy-ci`)).json()) as { status?: { rotation?: Record<string, unknown> } }).status?.rotation ?? {};

  it('is retried with its idempotency key, made once, reported, and done by the next run', async () => {
    expect((await apply()).code).toBe(0);
    const held = readFileSync(join(keyDir, 'deploy.key'), 'utf8').trim();
    clock.set(Date.now());

    cutNextRotation = true;
    rotationsForwarded = 0;
    const lost = await apply();
    expect(lost.code, JSON.stringify(lost.report.objects)).toBe(1);
    const entry = lost.report.objects.find((o) => o.name === 'deploy-ci')!;
    expect(entry.error).toContain('rotated, but the server returned no new value (the answer to the first request was lost, and a value the server made is not shown twice)');
    // Sent twice, made once: the retry was answered with the rotation the first request made.
    expect(rotationsForwarded).toBe(2);
    const made = await rotation();
    expect(made.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(made.awaitingConfirmation).toBe(true);
    expect(readFileSync(join(keyDir, 'deploy.key'), 'utf8').trim()).toBe(held);
    expect(await works(held)).toBe(true);

    const next = await apply();
    expect(next.code).toBe(0);
    const fresh = readFileSync(join(keyDir, 'deploy.key'), 'utf8').trim();
    expect(fresh).not.toBe(held);
    expect(await works(fresh)).toBe(true);
    expect((await rotation()).idempotencyKey).not.toBe(made.idempotencyKey);
  });
});
