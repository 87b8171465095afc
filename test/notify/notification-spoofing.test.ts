/**
 * What a key's writer controls in a notification. Any user may make a key of their own; its
 * annotations are theirs to write. The notifier took from them (1) the repository a GitHub receiver
 * opens the issue in, with the operator's token (`gitops.management.service/key-secret`), and (2)
 * the text of a KeyLeaked/KeyDisabled message (`management.service/disabled-reason`, sent verbatim
 * into Slack mrkdwn and GitHub Markdown): an ordinary user could have the server open issues in any
 * repository the token reaches, and post mentions and links into the security channel (found by a
 * review). Now the key's repository is used only under the receiver's own owner, and a writer's
 * text is shown only when it is plain words (notify/messages.ts plainOr).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseNotificationConfig } from '../../src/notify/config.js';
import { ManualClock, day } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { startReceiver, type TestReceiver } from './receiver.js';

const json = { 'Content-Type': 'application/json' };

describe('notifications built from what a key owner writes', () => {
  let receiver: TestReceiver;
  let s: InProcess;
  beforeAll(async () => {
    receiver = await startReceiver();
    const text = `apiVersion: notifications.management.service/v1
kind: Notifications
spec:
  receivers:
    - name: repo-issues
      github: {repository: acme/platform-ops, tokenEnv: GH_TOKEN, apiUrl: "${receiver.url}/api/"}
    - name: security-slack
      slack:
        urlEnv: SLACK_URL
  routes:
    - receiver: repo-issues
      events: [KeyLeaked, RotationFailed, DeliveryFailed]
    - receiver: security-slack
      events: [KeyLeaked, KeyDisabled]
`;
    const { config, errors } = parseNotificationConfig(text, 'n.yaml', { GH_TOKEN: 'gh-operator-token', SLACK_URL: `${receiver.url}/slack` });
    expect(errors).toEqual([]);
    const clock = new ManualClock('2026-08-01T09:00:00Z');
    s = await startInProcess({ now: clock.now, notifications: { config: config!, intervalMs: day }, keyHealth: { intervalMs: day } });
    await vi.waitFor(() => expect(s.notifier?.active).toBe(true));
  });
  afterAll(async () => {
    await s?.close();
    await receiver?.close();
  });

  it("an ordinary user cannot choose the repository the operator's token writes to, nor the alert's text", async () => {
    // mallory: a user with one key of her own, no role.
    const res = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'mallory-1' }, spec: { user: 'mallory' } }) });
    expect(res.status).toBe(201);
    const mallory = ((await res.json()) as { spec: { key: string } }).spec.key;

    // She makes another key of her own, disabled, with the annotations the notifier reads.
    const made = await fetch(`${s.api}/ownedaccesskeys`, {
      method: 'POST',
      headers: { ...json, Authorization: `Bearer ${mallory}` },
      body: JSON.stringify({
        metadata: {
          name: 'mallory-bait',
          annotations: {
            'gitops.management.service/key-secret': 'github:victim-org/private-repo/ANY',
            'management.service/disabled-reason': 'reported-leaked: <!channel> URGENT, all keys compromised: re-authenticate at <https://evil.example/login|teamkeys.example.com> @acme/security',
          },
        },
        spec: { user: 'mallory', disabled: true },
      }),
    });
    expect(made.status).toBe(201);

    await eventually('both messages are sent', () => receiver.received.length >= 2, 30_000);
    const issue = receiver.received.find((r) => r.path.includes('/issues'))!;
    const slack = receiver.received.find((r) => r.path === '/slack')!;
    // The operator's token opened an issue in a repository the user picked.
    expect(issue.headers.authorization).toBe('Bearer gh-operator-token');
    expect(issue.path).toBe('/api/repos/acme/platform-ops/issues');
    // The user's mention and link reach neither channel.
    for (const body of [slack.body, issue.body]) {
      expect(body).not.toContain('<!channel>');
      expect(body).not.toContain('evil.example');
      expect(body).not.toContain('@acme/security');
      expect(body).toContain('a reason not shown here (kubectl get ownedaccesskey mallory-bait -o yaml shows it)');
    }
  });

  it('plainOr keeps the reasons and targets the server writes, and nothing with markup', async () => {
    const { plainOr } = await import('../../src/notify/messages.js');
    for (const ours of ['reported-leaked', 'unused since 2026-08-01T00:00:00Z (no use for 90d; --disable-unused-after)', 'the value was not delivered to github:acme/app/DEPLOY_KEY', 'expires at 2026-12-01T00:00:00Z']) expect(plainOr(ours, 'x')).toBe(ours);
    for (const theirs of ['<!channel>', 'see https://evil.example', 're-authenticate at www.evil.example/login', 'evil.example', '@acme/security', '<b>x</b>', 'a\nb', 'x'.repeat(301)]) expect(plainOr(theirs, 'x')).toBe('x');
  });

  it("a disable reason in plain words is still a writer's own: shown only in the server's words; a holder named by an email is named", async () => {
    const { messageItem } = await import('../../src/notify/messages.js');
    const key = (owner: string) => ({ name: 'k1', uid: 'u', owner });
    const disabled = (detail: string, owner = 'user "alice@example.com"') => messageItem({ event: 'KeyDisabled', key: key(owner), occurrence: 'x', detail } as never).summary;
    expect(disabled('unused since 2026-08-01T00:00:00Z (no use for 90d; --disable-unused-after)')).toBe('access key "k1" of user "alice@example.com" was disabled: unused since 2026-08-01T00:00:00Z (no use for 90d; --disable-unused-after)');
    expect(disabled('please call the helpdesk now')).toBe('access key "k1" of user "alice@example.com" was disabled: a reason not shown here (kubectl get ownedaccesskey k1 -o yaml shows it)');
    expect(disabled('unused since 2026-08-01T00:00:00Z', 'user "@acme/security"')).toContain('of its holder was disabled');
  });
});
