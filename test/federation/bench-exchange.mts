// Ad-hoc figure (not a test; run: npx tsx test/federation/bench-exchange.mts): one exchange (cached JWKS + mint) against one GET of a key, same run, per request wall and CPU (client and server share the process).
import { startInProcess } from '../support/in-process.js';
import { create } from '../auth/fixture.js';
import { startIssuer } from './issuer.js';

const n = Number(process.env.N ?? 200);
const issuer = await startIssuer();
const server = await startInProcess({ federation: { ca: issuer.ca } });
await create(server, 'teams', { metadata: { name: 'payments' }, spec: {} });
await create(server, 'federatedcredentials', { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'r' }, spec: { issuer: issuer.url, audiences: ['teamkeys'], claims: { repository_id: '1001' }, team: 'payments' } });
const tokens = await Promise.all(Array.from({ length: n + 6 }, () => issuer.token()));
const exchange = (t: string) => fetch(`${server.base}/auth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: t, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' }).toString() }).then(async (r) => { if (r.status !== 200) throw new Error(await r.text()); return r.json(); });
for (const t of tokens.slice(0, 5)) await exchange(t); // warm: discovery, JWKS, JIT
const key = (await exchange(tokens[5]!)) as { access_token: string };
const get = () => server.fetch(`${server.api}/ownedaccesskeys/admin`).then((r) => r.text());
for (let i = 0; i < 20; i++) await get();
const time = async (f: (i: number) => Promise<unknown>) => { const c0 = process.cpuUsage(); const t0 = performance.now(); for (let i = 0; i < n; i++) await f(i); const c = process.cpuUsage(c0); return { ms: (performance.now() - t0) / n, cpuMs: (c.user + c.system) / 1000 / n }; };
const g = await time(() => get());
const e = await time((i) => exchange(tokens[i + 6]!));
console.log(JSON.stringify({ n, getKey: g, exchange: e, ratio: +(e.ms / g.ms).toFixed(1), jwksFetches: issuer.jwksFetches(), key: key.access_token ? 'ok' : 'none' }));
await server.close();
await issuer.close();
