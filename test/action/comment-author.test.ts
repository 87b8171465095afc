/**
 * The Action adopted, and edited, the first comment that starts with its source's marker, whoever
 * wrote it. The marker is public (the source id is the repository's URL plus the folder), so a pull
 * request's author posted `<!-- teamkeys-plan source="..." -->` first: the Action never wrote a
 * comment of its own again, and its plan landed in the author's comment, which the author could edit
 * back afterwards (found by a review). The plan comment is now one the Action's own identity wrote.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('the plan comment and comments written by others', () => {
  let server: Server;
  const comments = new Map<number, { body: string; login: string; type: string }>();
  const calls: string[] = [];
  let marker: string;
  // Given to upsertComment: @actions/github reads GITHUB_API_URL once, when a test file first loads it.
  let apiUrl: string;
  let upsertComment: typeof import('../../src/github-action/comment.js').upsertComment;

  beforeAll(async () => {
    let next = 100;
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (d: Buffer) => (text += d.toString()));
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0]!;
        calls.push(`${req.method} ${path}`);
        const send = (code: number, v: unknown) => {
          res.writeHead(code, { 'content-type': 'application/json' });
          res.end(JSON.stringify(v));
        };
        const view = (id: number) => ({ id, body: comments.get(id)!.body, user: { login: comments.get(id)!.login, type: comments.get(id)!.type }, html_url: `https://github.example/c/${id}` });
        if (req.method === 'GET' && path === '/repos/acme/platform-teams/issues/7/comments') return send(200, [...comments.keys()].map(view));
        if (req.method === 'POST' && path === '/repos/acme/platform-teams/issues/7/comments') {
          const id = next++;
          comments.set(id, { body: (JSON.parse(text) as { body: string }).body, login: 'github-actions[bot]', type: 'Bot' });
          return send(201, view(id));
        }
        const m = path.match(/^\/repos\/acme\/platform-teams\/issues\/comments\/(\d+)$/);
        if (req.method === 'PATCH' && m && comments.has(Number(m[1]))) {
          comments.get(Number(m[1]))!.body = (JSON.parse(text) as { body: string }).body;
          return send(200, view(Number(m[1])));
        }
        send(404, { message: 'Not Found' });
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The pull request's author got there first (comment 1), with the Action's marker and a plan of their own.
    const mod = await import('../../src/github-action/comment.js');
    upsertComment = mod.upsertComment;
    marker = mod.commentMarker('github.com/acme/platform-teams/gitops');
    comments.set(1, { body: `${marker}\n## teamkeys plan: no changes\n`, login: 'mallory', type: 'User' });
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
  });

  it('writes its own comment and leaves the author\'s alone', async () => {
    const done = await upsertComment({ token: 'ghs_test', owner: 'acme', repo: 'platform-teams', issueNumber: 7, apiUrl }, marker, `${marker}\n## teamkeys plan: 1 to update\n`);
    expect(calls).not.toContain('PATCH /repos/acme/platform-teams/issues/comments/1');
    expect(done.action).toBe('created');
    expect(comments.get(1)!.body).toBe(`${marker}\n## teamkeys plan: no changes\n`);
    // The next run edits the Action's own comment, not a new one.
    const again = await upsertComment({ token: 'ghs_test', owner: 'acme', repo: 'platform-teams', issueNumber: 7, apiUrl }, marker, `${marker}\n## teamkeys plan: 2 to update\n`);
    expect([again.action, again.id]).toEqual(['updated', done.id]);
    expect(comments.get(done.id)!.body).toContain('2 to update');
  });
});
