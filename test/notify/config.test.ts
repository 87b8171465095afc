/**
 * The notifications file is checked like the manifests: every problem at its file:line:col, and
 * `teamkeys serve --notifications` refuses to start on any of them (exit 1, the lines on stderr).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseNotificationConfig } from '../../src/notify/config.js';
import { formatError } from '../../src/gitops/source/manifests.js';
import { teamkeys } from '../support/cli.js';

const env = { HOOK_SECRET: 's3cret', SLACK_URL: 'https://hooks.slack.example/T/B/x' };
const head = 'apiVersion: notifications.management.service/v1\nkind: Notifications\nspec:\n';
const good = `${head}  receivers:
    - name: hook
      webhook:
        url: https://example.com/hook
        secretEnv: HOOK_SECRET
    - name: chat
      slack:
        urlEnv: SLACK_URL
  routes:
    - receiver: hook
      teams: [platform]
      events: [KeyExpiring, KeyLeaked]
    - receiver: chat
`;

const problems = (text: string, e: Record<string, string> = env) => parseNotificationConfig(text, 'n.yaml', e).errors.map(formatError);

describe('the notifications file', () => {
  it('a good file gives its receivers (secrets from the environment) and routes', () => {
    const { config, errors } = parseNotificationConfig(good, 'n.yaml', env);
    expect(errors).toEqual([]);
    expect(config).toEqual({
      receivers: [
        { name: 'hook', kind: 'webhook', url: 'https://example.com/hook', secret: 's3cret' },
        { name: 'chat', kind: 'slack', url: env.SLACK_URL },
      ],
      routes: [{ receiver: 'hook', teams: ['platform'], events: ['KeyExpiring', 'KeyLeaked'] }, { receiver: 'chat' }],
    });
  });

  it.each([
    ['a misspelt field', good.replace('teams:', 'team:'), ['n.yaml:14:13: unknown field "team"']],
    ['an unknown event', good.replace('KeyLeaked]', 'KeyLeak]'), ['n.yaml:15:29: spec.routes[0].events[1] must be one of KeyExpiring, KeyUnused, KeyDisabled, KeyLeaked, RotationFailed, DeliveryFailed']],
    ['a route to an undeclared receiver', good.replace('- receiver: chat', '- receiver: chats'), ['n.yaml:16:17: no receiver named "chats" (declared: hook, chat)']],
    ['a receiver named twice', good.replace('name: chat', 'name: hook'), ['n.yaml:9:13: receiver "hook" is declared twice', 'n.yaml:16:17: no receiver named "chat" (declared: hook)']],
    ['a receiver with both kinds', good.replace('      slack:\n', '      webhook: {url: "https://x", secretEnv: HOOK_SECRET}\n      slack:\n'), ['n.yaml:9:7: receiver "chat" needs exactly one of webhook, slack or github']],
    ['a webhook url that is no http(s) URL', good.replace('https://example.com/hook', 'ftp://example.com'), ['n.yaml:7:14: spec.receivers[0].webhook.url must match pattern "^https?://"']],
    ['a missing kind', good.replace('kind: Notifications\n', ''), ['n.yaml:1:1: kind is required']],
    ['two documents', `${good}---\n${good}`, ['n.yaml:1:1: expected one Notifications document, found 2']],
  ])('%s is refused at its line and column', (_what, text, expected) => {
    expect(problems(text)).toEqual(expected);
  });

  it('a secret missing from the environment is refused at the field naming it, without any value', () => {
    expect(problems(good, { SLACK_URL: env.SLACK_URL })).toEqual(['n.yaml:8:20: environment variable HOOK_SECRET is not set (receiver "hook" reads its secret from it)']);
  });

  describe('teamkeys serve --notifications', () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-notify-config-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('refuses to start on a bad file, naming each problem at file:line:col', () => {
      const file = join(dir, 'notifications.yaml');
      writeFileSync(file, good.replace('- receiver: chat', '- receiver: chats'));
      const r = teamkeys(['serve', '--listen', '127.0.0.1:0', '--insecure-http', '--state-dir', join(dir, 'state'), '--notifications', file], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${file}:16:17: no receiver named "chats" (declared: hook, chat)`);
      expect(r.stderr).not.toContain('s3cret');
    });
  });
});
