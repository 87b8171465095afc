/**
 * A stand-in for GitHub's Actions secrets API on 127.0.0.1: it holds a real libsodium key pair,
 * hands out the public key, and opens every sealed secret it is sent, as GitHub does. Repository
 * secrets (`owner/repo/NAME`), environment secrets (`owner/repo/env:ENV/NAME`, for environments in
 * `environments`) and organization secrets (`org:ORG/NAME`, with their visibility in `orgVisibility`
 * and, for `selected`, their repository ids in `orgRepositories`; a PUT of a `selected` secret
 * without `selected_repository_ids` empties the list here, the worst GitHub could do).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sodium from 'libsodium-wrappers';

export interface GitHubStandIn {
  url: string;
  token: string;
  /** Decrypted values by `owner/repo/NAME`. */
  secrets: Map<string, string>;
  /** Every request, as `METHOD path`. */
  requests: string[];
  /** When set, PUTs of a secret answer this status instead of storing it. */
  failPutWith?: number;
  /** Environments that exist, as `owner/repo/ENV` (others answer 404, as GitHub does). */
  environments: Set<string>;
  /** Visibility of each organization secret, by `org:ORG/NAME`. */
  orgVisibility: Map<string, string>;
  /** Repository ids of each `selected` organization secret, by `org:ORG/NAME`. */
  orgRepositories: Map<string, number[]>;
  close(): Promise<void>;
}

export async function startGitHubStandIn(): Promise<GitHubStandIn> {
  await sodium.ready;
  const pair = sodium.crypto_box_keypair();
  const keyId = '568250167242549743';
  const token = 'ghs_standin0123456789';
  const standIn: Omit<GitHubStandIn, 'url' | 'close'> = { token, secrets: new Map(), requests: [], environments: new Set(), orgVisibility: new Map(), orgRepositories: new Map() };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const url = req.url ?? '';
      standIn.requests.push(`${req.method} ${url}`);
      const [path = '', query = ''] = url.split('?');
      const reply = (code: number, value?: object) => {
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end(value ? JSON.stringify(value) : undefined);
      };
      if (req.headers.authorization !== `Bearer ${token}`) return reply(401, { message: 'Bad credentials' });
      const publicKey = () => reply(200, { key_id: keyId, key: sodium.to_base64(pair.publicKey, sodium.base64_variants.ORIGINAL) });
      /** Opens and stores a PUT secret under `name`. */
      const put = (name: string, extra?: (body: Record<string, string> & { selected_repository_ids?: number[] }) => string | undefined) => {
        if (standIn.failPutWith) return reply(standIn.failPutWith, { message: standIn.failPutWith === 403 ? 'Resource not accessible by integration' : 'Server Error' });
        const parsed = JSON.parse(body) as Record<string, string> & { selected_repository_ids?: number[] };
        if (parsed.key_id !== keyId) return reply(422, { message: 'Bad key_id' });
        const bad = extra?.(parsed);
        if (bad) return reply(422, { message: bad });
        const opened = sodium.crypto_box_seal_open(sodium.from_base64(parsed.encrypted_value!, sodium.base64_variants.ORIGINAL), pair.publicKey, pair.privateKey);
        const existed = standIn.secrets.has(name);
        standIn.secrets.set(name, sodium.to_string(opened));
        return reply(existed ? 204 : 201);
      };
      const m = path.match(/^\/repos\/([^/]+)\/([^/]+)\/actions\/secrets\/([^/]+)$/);
      if (req.method === 'GET' && m?.[3] === 'public-key') return publicKey();
      if (req.method === 'PUT' && m) return put(`${m[1]}/${m[2]}/${m[3]}`);
      const env = path.match(/^\/repos\/([^/]+)\/([^/]+)\/environments\/([^/]+)\/secrets\/([^/]+)$/);
      if (env) {
        const [, o, r, e, n] = env as unknown as [string, string, string, string, string];
        if (!standIn.environments.has(`${o}/${r}/${decodeURIComponent(e)}`)) return reply(404, { message: 'Not Found' });
        if (req.method === 'GET' && n === 'public-key') return publicKey();
        if (req.method === 'PUT') return put(`${o}/${r}/env:${decodeURIComponent(e)}/${n}`);
      }
      const repos = path.match(/^\/orgs\/([^/]+)\/actions\/secrets\/([^/]+)\/repositories$/);
      if (repos && req.method === 'GET') {
        const name = `org:${repos[1]}/${repos[2]}`;
        if (standIn.orgVisibility.get(name) !== 'selected') return reply(409, { message: 'Secret visibility is not selected' });
        const q = new URLSearchParams(query);
        const per = Number(q.get('per_page') ?? 30);
        const page = Number(q.get('page') ?? 1);
        const all = standIn.orgRepositories.get(name) ?? [];
        return reply(200, { total_count: all.length, repositories: all.slice((page - 1) * per, page * per).map((id) => ({ id, name: `repo-${id}` })) });
      }
      const org = path.match(/^\/orgs\/([^/]+)\/actions\/secrets\/([^/]+)$/);
      if (org) {
        const [, o, n] = org as unknown as [string, string, string];
        const name = `org:${o}/${n}`;
        if (req.method === 'GET' && n === 'public-key') return publicKey();
        if (req.method === 'GET') return standIn.orgVisibility.has(name) ? reply(200, { name: n, visibility: standIn.orgVisibility.get(name) }) : reply(404, { message: 'Not Found' });
        if (req.method === 'PUT') {
          return put(name, (b) => {
            // GitHub requires a visibility on every create or update of an organization secret.
            if (!['all', 'private', 'selected'].includes(b.visibility ?? '')) return 'visibility is required (all, private or selected)';
            standIn.orgVisibility.set(name, b.visibility!);
            if (b.visibility === 'selected') standIn.orgRepositories.set(name, b.selected_repository_ids ?? []);
            else standIn.orgRepositories.delete(name);
            return undefined;
          });
        }
      }
      return reply(404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(standIn, {
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
