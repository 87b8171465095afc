/**
 * What `teamkeys serve` prints: lines for a person on stdout, log lines on stderr in one form only
 * (JSON when stderr is not a terminal or with --log-format json, readable lines with
 * --log-format text), and no warning of any kind on a clean start.
 */
import { describe, expect, it } from 'vitest';
import { startServe } from './serve-process.js';

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
const isJson = (line: string) => {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
};

describe('serve output streams', () => {
  it('starts with no warning, JSON log lines only on stderr and human lines only on stdout', async () => {
    const served = await startServe();
    expect(await served.stop()).toBe(0);
    const stderr = lines(served.stderr());
    expect(stderr.length).toBeGreaterThan(2);
    expect(stderr.filter((l) => !isJson(l))).toEqual([]);
    expect(stderr.filter((l) => /Warning|DEP\d{3,}/.test(l))).toEqual([]);
    expect(stderr.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain('serving');
    expect(lines(served.stdout()).filter(isJson)).toEqual([]);
    expect(served.stdout()).toMatch(/^teamkeys serving on https:\/\/127\.0\.0\.1:\d+\/kubernetes\/management$/m);
  });

  it('--log-format text writes one readable line per event and no JSON', async () => {
    const served = await startServe(['--log-format', 'text']);
    expect(await served.stop()).toBe(0);
    const stderr = lines(served.stderr());
    expect(stderr.filter(isJson)).toEqual([]);
    expect(stderr).toContainEqual(expect.stringMatching(/^\[\d\d:\d\d:\d\d\] INFO: serving \{"url":"https:\/\/127\.0\.0\.1:\d+\/kubernetes\/management","store":"memory"\}$/));
    expect(stderr.filter((l) => /Warning|DEP\d{3,}/.test(l))).toEqual([]);
  });
});
