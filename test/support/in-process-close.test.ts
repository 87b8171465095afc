/**
 * The in-process server closes as `teamkeys serve` does: a watch still open when a test closes it
 * ends, and close() returns. With fastify's app.close() alone it waited for the watch's
 * connection, gone idle after server.close() had swept the idle ones, until the test timed out.
 */
import { expect, it } from 'vitest';
import { readEvents, startInProcess } from './in-process.js';

it('close() ends an open watch and returns', async () => {
  const s = await startInProcess();
  const res = await s.fetch(`${s.api}/teams?watch=true`);
  expect(res.status).toBe(200);
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<string>((r) => (timer = setTimeout(() => r('hung'), 8_000)));
  const closed = s.close().then(() => 'closed');
  expect(await Promise.race([closed, hung])).toBe('closed');
  clearTimeout(timer);
  // The watcher saw its stream end, with no event left unread.
  expect(await readEvents(res, 1, 1_000)).toEqual([]);
});
