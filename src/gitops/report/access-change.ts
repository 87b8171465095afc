/**
 * The plan's access change for people: one line per right moved, grouped by identity, the most
 * powerful first (management-admin, then writes on keys), verbs on the same object by the same
 * way merged into one line. Past a size the rest is folded (Markdown) or cut (text); report.json
 * holds every entry.
 */
import type { AccessChange, AccessEntry } from '../plan/access-change.js';
import { rank } from '../plan/access-rank.js';
import { verbs as allVerbs } from '../../auth/roles.js';
import { codeValue, md, mdJoin, type Md } from './markdown-escape.js';
import { append } from '../append.js';

/** One line: an identity gains or loses these verbs on one object, by these ways. */
export interface AccessLine {
  gains: boolean;
  verbs: string[];
  object: string;
  resource: AccessEntry['resource'];
  name: string;
  via: string[];
  rank: number;
}

export interface AccessGroup {
  identity: string;
  who: string;
  lines: AccessLine[];
}

const verbOrder = (v: string) => (allVerbs as readonly string[]).indexOf(v);

/** Lines shown before the rest is folded away (Markdown) or cut (text). */
export const shownLines = { markdown: 60, folded: 400, text: 60 };

/** The entries as lines grouped by identity, most powerful first. */
export function accessGroups(change: AccessChange): AccessGroup[] {
  const groups = new Map<string, AccessGroup>();
  const lines = new Map<string, AccessLine>();
  for (const [gains, list] of [[true, change.gains], [false, change.losses]] as const) {
    for (const e of list) {
      let g = groups.get(e.identity);
      if (!g) groups.set(e.identity, (g = { identity: e.identity, who: e.who, lines: [] }));
      const k = `${e.identity}\u0000${gains}\u0000${e.object}\u0000${e.via.join('\u0000')}`;
      const line = lines.get(k);
      if (line) {
        line.verbs.push(e.verb);
        line.rank = Math.min(line.rank, rank(e));
        continue;
      }
      const fresh: AccessLine = { gains, verbs: [e.verb], object: e.object, resource: e.resource, name: e.name, via: e.via, rank: rank(e) };
      lines.set(k, fresh);
      g.lines.push(fresh);
    }
  }
  // A reduce, not Math.min(...): a group of many lines must not pass them all as arguments.
  const best = (g: AccessGroup) => g.lines.reduce((min, l) => Math.min(min, l.rank), Infinity);
  for (const l of lines.values()) l.verbs.sort((a, b) => verbOrder(a) - verbOrder(b));
  for (const g of groups.values()) g.lines.sort((a, b) => a.rank - b.rank || Number(b.gains) - Number(a.gains) || (a.object < b.object ? -1 : a.object > b.object ? 1 : 0));
  return [...groups.values()].sort((a, b) => best(a) - best(b) || (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0));
}

/** How a reviewer reads an object: keys by whose they are, the rest as the API names them. */
export function objectWords(line: Pick<AccessLine, 'resource' | 'name' | 'object'>): string {
  if (line.resource === 'clusterroles') return `cluster role ${line.name}`;
  if (line.resource === 'ownedaccesskeys' && line.name !== '*') {
    const [by, whose] = line.name.split('=', 2) as [string, string];
    return whose === '*' ? 'the keys of every team' : `the keys of ${by} ${whose}`;
  }
  return line.object;
}

const viaWords = (via: string[]) => (via.length === 0 ? '' : ` (via ${via.slice(0, 2).join('; or ')}${via.length > 2 ? `; and ${via.length - 2} other ways` : ''})`);
const verbWords = (l: AccessLine) => (l.resource === 'clusterroles' ? '' : `${l.verbs.join(', ')} on `);

/** A line as a terminal shows it: `alice gains delete on teams/payments (via team payments-admins)`. */
export function lineText(who: string, l: AccessLine): string {
  return `${who} ${l.gains ? 'gains' : 'loses'} ${verbWords(l)}${objectWords(l)}${viaWords(l.via)}`;
}

const noChange = "No one's access changes.";
const withheldWords = (n: number) => `${n} more change(s) name users, groups, keys or teams this source does not describe: not shown in a pull request.`;
const headWords = (c: AccessChange) => `${c.identitiesChanged} identit${c.identitiesChanged === 1 ? 'y gains or loses' : 'ies gain or lose'} rights (${c.gains.length} gained, ${c.losses.length} lost; ${c.identitiesChecked} checked).`;

/** The section for a terminal. */
export function accessChangeText(c: AccessChange | undefined): string[] {
  if (!c) return [];
  if (c.gains.length + c.losses.length === 0) return [`Access: ${noChange}`, ...(c.withheld ? [`  ${withheldWords(c.withheld)}`] : [])];
  const out = [`Access: ${headWords(c)}`];
  let shown = 0;
  let total = 0;
  for (const g of accessGroups(c)) {
    for (const l of g.lines) {
      total++;
      if (shown < shownLines.text) {
        out.push(`  ${l.gains ? '+' : '-'} ${lineText(g.who, l)}`);
        shown++;
      }
    }
  }
  if (total > shown) out.push(`  ... and ${total - shown} more line(s): the JSON report (--report-json) lists every one.`);
  if (c.withheld) out.push(`  ${withheldWords(c.withheld)}`);
  return out;
}

function groupMarkdown(g: AccessGroup, lines: AccessLine[]): Md[] {
  return [
    md`- **${g.who}**`,
    ...lines.map((l) => md`  - ${l.gains ? 'gains' : 'loses'} ${l.resource === 'clusterroles' ? md`cluster role ${codeValue(l.name)}` : md`${l.verbs.join(', ')} on ${l.resource === 'ownedaccesskeys' && l.name !== '*' ? objectWords(l) : codeValue(l.object)}`}${viaWords(l.via)}`),
  ];
}

/** The section for a pull request comment or job summary: the first lines open, the next folded, the rest in the JSON report. */
export function accessChangeMarkdown(c: AccessChange | undefined): Md[] {
  if (!c) return [];
  const head = md`### Access change`;
  if (c.gains.length + c.losses.length === 0) return [head, md``, md`${noChange}`, ...(c.withheld ? [md``, md`${withheldWords(c.withheld)}`] : []), md``];
  const open: Md[] = [];
  const folded: Md[] = [];
  let count = 0;
  let left = 0;
  for (const g of accessGroups(c)) {
    const into = count < shownLines.markdown ? open : count < shownLines.markdown + shownLines.folded ? folded : undefined;
    if (!into) {
      left += g.lines.length;
      continue;
    }
    append(into, groupMarkdown(g, g.lines));
    count += g.lines.length;
  }
  const out: Md[] = [head, md``, md`${headWords(c)} Most powerful first; as the server will decide requests once this plan is applied.`, md``, ...open, md``];
  if (folded.length > 0) out.push(md`<details><summary>More access changes</summary>`, md``, ...folded, md``, md`</details>`, md``);
  if (left > 0) out.push(md`${left} more line(s) are in the JSON report (${mdJoin([codeValue('accessChange')], '')}).`, md``);
  if (c.withheld) out.push(md`${withheldWords(c.withheld)}`, md``);
  return out;
}
