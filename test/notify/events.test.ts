/**
 * What the notifier says about one stored key (events.ts), table-driven: the same state always
 * gives the same event (its occurrence), and a key's value never appears in one.
 */
import { describe, expect, it } from 'vitest';
import type { OwnedAccessKey } from '../../src/api/types.js';
import { keyHealth } from '../../src/auth/key-health.js';
import { immediateEvents, warningEvents } from '../../src/notify/events.js';
import { messageItem } from '../../src/notify/messages.js';

const now = new Date('2026-08-10T12:00:00Z');
const reason = 'management.service/disabled-reason';

function key(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}, status: Record<string, unknown> = {}): OwnedAccessKey {
  return {
    apiVersion: 'management.service/v1',
    kind: 'OwnedAccessKey',
    metadata: { name: 'ci', uid: 'u-1', creationTimestamp: '2026-08-01T00:00:00Z', generation: 3, ...metadata },
    spec: { team: 'platform', key: 'the-secret-value-0123456789', ...spec },
    status,
  } as OwnedAccessKey;
}

/** The managedFields entry of a server's disabling write (a leak report's, the unused-key rule's): the reason and spec.disabled. */
const disabledBy = (manager: string, fields: object = { 'f:metadata': { 'f:annotations': { [`f:${reason}`]: {} } }, 'f:spec': { 'f:disabled': {} } }) => ({
  managedFields: [{ manager, operation: 'Update', apiVersion: 'management.service/v1', time: '2026-08-10T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: fields }],
});
const leak = disabledBy('teamkeys-leak-report');

describe('events of a stored key', () => {
  it.each([
    ['a key disabled as reported leaked', key({ disabled: true }, { annotations: { [reason]: 'reported-leaked' }, ...leak }), [['KeyLeaked', 'reported-leaked|']]],
    ['a leak with the source after the reason', key({ disabled: true }, { annotations: { [reason]: 'reported-leaked: https://github.com/a/b/blob/x' }, ...leak }), [['KeyLeaked', 'reported-leaked: https://github.com/a/b/blob/x|']]],
    ['a leak whose reason did not fit: spec.disabled is the leak report\'s', key({ disabled: true }, { annotations: { [reason]: 'whatever the holder wrote' }, ...disabledBy('teamkeys-leak-report', { 'f:spec': { 'f:disabled': {} } }) }), [['KeyLeaked', 'teamkeys-leak-report at 2026-08-10T00:00:00Z|']]],
    ['a leak whose reason the holder rewrote since: the same occurrence, whatever the text', key({ disabled: true }, { annotations: { [reason]: 'another text' }, ...disabledBy('teamkeys-leak-report', { 'f:spec': { 'f:disabled': {} } }) }), [['KeyLeaked', 'teamkeys-leak-report at 2026-08-10T00:00:00Z|']]],
    ['a key disabled as unused', key({ disabled: true }, { annotations: { [reason]: 'unused since 2026-05-01T00:00:00Z' }, ...disabledBy('teamkeys-unused-keys') }), [['KeyDisabled', 'unused since 2026-05-01T00:00:00Z|']]],
    ['the same disable after a re-enable is a new occurrence', key({ disabled: true }, { annotations: { [reason]: 'reported-leaked', 'management.service/re-enabled-at': '2026-08-05T00:00:00Z' }, ...leak }), [['KeyLeaked', 'reported-leaked|2026-08-05T00:00:00Z']]],
    ["the server's words written by the holder (any other manager) are the holder's: one KeyDisabled whatever they say", key({ disabled: true }, { annotations: { [reason]: 'reported-leaked' }, ...disabledBy('kubectl') }), [['KeyDisabled', 'by its holder|']]],
    ['a reason without managedFields (written past the API) is the holder\'s too', key({ disabled: true }, { annotations: { [reason]: 'reported-leaked' } }), [['KeyDisabled', 'by its holder|']]],
    ['a reason on a key enabled again says nothing', key({}, { annotations: { [reason]: 'reported-leaked' } }), []],
    ['disabled by hand in Git, without a reason, says nothing', key({ disabled: true }), []],
    ['a key being deleted says nothing', key({ disabled: true }, { annotations: { [reason]: 'reported-leaked' }, deletionTimestamp: '2026-08-10T00:00:00Z' }), []],
    ['a rotation awaiting confirmation past the grace failed', key({}, {}, { rotation: { rotatedAt: '2026-08-10T11:00:00Z', awaitingConfirmation: true } }), [['RotationFailed', '2026-08-10T11:00:00Z']]],
    ['a rotation awaiting confirmation within the grace is still going', key({}, {}, { rotation: { rotatedAt: '2026-08-10T11:50:00Z', awaitingConfirmation: true } }), []],
    [
      'a delivery still pending past the grace failed',
      key({}, { annotations: { 'gitops.management.service/key-delivered': 'pending:github:acme/app/CI_KEY' }, managedFields: [{ manager: 'teamkeys', operation: 'Update', time: '2026-08-10T11:00:00Z' }] }),
      [['DeliveryFailed', 'pending:github:acme/app/CI_KEY|3']],
    ],
    ['a delivery pending since the last write within the grace is still going', key({}, { annotations: { 'gitops.management.service/key-delivered': 'pending:file:ci.key' }, managedFields: [{ manager: 'teamkeys', operation: 'Update', time: '2026-08-10T11:59:00Z' }] }), []],
  ])('%s', (_what, k, expected) => {
    const events = immediateEvents(k, now);
    expect(events.map((e) => [e.event, e.occurrence])).toEqual(expected);
    for (const e of events) expect(JSON.stringify(messageItem(e))).not.toContain('the-secret-value');
  });

  it.each([
    ['expiring within the window', key({ ttl: 12 * 86_400 }), {}, [['KeyExpiring', '2026-08-13T00:00:00Z']]],
    ['expiring after the window', key({ ttl: 30 * 86_400 }), {}, []],
    ['expired already (refused; not warned of late)', key({ ttl: 86_400 }), {}, []],
    ['disabled', key({ ttl: 12 * 86_400, disabled: true }), {}, []],
    ['never used, to be disabled within the window', key({}), { disableUnusedAfterMs: 20 * 86_400_000 }, [['KeyUnused', '2026-08-21T00:00:00Z']]],
    ['used lately: disabled only after the window', key({}, {}, { lastActivity: '2026-08-10T00:00:00Z' }), { disableUnusedAfterMs: 20 * 86_400_000 }, []],
    ['re-enabled: a fresh window from then', key({}, { annotations: { 'management.service/re-enabled-at': '2026-08-09T00:00:00Z' } }), { disableUnusedAfterMs: 20 * 86_400_000 }, []],
    ['never used and without a creation time: unused since ever, disabled at the next sweep, not warned of (counted from now, it was warned of at every digest)', key({}, { creationTimestamp: undefined }), { disableUnusedAfterMs: 10 * 86_400_000 }, []],
  ])('a key %s', (_what, k, opts, expected) => {
    const events = warningEvents(k, keyHealth(k, now), now, { warnExpiryMs: 14 * 86_400_000, ...opts });
    expect(events.map((e) => [e.event, e.occurrence])).toEqual(expected);
  });
});
