/**
 * The access review's command: reads every Team and key (from a server whose key may read them
 * all, or the embedded store directly), computes the review with the authorizer's own code
 * (src/review), and prints it, with the changes since a previous review when asked.
 */
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument } from 'yaml';
import { defaultGroup } from '../../api/resources.js';
import type { KubeObject, OwnedAccessKey, Team } from '../../api/types.js';
import type { ApiClient } from '../../client/types.js';
import type { AccessReviewOptions } from './access-review.js';
import { CliError } from '../errors.js';
import { openClient } from '../gitops-flags.js';

/** A progress line on stderr, only when stderr is a terminal (a pipe or a file gets nothing). */
function progress(): { say(text: string): void; done(): void } {
  const tty = process.stderr.isTTY === true;
  let shown = false;
  return {
    say(text) {
      if (!tty) return;
      process.stderr.write(`\r\x1b[2K${text}`);
      shown = true;
    },
    done() {
      if (shown) process.stderr.write('\r\x1b[2K');
    },
  };
}

/**
 * A key that may read everything: `get` (so `list` shows every object) of every Team and every
 * OwnedAccessKey, asked of the server as `kubectl auth can-i` asks. Otherwise the review would be
 * of what this key sees, silently missing the rest: refuse, naming what is missing.
 */
async function requireReader(client: ApiClient): Promise<void> {
  const { HttpClient } = await import('../../client/http.js');
  if (!(client instanceof HttpClient)) return;
  const missing: string[] = [];
  for (const [plural, what, roles] of [
    ['teams', 'every Team', 'teams-viewer, teams-admin or management-admin'],
    ['ownedaccesskeys', 'every OwnedAccessKey', 'accesskeys-admin or management-admin'],
  ] as const) {
    for (const verb of ['get', 'list']) {
      const answer = await client.canI(verb, plural);
      if (!answer.allowed) {
        missing.push(`"${verb}" on ${what} (cluster role ${roles}${answer.reason ? `; ${answer.reason}` : ''})`);
        break;
      }
    }
  }
  if (missing.length === 0) return;
  const who = await client.whoami().catch(() => '');
  throw new CliError(
    `access-review needs a reader of everything, and ${who ? `"${who}"` : 'this key'} lacks ${missing.join(' and ')}: use a key of a member of a Team granting management-admin (or teams-viewer and accesskeys-admin), or run it against the embedded store (--store)`,
  );
}

async function readPrevious(file: string): Promise<import('../../review/model.js').ReviewDocument> {
  const { asReview } = await import('../../review/diff.js');
  const text = await readFile(file, 'utf8').catch(() => {
    throw new CliError(`cannot read --since ${file}`);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // JSON.parse names a position; say it as file:line:col.
    const at = /position (\d+)/.exec((err as Error).message);
    const offset = at ? Number(at[1]) : 0;
    const before = text.slice(0, offset).split('\n');
    throw new CliError(`${file}:${before.length}:${before[before.length - 1]!.length + 1}: not valid JSON: ${(err as Error).message.replace(/ in JSON at position \d+.*$/, '')}`);
  }
  const review = asReview(value);
  if (!('error' in review)) return review;
  // JSON is YAML: its parser gives the position of the misfit value.
  const lines = new LineCounter();
  const node = parseDocument(text, { lineCounter: lines }).getIn(review.at, true) as { range?: [number, number, number] } | undefined;
  const pos = node?.range ? lines.linePos(node.range[0]) : { line: 1, col: 1 };
  const where = review.at.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('');
  throw new CliError(`${file}:${pos.line}:${pos.col}: ${where ? `${where.replace(/^\./, '')}: ` : ''}${review.error}`);
}

export async function runAccessReview(opts: AccessReviewOptions): Promise<void> {
  const { reviewFormats, reviewChunks } = await import('../../review/render.js');
  const format = opts.output ?? 'markdown';
  if (!(reviewFormats as readonly string[]).includes(format)) throw new CliError(`--output must be markdown, csv or json, not "${format}"`);
  const previous = opts.since ? await readPrevious(opts.since) : undefined;
  const show = progress();
  const client = await openClient(opts, 'access-review');
  let teams: KubeObject[];
  let keys: KubeObject[];
  try {
    await requireReader(client);
    show.say('access-review: reading Teams…');
    teams = await client.list('teams');
    show.say(`access-review: ${teams.length} Teams; reading keys…`);
    const { reviewView } = await import('../../review/compute.js');
    keys = (await client.list('ownedaccesskeys')).map(reviewView);
  } finally {
    await client.close();
  }
  const [{ computeReview }, { diffReviews }] = await Promise.all([import('../../review/compute.js'), import('../../review/diff.js')]);
  const doc = computeReview({
    teams: teams as Team[],
    keys: keys as OwnedAccessKey[],
    group: opts.apiGroup ?? defaultGroup,
    source: client.target,
    now: new Date(),
    onProgress: (done, total) => show.say(`access-review: ${teams.length} Teams, ${keys.length} keys; reviewed ${done}/${total} identities and keys`),
  });
  show.done();
  // Teams and keys as read are no longer needed: let them go before the output is made.
  teams = [];
  keys = [];
  await writeAll(reviewChunks(doc, format as 'markdown' | 'csv' | 'json', previous ? diffReviews(previous, doc) : undefined));
}

/** Writes the pieces to stdout about 1 MB at a time, waiting whenever the pipe is full. */
async function writeAll(chunks: Iterable<string>): Promise<void> {
  let buffer = '';
  const flush = async () => {
    if (!buffer) return;
    const ok = process.stdout.write(buffer);
    buffer = '';
    if (!ok) await once(process.stdout, 'drain');
  };
  for (const chunk of chunks) {
    buffer += chunk;
    if (buffer.length >= 1 << 20) await flush();
  }
  await flush();
  // Everything handed over before the process may exit.
  await new Promise<void>((resolve, reject) => process.stdout.write('', (err) => (err ? reject(err) : resolve())));
}
