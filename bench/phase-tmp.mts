import { existsSync } from 'node:fs';
import { populate } from './populate.js';
import { withRegistry } from '../src/cli/embedded.js';
import { computeReview } from '../src/review/compute.js';
import { renderReview } from '../src/review/render.js';
const n = Number(process.argv[2] ?? 10000);
const path = `/tmp/arb/s${n}.db`;
if (!existsSync(path)) { const t = performance.now(); await populate(path, n / 10, n); console.log('populate', ((performance.now() - t) / 1000).toFixed(1)); }
process.env.TEAMKEYS_ENCRYPTION_KEY_FILE = '/tmp/arb/enc.yaml';
await withRegistry(`sqlite:${path}`, async (registry) => {
  let t = performance.now();
  const teams = (await registry.teams.list()).items;
  const keys = (await registry.ownedaccesskeys.list()).items;
  console.log('list', ((performance.now() - t) / 1000).toFixed(2), teams.length, keys.length);
  t = performance.now();
  const doc = computeReview({ teams: teams as never, keys: keys as never, group: 'management.service', source: 'x', now: new Date() });
  console.log('compute', ((performance.now() - t) / 1000).toFixed(2), doc.counts);
  t = performance.now();
  const json = renderReview(doc, 'json');
  console.log('json', ((performance.now() - t) / 1000).toFixed(2), json.length);
  t = performance.now();
  const md = renderReview(doc, 'markdown');
  console.log('md', ((performance.now() - t) / 1000).toFixed(2), md.length);
});
