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

  it("an ordinary user cannot choose the repository the operator's token writes to, nor the alert's text, nor raise a leak alarm, nor flood by rewriting", async () => {
    // mallory: a user with one key of her own, no role.
    const res = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'mallory-1' }, spec: { user: 'mallory' } }) });
    expect(res.status).toBe(201);
    const mallory = ((await res.json()) as { spec: { key: string } }).spec.key;
    const asMallory = { ...json, Authorization: `Bearer ${mallory}` };

    // She makes another key of her own, disabled, with the annotations the notifier reads: the
    // server's words for a leak, with a mention and a link after them.
    const made = await fetch(`${s.api}/ownedaccesskeys`, {
      method: 'POST',
      headers: asMallory,
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
    const bait = ((await made.json()) as { spec: { key: string } }).spec.key;

    // A key its holder disabled is a KeyDisabled, its text not shown: no leak alarm, no issue.
    await eventually('the disable is sent', () => receiver.received.length >= 1, 30_000);
    await s.notifier!.run();
    expect(receiver.received.map((r) => r.path)).toEqual(['/slack']);
    expect(receiver.received[0]!.body).toContain('*KeyDisabled*: access key `mallory-bait` of mallory was disabled: a reason not shown here (kubectl get ownedaccesskey mallory-bait -o yaml shows it)');
    // Rewriting the text is no new event (a review had 25 rewrites send 25 messages).
    for (let i = 0; i < 10; i++) {
      const rewrite = await fetch(`${s.api}/ownedaccesskeys/mallory-bait`, { method: 'PATCH', headers: { ...asMallory, 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { annotations: { 'management.service/disabled-reason': `reason ${i}` } } }) });
      expect(rewrite.status).toBe(200);
    }
    // Nor may she write as the server's leak report does.
    const asServer = await fetch(`${s.api}/ownedaccesskeys/mallory-bait?fieldManager=teamkeys-leak-report`, { method: 'PATCH', headers: { ...asMallory, 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { annotations: { 'management.service/disabled-reason': 'reported-leaked' } } }) });
    expect(asServer.status).toBe(422);
    expect(((await asServer.json()) as { message: string }).message).toContain("fieldManager: Invalid value: \"teamkeys-leak-report\": it names one of the server's own writers");
    // A client's own name that merely starts like the server's is its business.
    const terraform = await fetch(`${s.api}/ownedaccesskeys/mallory-1?fieldManager=teamkeys-terraform`, { method: 'PATCH', headers: { ...asMallory, 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { labels: { by: 'terraform' } } }) });
    expect(terraform.status).toBe(200);
    expect(((await terraform.json()) as { metadata: { managedFields: { manager: string }[] } }).metadata.managedFields.map((e) => e.manager)).toContain('teamkeys-terraform');
    const byAgent = await fetch(`${s.api}/ownedaccesskeys/mallory-bait`, { method: 'PATCH', headers: { ...asMallory, 'Content-Type': 'application/merge-patch+json', 'User-Agent': 'teamkeys-leak-report/1.0' }, body: JSON.stringify({ metadata: { annotations: { 'management.service/disabled-reason': 'reported-leaked: by the agent' } } }) });
    expect(byAgent.status).toBe(200);
    await s.notifier!.run();
    expect(receiver.received).toHaveLength(1);

    // Reported leaked for real (anyone who finds the value): now the server's alarm, in its words.
    expect((await fetch(`${s.base}/auth/revoke`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `token=${bait}` })).status).toBe(200);
    await eventually('the leak is sent to both', () => receiver.received.length >= 3, 30_000);
    const issue = receiver.received.find((r) => r.path.includes('/issues'))!;
    const slack = receiver.received.filter((r) => r.path === '/slack').at(-1)!;
    // The operator's token opened the issue in its own repository, not one the user picked.
    expect(issue.headers.authorization).toBe('Bearer gh-operator-token');
    expect(issue.path).toBe('/api/repos/acme/platform-ops/issues');
    expect(slack.body).toContain('*KeyLeaked*: access key `mallory-bait` of mallory was reported leaked and is disabled (reported-leaked)');
    // Rewriting the reason of the key the leak report disabled sends the alarm once more at most,
    // never once per rewrite (the occurrence is then the server's write, which she cannot move).
    const before = receiver.received.length;
    for (let i = 0; i < 5; i++) {
      const rewrite = await fetch(`${s.api}/ownedaccesskeys/mallory-bait`, { method: 'PATCH', headers: { ...asMallory, 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { annotations: { 'management.service/disabled-reason': `rewritten ${i}` } } }) });
      expect(rewrite.status).toBe(200);
    }
    await s.notifier!.run();
    await new Promise((r) => setTimeout(r, 300));
    await s.notifier!.run();
    expect(receiver.received.length - before).toBeLessThanOrEqual(2);
    // The user's mention and link reach neither channel.
    for (const r of receiver.received) {
      expect(r.body).not.toContain('<!channel>');
      expect(r.body).not.toContain('evil.example');
      expect(r.body).not.toContain('@acme/security');
    }
  });

  it('a key named like a host name is shown in a code span where Markdown is rendered, not as a link', async () => {
    const { slackBody, githubIssue, messageItem } = await import('../../src/notify/messages.js');
    const item = messageItem({ event: 'KeyDisabled', key: { name: 'www.teamkeys-reauth.evil.example', uid: 'u', owner: 'mallory' }, occurrence: 'x', detail: '' });
    const message = { kind: 'event' as const, item };
    expect(JSON.parse(slackBody(message)).text).toContain('access key `www.teamkeys-reauth.evil.example` of mallory');
    expect((JSON.parse(githubIssue(message, 'acme/ops').body) as { body: string }).body).toContain('access key `www.teamkeys-reauth.evil.example` of mallory');
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
