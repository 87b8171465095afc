/**
 * The Authorization header a key is read from (authenticate.ts bearerKey), as RFC 6750 spells it
 * (`"Bearer" 1*SP b64token`): the scheme `Bearer` (any case) at the start, one or more spaces, the
 * key, and nothing after it. Anything else is a 401 as a missing key is, never a key read out of
 * some other scheme or with a tail ignored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';

describe('the bearer key in the Authorization header', () => {
  let server: InProcess;
  const status = async (authorization: string) => (await server.fetch(`${server.api}/teams`, { headers: { Authorization: authorization } })).status;

  beforeAll(async () => {
    server = await startInProcess({ failureLimit: false });
  });
  afterAll(() => server.close());

  it('is read after the scheme in any case and any number of spaces', async () => {
    expect(await status(`Bearer ${adminKey}`)).toBe(200);
    expect(await status(`bearer   ${adminKey}`)).toBe(200);
  });

  it('is not read from another scheme that ends in "Bearer"', async () => {
    expect(await status(`NotBearer ${adminKey}`)).toBe(401);
    expect(await status(`Token Bearer ${adminKey}`)).toBe(401);
  });

  it('is not read when something follows it', async () => {
    expect(await status(`Bearer ${adminKey} ${adminKey}`)).toBe(401);
  });
});
