/**
 * The key health section of a report: live keys expiring within --warn-expiry (or expired and
 * not yet removed) and keys unused for longer than --warn-unused. Made from the keys the
 * reconciler listed anyway (no extra read), Login keys included: they are never planned or
 * pruned, but they expire and go unused like any other. Names, owners and times only: never a value.
 */
import { printable } from '../../api/printable.js';
import type { KubeObject, OwnedAccessKey } from '../../api/types.js';
import { expiresWithin, formatSpan, isoSeconds, keyHealth, unusedFor } from '../../auth/key-health.js';
import { codeText, md, type Md } from './markdown-escape.js';
import { scheduledRotationDue } from '../plan/rotation.js';
import { annotations } from '../plan/annotations.js';

export interface KeyHealthOptions {
  warnExpiryMs: number;
  warnUnusedMs: number;
}

export interface ExpiringKey {
  name: string;
  owner: string;
  type?: string;
  expiresAt: string;
  /** Present when the key has expired already (it answers 401) and is not yet removed. */
  expired?: true;
}

export interface UnusedKey {
  name: string;
  owner: string;
  type?: string;
  /** status.lastActivity, or the creation time when the key was never used. */
  lastUse: string;
  neverUsed?: true;
}

/** A key with a rotate-every schedule (as applied) that is not due yet: when its next rotation is. */
export interface ScheduledKey {
  name: string;
  owner: string;
  type?: string;
  rotateEvery: string;
  nextRotationAt: string;
}

export interface KeyHealthReport {
  warnExpirySeconds: number;
  warnUnusedSeconds: number;
  expiring: ExpiringKey[];
  unused: UnusedKey[];
  /** Present when any key has a schedule not due now (a due one is in the plan as a rotation). */
  scheduled?: ScheduledKey[];
}

/**
 * The section for `keys` at `now`, or undefined when no key is listed in it. Disabled keys are
 * left out (they work for nobody: no job breaks when they expire, no one can use them unseen).
 */
export function keyHealthSection(keys: KubeObject[], now: Date, opts: KeyHealthOptions): KeyHealthReport | undefined {
  const expiring: ExpiringKey[] = [];
  const unused: UnusedKey[] = [];
  const scheduled: ScheduledKey[] = [];
  for (const k of keys) {
    const h = keyHealth(k as unknown as OwnedAccessKey, now);
    if (h.disabled) continue;
    const who = { name: h.name, owner: h.owner, ...(h.type ? { type: h.type } : {}) };
    if (h.expiresAt !== undefined && (h.expired || expiresWithin(h, opts.warnExpiryMs))) expiring.push({ ...who, expiresAt: isoSeconds(h.expiresAt), ...(h.expired ? { expired: true as const } : {}) });
    if (unusedFor(h, opts.warnUnusedMs)) unused.push({ ...who, lastUse: isoSeconds(h.lastUse), ...(h.neverUsed ? { neverUsed: true as const } : {}) });
    // The same time `teamkeys keys` shows in NEXT ROTATION (the schedule the reconciler applied).
    const due = scheduledRotationDue(k);
    if (due && due.getTime() > now.getTime()) scheduled.push({ ...who, rotateEvery: k.metadata.annotations![annotations.rotateEvery]!.trim(), nextRotationAt: isoSeconds(due.getTime()) });
  }
  if (expiring.length + unused.length + scheduled.length === 0) return undefined;
  // Soonest first, longest unused first: what needs a hand today is at the top.
  expiring.sort((a, b) => a.expiresAt.localeCompare(b.expiresAt) || a.name.localeCompare(b.name));
  unused.sort((a, b) => a.lastUse.localeCompare(b.lastUse) || a.name.localeCompare(b.name));
  scheduled.sort((a, b) => a.nextRotationAt.localeCompare(b.nextRotationAt) || a.name.localeCompare(b.name));
  return { warnExpirySeconds: opts.warnExpiryMs / 1000, warnUnusedSeconds: opts.warnUnusedMs / 1000, expiring, unused, ...(scheduled.length ? { scheduled } : {}) };
}

const ago = (at: string, now: number) => formatSpan(now - Date.parse(at));
const typeText = (k: { type?: string }) => (k.type ? ` [${printable(k.type)}]` : '');
/** A key and its owner as a terminal shows them: control characters made visible (names are user input). */
const whoText = (k: { name: string; owner: string }) => `${printable(k.name)} (${printable(k.owner)})`;

function expiryText(k: ExpiringKey, now: number): string {
  return k.expired ? `expired ${k.expiresAt}, ${ago(k.expiresAt, now)} ago (refused; not yet removed)` : `expires ${k.expiresAt}, in ${formatSpan(Date.parse(k.expiresAt) - now)}`;
}

function nextRotationText(k: ScheduledKey, now: number): string {
  return `every ${printable(k.rotateEvery)}, next ${k.nextRotationAt}, in ${formatSpan(Date.parse(k.nextRotationAt) - now)}`;
}

function lastUseText(k: UnusedKey, now: number): string {
  // A key without a creation time counts as unused since ever (auth/key-health.ts): lastUse 0.
  if (k.neverUsed && Date.parse(k.lastUse) === 0) return 'never used (no creation time)';
  return k.neverUsed ? `never used (created ${k.lastUse}, ${ago(k.lastUse, now)} ago)` : `last used ${k.lastUse}, ${ago(k.lastUse, now)} ago`;
}

/** The section as terminal lines (empty when there is none); spans counted from the report's time. */
export function keyHealthText(h: KeyHealthReport | undefined, generatedAt: string): string[] {
  if (!h) return [];
  const now = Date.parse(generatedAt);
  const lines: string[] = [];
  if (h.expiring.length > 0) {
    lines.push(`Keys expiring within ${formatSpan(h.warnExpirySeconds * 1000)}:`, ...h.expiring.map((k) => `  ${whoText(k)}${typeText(k)}: ${expiryText(k, now)}`));
  }
  if (h.unused.length > 0) {
    lines.push(`Keys unused for more than ${formatSpan(h.warnUnusedSeconds * 1000)}:`, ...h.unused.map((k) => `  ${whoText(k)}${typeText(k)}: ${lastUseText(k, now)}`));
  }
  if (h.scheduled?.length) lines.push('Scheduled rotations not due yet:', ...h.scheduled.map((k) => `  ${whoText(k)}${typeText(k)}: ${nextRotationText(k, now)}`));
  return lines;
}

/** The section as Markdown tables (empty when there is none): names and owners escaped, as all text from the server. */
export function keyHealthMarkdown(h: KeyHealthReport | undefined, generatedAt: string): Md[] {
  if (!h) return [];
  const now = Date.parse(generatedAt);
  const who = (k: ExpiringKey | UnusedKey | ScheduledKey) => md`| ${codeText(k.name)}${k.type ? md` (${printable(k.type)})` : ''} | ${printable(k.owner)} |`;
  const lines: Md[] = [];
  if (h.expiring.length > 0) {
    lines.push(md`### Keys expiring within ${formatSpan(h.warnExpirySeconds * 1000)}`, md``, md`| Key | Owner | Expiry |`, md`|---|---|---|`, ...h.expiring.map((k) => md`${who(k)} ${expiryText(k, now)} |`), md``);
  }
  if (h.unused.length > 0) {
    lines.push(md`### Keys unused for more than ${formatSpan(h.warnUnusedSeconds * 1000)}`, md``, md`| Key | Owner | Last use |`, md`|---|---|---|`, ...h.unused.map((k) => md`${who(k)} ${lastUseText(k, now)} |`), md``);
  }
  if (h.scheduled?.length) {
    lines.push(md`### Scheduled rotations not due yet`, md``, md`| Key | Owner | Next rotation |`, md`|---|---|---|`, ...h.scheduled.map((k) => md`${who(k)} ${nextRotationText(k, now)} |`), md``);
  }
  return lines;
}
