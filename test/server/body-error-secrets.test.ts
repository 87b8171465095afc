/**
 * A body that does not parse is refused without repeating what it holds: V8's JSON.parse message
 * quotes the text around the error, and the YAML library's names an unresolved alias, so a key
 * value typed without quotes (or as an alias) came back in the 400 (found by a review).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const value = 'LeakyValue0123456789abcdefghijkl';

describe('a request body that does not parse', () => {
  let server: InProcess;
  beforeAll(async () => {
    server = await startInProcess({});
  });
  afterAll(() => server.close());

  it.each([
    ['JSON, the value unquoted', 'application/json', `{"metadata":{"name":"k"},"spec":{"user":"ana","key":${value}}}`, 'the request body is not valid JSON: unexpected text (not repeated here)'],
    ['JSON, a short body V8 quotes whole', 'application/json', `{"key":${value}`, 'the request body is not valid JSON: unexpected text (not repeated here)'],
    ['YAML, the value as an alias', 'application/yaml', `metadata:\n  name: k\nspec:\n  user: ana\n  key: *${value}\n`, 'the request body is not valid YAML: an alias refers to no anchor before it'],
  ])('%s: 400, saying what is wrong, without the value', async (_label, type, body, message) => {
    const res = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': type }, body });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    expect((JSON.parse(text) as { message: string }).message).toContain(message);
    expect(text).not.toContain(value.slice(0, 8));
  });

  it('a message that names a position only is kept as V8 wrote it', async () => {
    const res = await server.fetch(`${server.api}/teams`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"metadata": {' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/^the request body is not valid JSON: .*position 14/);
  });
});
