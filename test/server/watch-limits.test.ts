/**
 * Open watches per access key are capped (--max-watches-per-key): one more is a 429 Status with
 * Retry-After, other keys are not affected, and a closed watch frees its place.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';
import { startServe, type Served } from './serve-process.js';

const adminKey = `WatchCap${'w'.repeat(52)}`;

describe('watches per access key', () => {
  let served: Served;
  const open: AbortController[] = [];
  const api = () => `${served.url}/apis/management.service/v1`;
  const watch = async (key: string, resource = 'teams') => {
    const ac = new AbortController();
    const res = await fetch(`${api()}/${resource}?watch=true`, { headers: { Authorization: `Bearer ${key}` }, signal: ac.signal });
    if (res.status === 200) open.push(ac);
    return res;
  };

  beforeAll(async () => {
    served = await startServe(['--insecure-http', '--max-watches-per-key', '3'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
  });
  afterAll(async () => {
    for (const ac of open) ac.abort();
    await served?.stop();
  });

  it('the watch over the limit is 429 with Retry-After; another key still watches; closing one frees a place', async () => {
    for (let i = 0; i < 3; i++) expect((await watch(adminKey)).status).toBe(200);
    const refused = await watch(adminKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({
      kind: 'Status',
      code: 429,
      reason: 'TooManyRequests',
      message: 'too many watches open for this access key (the limit is 3); close one or retry later',
      details: { retryAfterSeconds: 1 },
    });

    const created = await fetch(`${api()}/ownedaccesskeys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'bob' }, spec: { user: 'bob' } }),
    });
    expect(created.status).toBe(201);
    const bobKey = ((await created.json()) as { spec: { key: string } }).spec.key;
    expect((await watch(bobKey, 'ownedaccesskeys')).status).toBe(200);

    open.shift()!.abort();
    let status = 0;
    for (let waited = 0; waited < 5000; waited += 100) {
      const res = await watch(adminKey);
      status = res.status;
      if (status === 200) break;
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
  });

  it('refuses a limit that is not a whole number above 0', () => {
    const run = teamkeys(['serve', '--max-watches-per-key', '0', '--store', 'memory:', '--insecure-http']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--max-watches-per-key must be a whole number above 0, not "0"');
  });
});
