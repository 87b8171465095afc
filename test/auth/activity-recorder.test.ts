/**
 * The activity recorder's memory of key use (src/auth/activity.ts) when the store answers badly: a
 * use of a key deleted meanwhile is forgotten, a failed write is logged and retried on the next use,
 * and a deletion made while the recorder was not following is caught up when it starts, unless the
 * key cannot be read (then it is kept: a failed read says nothing about the key).
 */
import pino from 'pino';
import { loggerOptions } from '../../src/cli/logging.js';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { ActivityRecorder } from '../../src/auth/activity.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { StorageError } from '../../src/store/errors.js';
import type { Preconditions, StoredObject, TryUpdate, WriteOptions } from '../../src/store/types.js';
import { accessKey, newRegistry } from '../registry/helpers.js';
import { eventually } from '../support/eventually.js';

/** A memory store whose reads of one object and whose updates fail on demand (the fault, not the store, is faked). */
class FaultyStore extends MemoryStore {
  failGets = false;
  failUpdates = false;
  /** Reads refused so far. */
  refusedGets = 0;
  override get<T extends StoredObject>(key: string): Promise<T> {
    if (this.failGets && ++this.refusedGets) return Promise.reject(new StorageError('Unreachable', key, 'injected read failure'));
    return super.get<T>(key);
  }
  override guaranteedUpdate<T extends StoredObject>(key: string, preconditions: Preconditions | undefined, tryUpdate: TryUpdate<T>, opts?: WriteOptions<T>): Promise<T> {
    if (this.failUpdates) return Promise.reject(new StorageError('Unreachable', key, 'injected write failure'));
    return super.guaranteedUpdate<T>(key, preconditions, tryUpdate, opts);
  }
}

function world() {
  const store = new FaultyStore();
  const { registry } = newRegistry({ store });
  const lines: { msg: string; keyName?: string; err?: { message?: string } }[] = [];
  const log = pino(loggerOptions('warn'), new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const recorder = new ActivityRecorder(registry.ownedaccesskeys, 0, log);
  return { store, registry, recorder, lines };
}

const now = new Date('2026-11-27T10:00:00Z');
const activityOf = (key: KubeObject) => (key.status as { lastActivity?: string } | undefined)?.lastActivity;

describe('the activity recorder when the store answers badly', () => {
  it('a use of a key that no longer exists is forgotten, and nothing is logged', async () => {
    const { recorder, lines } = world();
    recorder.touch('ghost', now, 'h', false);
    await eventually('the key is forgotten', () => recorder.size === 0, 2000);
    expect(lines).toEqual([]);
  });

  it('a use whose write fails is logged with the key, kept, and written on the next use', async () => {
    const { store, registry, recorder, lines } = world();
    await registry.ownedaccesskeys.create(accessKey('ci', { user: 'ana' }), { fieldManager: 'test' });
    store.failUpdates = true;
    recorder.touch('ci', now, 'h', false);
    await eventually('the failure is logged', () => lines.length > 0, 2000);
    expect(lines.map((l) => ({ msg: l.msg, keyName: l.keyName, err: l.err?.message }))).toEqual([{ msg: 'could not record key activity; will retry on its next use', keyName: 'ci', err: 'storage is unavailable: injected write failure' }]);
    expect(recorder.lastUsed('ci')).toBe(now.getTime());
    store.failUpdates = false;
    recorder.touch('ci', now, 'h', false);
    await eventually('the use is recorded', async () => activityOf(await registry.ownedaccesskeys.get('ci')) === '2026-11-27T10:00:00Z', 2000);
  });

  it('a key deleted while the recorder was stopped is forgotten when it starts; one that cannot be read is kept', async () => {
    const { store, registry, recorder } = world();
    for (const name of ['gone', 'kept']) await registry.ownedaccesskeys.create(accessKey(name, { user: 'ana' }), { fieldManager: 'test' });
    recorder.touch('gone', now, 'h', false);
    await eventually('the use is recorded', async () => activityOf(await registry.ownedaccesskeys.get('gone')), 2000);
    await registry.ownedaccesskeys.delete('gone');
    recorder.start();
    try {
      await eventually('the deleted key is forgotten', () => recorder.lastUsed('gone') === undefined, 2000);
    } finally {
      recorder.stop();
    }
    // Now a remembered key whose read fails at start.
    recorder.touch('kept', now, 'h', false);
    await eventually('the use is recorded', async () => activityOf(await registry.ownedaccesskeys.get('kept')), 2000);
    store.failGets = true;
    recorder.start();
    try {
      // Its catch-up read was refused (and answered) before the next macrotask.
      await eventually('the catch-up read is refused', () => store.refusedGets > 0, 2000);
      await new Promise((r) => setTimeout(r, 20));
      expect(recorder.lastUsed('kept')).toBe(now.getTime());
    } finally {
      recorder.stop();
      store.failGets = false;
    }
  });
});
