/**
 * The notifier's periodic sweep (the only path that queues the daily digest of expiring
 * keys) must run about once per interval however often the key watch kicks a pass. PeriodicRunner.run()
 * cancels the pending timer and re-arms a full interval after the asked pass, and the notifier's
 * asked passes (cause 'asked') never sweep: a key that has an immediate event and is written more
 * often than the interval (a leaked key being edited, a rotation past its grace still in use, whose
 * lastActivity is written every minute) starves the sweep, and a key that enters the warning window
 * meanwhile is never warned of.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseNotificationConfig } from '../../src/notify/config.js';
import { Notifier } from '../../src/notify/notifier.js';
import { accessKey, newRegistry } from '../registry/helpers.js';
import { startReceiver, type TestReceiver } from './receiver.js';

const fm = { fieldManager: 'test' };

describe('notifier sweep under a stream of watch events', () => {
  let receiver: TestReceiver | undefined;
  let notifier: Notifier | undefined;
  afterEach(async () => {
    await notifier?.stop();
    await receiver?.close();
  });

  it('an expiring key made after start is in a digest within a few intervals, while a leaked key keeps changing', async () => {
    receiver = await startReceiver();
    const { config, errors } = parseNotificationConfig(
      `apiVersion: notifications.management.service/v1\nkind: Notifications\nspec:\n  receivers:\n    - name: hook\n      webhook:\n        url: ${receiver.url}/hook\n        secretEnv: S\n  routes:\n    - receiver: hook\n`,
      'n.yaml',
      { S: 'secret' },
    );
    expect(errors).toEqual([]);
    const { registry, clock } = newRegistry();
    const keys = registry.ownedaccesskeys;
    // A key disabled with a reason: every change of it has an immediate event (the watch kicks a pass).
    await keys.create(accessKey('leaked', { user: 'ann' }, { annotations: { 'management.service/disabled-reason': 'reported-leaked' } }), fm);
    await keys.patch('leaked', 'merge', { spec: { disabled: true } }, fm);
    const intervalMs = 300;
    notifier = new Notifier(registry, () => undefined, pino({ level: 'silent' }), { attempt: () => {}, failing: () => {} }, { config: config!, intervalMs, now: clock.now });
    notifier.start();
    await new Promise((r) => setTimeout(r, 200)); // the first sweep (on start) is done
    // A key expiring within the warning window (14d), made after that sweep: only a later sweep finds it.
    await keys.create(accessKey('expiring', { user: 'bob', ttl: 3600 }), fm);
    // The leaked key is edited every 100 ms (a third of the interval) for 3 s: ten intervals.
    const until = Date.now() + 3000;
    for (let i = 0; Date.now() < until; i++) {
      await keys.patch('leaked', 'merge', { metadata: { labels: { n: String(i) } } }, fm);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 200));
    const digests = receiver.bodies('/hook').filter((b) => JSON.stringify(b).includes('"expiring"'));
    expect(digests.length, 'the digest warning of the expiring key').toBeGreaterThan(0);
  }, 20_000);
});
