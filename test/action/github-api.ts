/** A stand-in for the GitHub REST API's issue comments, on 127.0.0.1, recording every call. */
import { createServer, type Server } from 'node:http';

export interface ApiCall {
  method: string;
  path: string;
  authorization?: string;
  body?: { body?: string };
}

export interface FakeGitHub {
  url: string;
  calls: ApiCall[];
  /** The comments on the pull request, by id. */
  comments: Map<number, string>;
  close(): Promise<void>;
}

export async function startFakeGitHub(owner: string, repo: string, pr: number): Promise<FakeGitHub> {
  const calls: ApiCall[] = [];
  const comments = new Map<number, string>([[1, 'LGTM, a comment by a person']]);
  /** Who wrote each comment: the Action's bot, but for the person's comment 1 (GitHub names a bot's type Bot). */
  const authorOf = (id: number) => (id === 1 ? { login: 'a-person', type: 'User' } : { login: 'github-actions[bot]', type: 'Bot' });
  let nextId = 100;
  const base = `/repos/${owner}/${repo}/issues`;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '').split('?')[0]!;
      const body = text ? (JSON.parse(text) as { body?: string }) : undefined;
      calls.push({ method: req.method ?? '', path, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}), ...(body ? { body } : {}) });
      const send = (code: number, value: unknown) => {
        res.writeHead(code, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      const comment = (id: number) => ({ id, body: comments.get(id), html_url: `https://github.example/${owner}/${repo}/pull/${pr}#issuecomment-${id}`, user: authorOf(id) });
      if (req.method === 'GET' && path === `${base}/${pr}/comments`) return send(200, [...comments.keys()].map(comment));
      if (req.method === 'POST' && path === `${base}/${pr}/comments`) {
        const id = nextId++;
        comments.set(id, body?.body ?? '');
        return send(201, comment(id));
      }
      const m = path.match(new RegExp(`^${base}/comments/(\\d+)$`));
      if (req.method === 'PATCH' && m && comments.has(Number(m[1]))) {
        comments.set(Number(m[1]), body?.body ?? '');
        return send(200, comment(Number(m[1])));
      }
      send(404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, calls, comments, close: () => new Promise((done) => server.close(() => done())) };
}
