/**
 * Owner notifications end to end, with a real HTTP receiver on loopback: an expiring key's owner
 * gets one digest a day; a key disabled as reported leaked (or by the unused-key sweep) arrives at
 * once, without waiting for a sweep; a receiver that is down is retried with backoff, reported
 * once it keeps failing, and gets the message exactly once after it comes back, across a server
 * restart on the same SQLite file; the HMAC signature verifies. Time is a ManualClock; the
 * notifier's sweep is run by the test (as its interval would).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { leakReportManager } from '../../src/api/key-notices.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseNotificationConfig, type NotificationConfig } from '../../src/notify/config.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { openStore } from '../../src/store/open.js';
import { ManualClock, day } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { startInProcess, type InProcess, type InProcessOptions } from '../support/in-process.js';
import { startReceiver, type TestReceiver } from './receiver.js';

const json = { 'Content-Type': 'application/merge-patch+json' };
const secret = 'hook-secret-for-the-test';
const leaked = { metadata: { annotations: { 'management.service/disabled-reason': 'reported-leaked' } }, spec: { disabled: true } };

function config(receiver: TestReceiver): NotificationConfig {
  const text = `apiVersion: notifications.management.service/v1
kind: Notifications
spec:
  receivers:
    - name: platform-hook
      webhook:
        url: ${receiver.url}/hook
        secretEnv: HOOK_SECRET
    - name: security-slack
      slack:
        urlEnv: SLACK_URL
  routes:
    - receiver: platform-hook
      teams: [platform]
    - receiver: security-slack
      events: [KeyLeaked]
`;
  const { config, errors } = parseNotificationConfig(text, 'notifications.yaml', { HOOK_SECRET: secret, SLACK_URL: `${receiver.url}/slack` });
  expect(errors).toEqual([]);
  return config!;
}

/** A metric's value from the text exposition (0 when the series is absent). */
function metric(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

const verifies = (r: { headers: Record<string, unknown>; body: string }) => {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(r.body).digest('hex')}`);
  const got = Buffer.from(String(r.headers['x-teamkeys-signature']));
  return got.length === expected.length && timingSafeEqual(got, expected);
};

// Each test takes 1-3 s on a quiet machine; the bounds below are 20x that, for a loaded one.
const slow = { timeout: 60_000 };
const wait = 30_000;

describe('owner notifications', () => {
  let receiver: TestReceiver;
  let server: InProcess | undefined;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    receiver.release();
    receiver.received.length = 0;
    await receiver.up();
  });

  async function serverAt(clock: ManualClock, opts: InProcessOptions = {}): Promise<InProcess> {
    const s = await startInProcess({ now: clock.now, notifications: { config: config(receiver), intervalMs: day }, ...opts, keyHealth: { intervalMs: day, ...opts.keyHealth } });
    await vi.waitFor(() => expect(s.notifier?.active).toBe(true));
    for (const team of ['platform', 'other']) {
      const res = await s.fetch(`${s.api}/teams`, { method: 'POST', body: JSON.stringify({ metadata: { name: team }, spec: {} }), headers: { 'Content-Type': 'application/json' } });
      expect([201, 409]).toContain(res.status); // 409: kept in the store across a restart
    }
    return s;
  }
  async function newKey(s: InProcess, name: string, spec: Record<string, unknown>): Promise<string> {
    const res = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name }, spec }) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { spec: { key: string } }).spec.key;
  }
  const patch = async (s: InProcess, name: string, body: unknown) => expect((await s.fetch(`${s.api}/ownedaccesskeys/${name}`, { method: 'PATCH', headers: json, body: JSON.stringify(body) })).status).toBe(200);
  /** Disables the key as a leak report does (server/leaks/leaked-keys.ts): its patch, by its field manager, which no API request may use. */
  const leak = (s: InProcess, name: string) => s.registry.ownedaccesskeys.patch(name, 'merge', leaked, { fieldManager: leakReportManager });
  const metrics = async (s: InProcess) => (await s.fetch(`${s.base}/metrics`)).text();

  it("an expiring key's owner gets one digest a day, signed, saying what to do, without the key", slow, async () => {
    const clock = new ManualClock('2026-08-01T09:00:00Z');
    server = await serverAt(clock);
    const value = await newKey(server, 'deploy', { team: 'platform', ttl: 20 * 86_400 });
    await newKey(server, 'elsewhere', { team: 'other', ttl: 20 * 86_400 });
    await server.notifier!.run();
    expect(receiver.received).toHaveLength(0); // 20 days out: not in the 14-day window yet

    clock.advance(7 * day);
    await server.notifier!.run();
    await server.notifier!.run();
    expect(receiver.received).toHaveLength(1);
    const [sent] = receiver.received;
    expect(sent!.path).toBe('/hook');
    expect(verifies(sent!)).toBe(true);
    expect(sent!.headers['x-teamkeys-event']).toBe('Digest');
    expect(sent!.body).not.toContain(value);
    const digest = JSON.parse(sent!.body) as { event: string; day: string; items: { event: string; key: { name: string }; summary: string; action: string }[] };
    expect(digest).toMatchObject({ event: 'Digest', day: '2026-08-08' });
    expect(digest.items.map((i) => [i.event, i.key.name])).toEqual([['KeyExpiring', 'deploy']]);
    expect(digest.items[0]!.summary).toBe('access key "deploy" of team:platform expires at 2026-08-21T09:00:00Z');
    expect(digest.items[0]!.action).toContain(`kubectl patch ownedaccesskey deploy --type merge -p '{"spec":{"ttl":${50 * 86_400}}}'`);

    // A key entering the window later the same day waits for tomorrow's digest, which repeats nothing.
    await newKey(server, 'later', { team: 'platform', ttl: 10 * 86_400 });
    await server.notifier!.run();
    expect(receiver.received).toHaveLength(1);
    clock.advance(day);
    await server.notifier!.run();
    clock.advance(day);
    await server.notifier!.run();
    expect(receiver.bodies('/hook').map((b) => [b.day, (b.items as { key: { name: string } }[]).map((i) => i.key.name)])).toEqual([
      ['2026-08-08', ['deploy']],
      ['2026-08-09', ['later']],
    ]);
    expect(receiver.received.every(verifies)).toBe(true);
    expect(metric(await metrics(server), 'teamkeys_notifications_total', 'receiver="platform-hook",event="Digest",outcome="delivered"')).toBe(2);

    // What the message said to do works: the key leaves the window, and a later ttl is warned of again only once it is near.
    await patch(server, 'deploy', { spec: { ttl: 50 * 86_400 } });
    await patch(server, 'later', { spec: { ttl: 40 * 86_400 } });
    clock.advance(day);
    await server.notifier!.run();
    expect(receiver.received).toHaveLength(2);
  });

  it('a key disabled as reported leaked, or by the unused-key sweep, is sent at once to every route that matches', slow, async () => {
    const clock = new ManualClock('2026-08-01T09:00:00Z');
    server = await serverAt(clock, { keyHealth: { disableUnusedAfterMs: 30 * day } });
    const value = await newKey(server, 'leaky', { team: 'platform' });
    await newKey(server, 'idle', { team: 'platform' });

    await leak(server, 'leaky'); // as POST /auth/revoke records it
    const [hook] = await eventually('the leak reaches the webhook', () => receiver.bodies('/hook').length === 1 && receiver.bodies('/hook'), wait);
    expect(hook).toMatchObject({ event: 'KeyLeaked', key: { name: 'leaky', owner: 'team:platform', team: 'platform' } });
    expect(String(hook!.action)).toContain('teamkeys rotate leaky');
    const slack = await eventually('the leak reaches Slack', () => receiver.bodies('/slack')[0], wait);
    expect(Object.keys(slack)).toEqual(['text']);
    expect(String(slack.text)).toContain('*KeyLeaked*: access key `leaky` of team:platform was reported leaked');
    expect(receiver.received.some((r) => r.body.includes(value))).toBe(false);
    await server.notifier!.run(); // the sweep finds the same leak: not sent again
    expect(receiver.received).toHaveLength(2);

    clock.advance(31 * day);
    await server.keyHealthSweep!.sweep();
    const disabled = await eventually('the unused key is reported disabled', () => receiver.bodies('/hook').find((b) => b.event === 'KeyDisabled'), wait);
    expect(disabled).toMatchObject({ key: { name: 'idle' } });
    expect(String(disabled.summary)).toMatch(/^access key "idle" of team:platform was disabled: never used since its creation at 2026-08-01T09:00:00Z/);
    expect(String(disabled.action)).toContain(`kubectl patch ownedaccesskey idle --type merge -p '{"spec":{"disabled":false}}'`);
    expect(receiver.bodies('/slack')).toHaveLength(1); // Slack's route takes leaks only
  });

  it('keys leaked while a delivery is in flight are all sent after it, without a sweep', slow, async () => {
    const clock = new ManualClock('2026-08-01T09:00:00Z');
    server = await serverAt(clock);
    for (const name of ['one', 'two', 'three']) await newKey(server, name, { team: 'platform' });
    const release = receiver.hold();
    await leak(server, 'one');
    await eventually('the first leak is being delivered (the receiver holds its answer)', () => receiver.bodies('/hook').length === 1, wait);
    const watch = server.registry.store.watch('/ownedaccesskeys/', await server.registry.store.currentRevision());
    await leak(server, 'two');
    await leak(server, 'three');
    const seen = new Set<string>();
    for await (const e of watch) if (seen.add(e.key).size === 2) break; // both changes reached the store's watchers
    watch.stop();
    release();
    await eventually('every leak reaches the webhook', () => receiver.bodies('/hook').length === 3, wait);
    expect(receiver.bodies('/hook').map((b) => (b.key as { name: string }).name).sort()).toEqual(['one', 'three', 'two']);
  });

  it("a GitHub receiver opens an issue in the repository that holds the key's secret, else in its own", slow, async () => {
    const clock = new ManualClock('2026-08-01T09:00:00Z');
    const text = `apiVersion: notifications.management.service/v1
kind: Notifications
spec:
  receivers:
    - name: repo-issues
      github: {repository: acme/ops, tokenEnv: GH_TOKEN, apiUrl: "${receiver.url}/api/"}
  routes:
    - receiver: repo-issues
      events: [KeyLeaked]
`;
    const { config: github } = parseNotificationConfig(text, 'n.yaml', { GH_TOKEN: 'gh-test-token' });
    server = await serverAt(clock, { notifications: { config: github!, intervalMs: day } });
    const value = await newKey(server, 'shipped', { team: 'platform' });
    await patch(server, 'shipped', { metadata: { annotations: { 'gitops.management.service/key-secret': 'github-env:acme/app/production/SHIPPED_KEY' } } });
    await newKey(server, 'org-wide', { team: 'platform' });
    await patch(server, 'org-wide', { metadata: { annotations: { 'gitops.management.service/key-secret': 'github-org:acme/ORG_KEY' } } });
    await leak(server, 'shipped');
    await eventually('the issue is opened', () => receiver.received.length === 1, wait);
    await leak(server, 'org-wide');
    await eventually('the second issue is opened', () => receiver.received.length === 2, wait);
    expect(receiver.received.map((r) => [r.path, r.headers.authorization])).toEqual([
      ['/api/repos/acme/app/issues', 'Bearer gh-test-token'],
      ['/api/repos/acme/ops/issues', 'Bearer gh-test-token'],
    ]);
    const issue = JSON.parse(receiver.received[0]!.body) as { title: string; body: string };
    expect(issue.title).toBe('teamkeys: KeyLeaked of access key shipped');
    expect(issue.body).toContain('What to do: `rotate it at once and replace the value wherever it is used: teamkeys rotate shipped;');
    expect(receiver.received[0]!.body).not.toContain(value);
  });

  describe('on SQLite', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'teamkeys-notify-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('a receiver that is down is retried with backoff, reported while it keeps failing, and gets the message once after it is back, across a restart', slow, async () => {
      const clock = new ManualClock('2026-08-01T09:00:00Z');
      const path = join(dir, 'restart.db');
      const lines: Record<string, unknown>[] = [];
      const logger = pino({ level: 'info' }, new Writable({ write: (c: Buffer, _e, cb) => (lines.push(JSON.parse(c.toString()) as Record<string, unknown>), cb()) }));
      await receiver.down();
      server = await serverAt(clock, { store: new CachedStore(openStore(`sqlite:${path}`)), logger });
      await newKey(server, 'leaky', { team: 'platform' });
      await leak(server, 'leaky');
      const failed = async () => metric(await metrics(server!), 'teamkeys_notifications_total', 'receiver="platform-hook",event="KeyLeaked",outcome="failed"');
      await eventually('the first attempt fails', async () => (await failed()) === 1, wait);
      // Not due again before its backoff; then 30 s, 1, 2, 4 minutes.
      await server.notifier!.run();
      expect(await failed()).toBe(1);
      for (const wait of [30, 60, 120, 240]) {
        clock.advance(wait * 1000);
        await server.notifier!.run();
      }
      expect(await failed()).toBe(5);
      expect(metric(await metrics(server), 'teamkeys_notification_receiver_failing', 'receiver="platform-hook"')).toBe(1);
      expect(lines.find((l) => l.level === 50 && String(l.msg).startsWith('notification receiver platform-hook keeps failing (5 attempts in a row'))).toBeDefined();
      await server.close();

      await receiver.up();
      server = await serverAt(clock, { store: new CachedStore(openStore(`sqlite:${path}`)) });
      await server.notifier!.run();
      expect(receiver.bodies('/hook')).toHaveLength(0); // the next attempt is 8 minutes after the fifth
      clock.advance(480 * 1000);
      await server.notifier!.run();
      clock.advance(day);
      await server.notifier!.run();
      const hooks = receiver.received.filter((r) => r.path === '/hook');
      expect(hooks.map((r) => (JSON.parse(r.body) as { event: string }).event)).toEqual(['KeyLeaked']);
      expect(verifies(hooks[0]!)).toBe(true);
      expect(metric(await metrics(server), 'teamkeys_notifications_total', 'receiver="platform-hook",event="KeyLeaked",outcome="delivered"')).toBe(1);
    });
  });
});
