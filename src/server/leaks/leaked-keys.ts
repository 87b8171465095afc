/**
 * What happens to a key value someone reports as leaked (POST /auth/revoke, GitHub's secret
 * scanning): the key it belongs to is disabled at once, through the store (so every replica refuses
 * it on its next request and ends its open watches), with the reason in the
 * management.service/disabled-reason annotation as the unused-key sweep records its own, and an
 * audit event naming the reporter's address and the source URL. docs/keys.md, "Revoking a leaked key".
 */
import { ApiError } from '../../api/errors.js';
import { isAcceptedKeyValue } from '../../api/key-format.js';
import { findKeys } from '../../api/key-scan.js';
import { previousValueRefusal } from '../../api/key-rotation.js';
import { hashKey, type StoredApiObject } from '../../api/secrets.js';
import type { OwnedAccessKey } from '../../api/types.js';
import type { Registry } from '../../registry/registry.js';
import { failedPrecondition } from '../../registry/storage-errors.js';
import { disabledReasonAnnotation, leakReportManager } from '../../api/key-notices.js';

/** The disabled-reason of a key reported leaked (notifications match on it). */
export const reportedLeakedReason = 'reported-leaked';
/** Audit annotations of the disabling write: who reported it, through what, and where it was found. */
export const reportedByAnnotation = 'management.service/reported-by';
export const reportedViaAnnotation = 'management.service/reported-via';
export const leakSourceAnnotation = 'management.service/leak-source-url';

/** The longest source URL recorded (a reporter's string, kept bounded). */
const maxSourceUrl = 2048;

export interface LeakReport {
  /** The reporter's client address (for GitHub's alerts, GitHub's). */
  address: string;
  /** How the report came: `revoke` (POST /auth/revoke) or `github-secret-scanning`. */
  via: string;
  /** Where the value was found, if the reporter said (an http(s) URL). */
  sourceUrl?: string;
  /** The audit event's user. */
  username: string;
}

/** What became of a reported value: `known`: it is (or was) a value of a stored key; `disabled`: the key this disabled. */
export interface LeakOutcome {
  known: boolean;
  disabled?: string;
  /**
   * Why the key's disabling write was refused (4xx but a 404), for the operator's log: the
   * reporter gets the answer every report gets, as the refusal names the key. A 5xx is thrown (the
   * store out of reach: the report is worth retrying).
   */
  refused?: string;
}

/**
 * The text with its percent-encodings decoded, once and again (a URL held in another URL's query
 * is encoded once more for each level). Byte by byte, so a malformed escape anywhere does not stop
 * the rest being decoded: key values are ASCII.
 */
function decodedForms(text: string): string[] {
  const forms = [text];
  for (let level = 0; level < maxDecodes; level++) {
    const last = forms[forms.length - 1]!;
    const next = last.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === last) break;
    forms.push(next);
  }
  return forms;
}
/** Levels of percent-encoding looked through (a link in a link in a link). */
const maxDecodes = 4;

/**
 * A source URL as recorded: an http(s) URL of bounded length, else nothing (never the reporter's raw
 * text). A reporter's URL may hold the very value it reports (a raw file's link with the key in its
 * query) or other keys: the audit trail and the log never keep a key value. Each is replaced by
 * `[key removed]`: the reported value (whatever its format: an older key has no prefix to find it
 * by) and every value in the key format, found also behind percent-encoding (a link inside a link,
 * where `%3Dtk_...` hid one from the scan: found by a review). A URL in which one still shows once
 * decoded (its letters percent-encoded) is not recorded at all.
 */
export function recordedSourceUrl(raw: unknown, reported?: string): string | undefined {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > maxSourceUrl) return undefined;
  let href: string;
  try {
    const url = new URL(raw);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    href = url.href;
  } catch {
    return undefined;
  }
  const values = new Set<string>(reported !== undefined && isAcceptedKeyValue(reported) ? [reported] : []);
  for (const form of decodedForms(href)) for (const k of findKeys(form)) values.add(k.value);
  for (const v of values) href = href.split(v).join('[key removed]');
  const holdsKey = (form: string) => findKeys(form).length > 0 || [...values].some((v) => form.includes(v));
  return decodedForms(href).some(holdsKey) ? undefined : href;
}

/**
 * Disables the key `value` belongs to, if any. A value that cannot be a key (wrong shape, a `tk_`
 * value whose checksum fails) is answered without a look at the store. A previous value past its
 * overlap is known but already refused: the key itself is left as it is (its current value did not leak).
 */
export async function reportLeakedKey(registry: Registry, value: string, report: LeakReport, now: Date): Promise<LeakOutcome> {
  if (!isAcceptedKeyValue(value)) return { known: false };
  const hash = hashKey(value);
  // The key found is disabled only as read (its uid): one deleted and created again under its
  // name in between is another key, which the value may or may not open. Looked up again then.
  for (let attempt = 1; ; attempt++) {
    const outcome = await disableHolder(registry, hash, report, now);
    if (outcome !== 'replaced') return outcome;
    if (attempt === maxLookups) return { known: true, refused: `the key holding the value was replaced under its name ${maxLookups} times while it was being disabled` };
  }
}

/** How often a report looks the value up again when its key was replaced meanwhile. */
const maxLookups = 3;

/** One look-up and disabling write; `replaced` when the key read was deleted and another created under its name before the write. */
async function disableHolder(registry: Registry, hash: string, report: LeakReport, now: Date): Promise<LeakOutcome | 'replaced'> {
  const { items } = await registry.ownedaccesskeys.findByIndex(hash);
  const stored = items[0] as (Readonly<StoredApiObject> & OwnedAccessKey) | undefined;
  if (!stored || items.length !== 1) return { known: false };
  const previous = stored.sealed?.keyHash !== hash;
  if (previous && previousValueRefusal(stored, now) !== undefined) return { known: true };
  const name = stored.metadata.name!;
  const audit = {
    [disabledReasonAnnotation]: reportedLeakedReason,
    [reportedByAnnotation]: report.address,
    [reportedViaAnnotation]: report.via,
    ...(report.sourceUrl ? { [leakSourceAnnotation]: report.sourceUrl } : {}),
  };
  // Its uid, no resourceVersion, as precondition: the key read is disabled whatever else changed meanwhile.
  const preconditions = { uid: stored.metadata.uid! };
  const disable = (patch: object) => registry.ownedaccesskeys.patch(name, 'merge', patch, { fieldManager: leakReportManager, requester: { username: report.username, sourceIP: report.address }, auditAnnotations: audit, preconditions, serverWrite: true });
  try {
    try {
      await disable({ metadata: { annotations: { [disabledReasonAnnotation]: reportedLeakedReason } }, spec: { disabled: true } });
    } catch (err) {
      // The reason does not fit: whoever holds the value filled the key's annotations to their limit
      // (a review found such a key could not be revoked at all). It is disabled without it: the
      // audit event keeps the reason, and the reconciler holds it disabled by this field manager.
      if (!(err instanceof ApiError && err.code === 422)) throw err;
      await disable({ spec: { disabled: true } });
    }
  } catch (err) {
    // Deleted since the read: nothing is left to disable; replaced: look again.
    if (err instanceof ApiError && err.code === 404) return { known: true };
    // Only the uid precondition's 409 (the write's one precondition); other conflicts are refusals as they come.
    if (failedPrecondition(err)) return 'replaced';
    if (err instanceof ApiError && err.code < 500) return { known: true, refused: err.message };
    throw err;
  }
  return { known: true, disabled: name };
}
