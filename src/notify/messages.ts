/**
 * What a notification says: one line of what happened and the exact command that deals with it,
 * then the body each receiver kind takes (a generic webhook's JSON, a Slack incoming webhook's
 * text). Built only from a KeyRef and the event's detail: no key value can reach a payload.
 */
import type { NotificationEvent } from './config.js';
import type { KeyEvent, KeyRef } from './events.js';

/** One event as stored in the outbox and sent: what happened and what to do. */
export interface MessageItem {
  event: NotificationEvent;
  key: KeyRef;
  summary: string;
  /** The exact command (or change) that deals with it. */
  action: string;
  at?: string;
}

/** What one outbox record sends: a single event, or the day's digest of warnings. */
export type Message = { kind: 'event'; item: MessageItem } | { kind: 'digest'; day: string; items: MessageItem[] };

const enable = (name: string) => `kubectl patch ownedaccesskey ${name} --type merge -p '{"spec":{"disabled":false}}'`;

/**
 * Text a key's writer may have chosen (a disable reason, a delivery target, a user's name) as a
 * message shows it: as it is when it is plain words, which every reason and target the server
 * writes is, else not at all. Any user may write those annotations on a key of their own, and the
 * messages go to channels security staff read: Slack's `<!channel>` and `<url|text>`, GitHub's
 * `@team` mentions, links and HTML would be theirs to send (found by a review).
 */
export function plainOr(text: string, instead: string): string {
  // No `//` (a URL) and nothing shaped like a host name, which GitHub and Slack turn into links.
  return /^[A-Za-z0-9 .,:;()_=+"'/-]{0,300}$/.test(text) && !text.includes('//') && !/[A-Za-z0-9-]\.[A-Za-z]{2,}/.test(text) ? text : instead;
}

/** The reasons the server itself disables a key for (leaked-keys.ts, key-health-sweep.ts); any other is a writer's own text. */
const serverReasons = [/^reported-leaked$/, /^(unused since|never used since its creation at) \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(no use for [0-9a-z ]+; --disable-unused-after\)$/, /^never used, and without a creation time \(no use for [0-9a-z ]+; --disable-unused-after\)$/];

/** A holder's name (a user's, `team "x"`): set by an administrator or the identity provider, shown unless it holds markup or a mention. */
const holderText = (owner: string) => (/^[A-Za-z0-9 .,:;()_=+"'/@#-]{0,300}$/.test(owner) && !/(^|[^A-Za-z0-9])@/.test(owner) ? owner : 'its holder');

function summaryOf(e: KeyEvent): string {
  const k = `access key "${e.key.name}" of ${holderText(e.key.owner)}`;
  const unshown = `a reason not shown here (kubectl get ownedaccesskey ${e.key.name} -o yaml shows it)`;
  // A disable reason any user may write on a key of their own is shown only in the server's words.
  const disabling = e.event === 'KeyDisabled' || e.event === 'KeyLeaked';
  const said = disabling ? (serverReasons.some((r) => r.test(e.detail)) ? e.detail : unshown) : plainOr(e.detail, unshown);
  return summaryWith(e, k, said);
}

function summaryWith(e: KeyEvent, k: string, detail: string): string {
  switch (e.event) {
    case 'KeyExpiring':
      return `${k} ${detail}`;
    case 'KeyUnused':
      return `${k} is ${detail}`;
    case 'KeyDisabled':
      return `${k} was disabled: ${detail}`;
    case 'KeyLeaked':
      return `${k} was reported leaked and is disabled (${detail}): whoever found it could use it`;
    case 'RotationFailed':
      return `${k}: its scheduled rotation failed (${detail}); the previous value keeps working`;
    case 'DeliveryFailed':
      return `${k}: ${detail}`;
  }
}

function actionOf(e: KeyEvent): string {
  const n = e.key.name;
  switch (e.event) {
    case 'KeyExpiring':
      // Git is the truth for a managed key (a patch would be drift); the command is for the others.
      return `raise spec.ttl of OwnedAccessKey/${n} in Git (the reconciler applies it) or, for a key not managed from Git, give it 30 days more: kubectl patch ownedaccesskey ${n} --type merge -p '{"spec":{"ttl":${(e.ttlSeconds ?? 0) + 30 * 86_400}}}'`;
    case 'KeyUnused':
      return `use it before then if it is needed; if nobody needs it, delete it: teamkeys delete ownedaccesskeys ${n}`;
    case 'KeyDisabled':
      return `if it is still needed, enable it again by hand (a key managed from Git stays disabled until then): ${enable(n)}`;
    case 'KeyLeaked':
      return `rotate it at once and replace the value wherever it is used: teamkeys rotate ${n}; then enable it again: ${enable(n)}`;
    case 'RotationFailed':
    case 'DeliveryFailed':
      return `fix the key's delivery (its key-secret target, GITHUB_TOKEN) and run the reconciler again: teamkeys apply (or teamkeys sync --server URL for the sidecar)`;
  }
}

export function messageItem(e: KeyEvent): MessageItem {
  return { event: e.event, key: e.key, summary: summaryOf(e), action: actionOf(e), ...(e.at ? { at: e.at } : {}) };
}

/** The event label of a message, on /metrics and in the X-Teamkeys-Event header. */
export const eventOf = (m: Message): string => (m.kind === 'digest' ? 'Digest' : m.item.event);

/** The generic webhook's JSON body. */
export function webhookBody(id: string, receiver: string, createdAt: string, m: Message): string {
  const common = { id, receiver, createdAt };
  if (m.kind === 'event') return JSON.stringify({ ...common, ...m.item });
  return JSON.stringify({ ...common, event: 'Digest', day: m.day, items: m.items });
}

/**
 * The summary for a channel that renders Markdown (Slack's mrkdwn, a GitHub issue): the key's name in
 * a code span. A name is a DNS-1123 subdomain, dots allowed, and one shaped like a host name
 * (`www.teamkeys-reauth.evil.example`) was made a link in the server's voice (found by a review).
 */
const rendered = (i: MessageItem) => i.summary.replace(`access key "${i.key.name}"`, `access key \`${i.key.name}\``);

/** A Slack-compatible incoming webhook's body: plain mrkdwn text. */
export function slackBody(m: Message): string {
  const line = (i: MessageItem) => `*${i.event}*: ${rendered(i)}\nWhat to do: \`${i.action}\``;
  const text = m.kind === 'event' ? line(m.item) : [`teamkeys daily digest for ${m.day}: ${m.items.length} warning${m.items.length === 1 ? '' : 's'}`, ...m.items.map(line)].join('\n\n');
  return JSON.stringify({ text });
}

/**
 * A GitHub issue: in the repository holding the key's secret when the receiver's owner (user or
 * organization) owns it too, else (and for a digest) the receiver's. The key's repository comes from
 * an annotation any user may write on a key of their own: the operator's token must not open issues
 * wherever it reaches (found by a review).
 */
export function githubIssue(m: Message, fallback: string): { repository: string; body: string } {
  const line = (i: MessageItem) => `**${i.event}**: ${rendered(i)}\n\nWhat to do: \`${i.action}\``;
  if (m.kind === 'event') {
    const title = `teamkeys: ${m.item.event} of access key ${m.item.key.name}`;
    const own = m.item.key.repository;
    const sameOwner = own !== undefined && own.split('/')[0]!.toLowerCase() === fallback.split('/')[0]!.toLowerCase();
    return { repository: sameOwner ? own : fallback, body: JSON.stringify({ title, body: line(m.item) }) };
  }
  const title = `teamkeys: ${m.items.length} access key warning${m.items.length === 1 ? '' : 's'} on ${m.day}`;
  return { repository: fallback, body: JSON.stringify({ title, body: m.items.map(line).join('\n\n---\n\n') }) };
}
