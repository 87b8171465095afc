/**
 * A stand-in for GitHub's pull request and reviews API on 127.0.0.1 (GET /repos/{o}/{r}/pulls/{n}
 * and .../reviews, paginated as GitHub does), answering with the pull requests the test sets.
 * Every request is recorded with the token it carried.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInReview {
  user: { login: string };
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED' | 'PENDING';
  commit_id: string;
}

export interface StandInPull {
  author: string;
  headSha: string;
  reviews: StandInReview[];
}

export interface ReviewsStandIn {
  url: string;
  token: string;
  /** By `owner/repo#n`. */
  pulls: Map<string, StandInPull>;
  /** `GET path authorization`. */
  requests: string[];
  close(): Promise<void>;
}

export async function startReviewsStandIn(): Promise<ReviewsStandIn> {
  const token = 'ghs_reviews0123456789';
  const pulls = new Map<string, StandInPull>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    const url = new URL(req.url ?? '/', 'http://x');
    const m = url.pathname.match(/^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)(\/reviews)?$/);
    const pull = m ? pulls.get(`${m[1]}/${m[2]}#${m[3]}`) : undefined;
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.headers.authorization !== `Bearer ${token}`) return send(401, { message: 'Bad credentials' });
    if (!m || !pull) return send(404, { message: 'Not Found' });
    if (!m[4]) return send(200, { number: Number(m[3]), user: { login: pull.author }, head: { sha: pull.headSha }, state: 'open' });
    const perPage = Number(url.searchParams.get('per_page') ?? 30);
    const page = Number(url.searchParams.get('page') ?? 1);
    send(200, pull.reviews.slice((page - 1) * perPage, page * perPage).map((r, i) => ({ id: i + 1, ...r })));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, token, pulls, requests, close: () => new Promise((done) => server.close(() => done())) };
}
