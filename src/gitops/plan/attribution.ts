/**
 * Who made a drift: managedFields say which manager last wrote a field (and when); the server's
 * audit trail, when it can be read, says which person and key that write came from and, for a
 * field someone removed (which managedFields cannot show), who removed it.
 */
import { auditJobOf, type AuditEvent } from '../../api/audit-event.js';
import { fromFieldsV1, pathString } from '../../api/fields/fieldset.js';
import { isDeepStrictEqual } from 'node:util';
import type { ManagedFieldsEntry } from '../../api/types.js';
import type { FieldChange } from './diff.js';
import { gitopsManager } from '../../client/types.js';

export interface Attribution {
  manager: string;
  operation: string;
  time?: string;
  /** From the audit trail: the user of the key that made the write, and the key's name. */
  user?: string;
  keyName?: string;
  /** From the audit trail: the CI job a Federated key that made the write was minted for. */
  job?: string;
}

/** The latest managedFields entry owning any of these leaves. */
export function ownerOf(entries: ManagedFieldsEntry[], leaves: string[]): Attribution | undefined {
  const owners = entries.filter((e) => leaves.some((p) => fromFieldsV1(e.fieldsV1).has(p)));
  const latest = owners.sort((a, b) => (b.time ?? '').localeCompare(a.time ?? ''))[0];
  if (!latest) return undefined;
  return { manager: latest.manager ?? '', operation: latest.operation ?? '', ...(latest.time ? { time: latest.time } : {}) };
}

const rv = (e: AuditEvent) => Number(e.objectRef.resourceVersion ?? 0);
const isGitops = (e: AuditEvent) => e.fieldManager === gitopsManager;
const seconds = (t: string) => t.replace(/\.\d+Z$/, 'Z');

/** The person, key and (a Federated key's) job of an event: one rule for both lookups below. */
function writerOf(e: AuditEvent): Pick<Attribution, 'user' | 'keyName' | 'job'> {
  const job = auditJobOf(e);
  return { user: e.user.username, ...(e.user.keyName ? { keyName: e.user.keyName } : {}), ...(job ? { job } : {}) };
}

function fromEvent(e: AuditEvent): Attribution {
  return { manager: e.fieldManager, operation: 'Update', time: seconds(e.stageTimestamp), ...writerOf(e) };
}

/** Whether an event's touched paths cover one of these (a removed container covers its items). */
function touches(e: AuditEvent, paths: string[], kinds: ('added' | 'changed' | 'removed')[]): boolean {
  if (!e.fields) return false;
  const touched = kinds.flatMap((k) => e.fields?.[k] ?? []);
  return touched.some((t) => paths.some((p) => p === t || p.startsWith(`${t}.`) || p.startsWith(`${t}[`) || t.startsWith(`${p}.`) || t.startsWith(`${p}[`)));
}

/** Writes to the object's main resource by others since gitops last wrote it, newest first. */
function writesSinceGitops(history: AuditEvent[], entries: ManagedFieldsEntry[]): AuditEvent[] {
  const events = [...history].filter((e) => !e.objectRef.subresource).sort((a, b) => rv(a) - rv(b));
  const lastGitops = events.findLastIndex(isGitops);
  // A trail without gitops' write (it predates the trail): since gitops' time in managedFields.
  const since = entries.filter((m) => m.manager === gitopsManager && !m.subresource).map((m) => m.time ?? '').sort().at(-1) ?? '';
  const later = lastGitops >= 0 ? events.slice(lastGitops + 1) : events.filter((e) => seconds(e.stageTimestamp) >= since);
  return later.filter((e) => !isGitops(e) && e.verb !== 'create').reverse();
}

/**
 * Who removed a field git wants (given as FieldsV1 leaves) after gitops applied it, or undefined
 * when nobody did (then git moved on: not drift). With the audit trail: the write that removed it.
 * Without (or when the trail holds no write since gitops', e.g. trimmed): the latest write by
 * another manager after gitops', by managedFields times.
 */
export function removedBy(leaves: string[], entries: ManagedFieldsEntry[], history: AuditEvent[] | undefined): Attribution | undefined {
  const since = history ? writesSinceGitops(history, entries) : [];
  if (since.length > 0) {
    const paths = leaves.map(pathString);
    const remover = since.find((e) => touches(e, paths, ['removed', 'changed']));
    return remover ? fromEvent(remover) : undefined;
  }
  const gitopsTime = entries.filter((e) => e.manager === gitopsManager && !e.subresource).map((e) => e.time ?? '').sort().at(-1);
  if (gitopsTime === undefined) return undefined;
  // A write of the main resource never changes status (a PUT keeps it); an entry owning nothing but
  // status is the server's rotation bookkeeping (recorded before rotations named their subresource).
  const wroteObject = (e: ManagedFieldsEntry) => [...fromFieldsV1(e.fieldsV1)].some((p) => !p.startsWith('["f:status"'));
  const later = entries
    .filter((e) => e.manager !== gitopsManager && !e.subresource && (e.time ?? '') > gitopsTime && wroteObject(e))
    .sort((a, b) => (b.time ?? '').localeCompare(a.time ?? ''))[0];
  return later ? { manager: later.manager ?? 'unknown', operation: later.operation ?? '', ...(later.time ? { time: later.time } : {}) } : undefined;
}

/** Adds the person behind a manager's write from the audit trail: the write that touched these leaves. */
export function withPerson(by: Attribution, leaves: string[], history: AuditEvent[] | undefined): Attribution {
  if (!history) return by;
  const paths = leaves.map(pathString);
  const byManager = [...history].filter((e) => e.fieldManager === by.manager).sort((a, b) => rv(b) - rv(a));
  const event = byManager.find((e) => touches(e, paths, ['added', 'changed'])) ?? byManager[0];
  return event ? { ...by, ...writerOf(event) } : by;
}

/** One changed field as the diff found it, before anyone is named: what attribution reads. */
export interface FieldEvidence {
  path: string;
  before?: unknown;
  after?: unknown;
  /** FieldsV1 leaves of the live value that changes or goes. */
  liveLeaves: string[];
  /** FieldsV1 leaves git wants that are not live (added in git, or removed by someone). */
  missing: string[];
}

/** What another writer did to a field, told from git's value (target) and the live one. */
function describe(path: string, live: unknown, target: unknown): string {
  // Backticks delimit the values, so none may appear inside one (reports split on them).
  const show = (v: unknown) => `\`${JSON.stringify(v).replace(/`/g, '\\u0060')}\``;
  if (Array.isArray(live) || Array.isArray(target)) {
    const l = Array.isArray(live) ? live : [];
    const t = Array.isArray(target) ? target : [];
    const added = l.filter((x) => !t.some((y) => isDeepStrictEqual(x, y)));
    const removed = t.filter((x) => !l.some((y) => isDeepStrictEqual(x, y)));
    const parts = [added.length ? `added ${added.map(show).join(', ')} to ${path}` : '', removed.length ? `removed ${removed.map(show).join(', ')} from ${path}` : ''];
    const text = parts.filter(Boolean).join(' and ');
    if (text) return text;
  }
  if (live === undefined) return `removed ${path}`;
  if (target === undefined) return `added ${path}`;
  return `changed ${path}`;
}

/**
 * The changes of one diff, each named after who last wrote the live value; with the audit trail,
 * the person behind it and who removed a field git holds. Pure: the diff is not made again.
 */
export function attributeFields(fields: FieldEvidence[], entries: ManagedFieldsEntry[], history: AuditEvent[] | undefined): FieldChange[] {
  return fields.map(({ path, before: b, after: a, liveLeaves, missing }) => {
    let by = ownerOf(entries, liveLeaves);
    let drift = by !== undefined && by.manager !== gitopsManager;
    if (!drift && missing.length > 0) {
      const remover = removedBy(missing, entries, history);
      if (remover) [by, drift] = [remover, true];
    }
    if (drift && by && !by.user) by = withPerson(by, liveLeaves, history);
    const change: FieldChange = { path, drift };
    if (b !== undefined) change.before = b;
    if (a !== undefined) change.after = a;
    if (by) change.lastChangedBy = by;
    if (drift) change.description = describe(path, b, a);
    return change;
  });
}
