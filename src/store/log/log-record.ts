/** Log records decoded into store events, once for all the watchers a record concerns. */
import type { LogRecord, StoreEvent, StoredObject } from '../types.js';
import { charsOf } from './log-span.js';

const decoded = new WeakMap<LogRecord, StoreEvent>();

/** Decodes a record once for all its watchers: events are shared, so consumers must not mutate them. */
export function eventOf(r: LogRecord): StoreEvent {
  let event = decoded.get(r);
  if (!event) {
    event = toEvent(r);
    decoded.set(r, event);
  }
  return event;
}

/** Decodes a log record into a store event; the resourceVersion is the record's revision. */
export function toEvent(r: LogRecord): StoreEvent {
  const object = withRevision(JSON.parse(r.value) as StoredObject, r.revision);
  const event: StoreEvent = { type: r.type, key: r.key, revision: r.revision, object, chars: charsOf(r) };
  if (r.prevValue !== undefined && r.prevRevision !== undefined) {
    event.prevObject = withRevision(JSON.parse(r.prevValue) as StoredObject, r.prevRevision);
  }
  return event;
}

export function withRevision<T extends StoredObject>(obj: T, revision: number): T {
  obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(revision) };
  return obj;
}
