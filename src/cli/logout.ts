/** `teamkeys logout`: the cached Login key deleted on the server (with itself as the credential) and from the cache. */
import { readFileSync } from 'node:fs';
import { HttpClient } from '../client/http.js';
import { ClientError } from '../client/types.js';
import { readLogin, removeLogin } from './login-cache.js';

/** Returns what happened, in a sentence. */
export async function logout(server: string, caFile: string | undefined): Promise<string> {
  const login = readLogin(server);
  if (!login) return `Not signed in to ${server}.`;
  const client = new HttpClient({ server: login.server, token: login.key, ...(caFile ? { ca: readFileSync(caFile) } : {}) });
  let outcome: string;
  try {
    await client.delete('ownedaccesskeys', login.name);
    outcome = `deleted access key ${login.name} on the server`;
  } catch (err) {
    // A key the server no longer accepts (expired, refused by the provider) or already deleted is as good as gone.
    if (!(err instanceof ClientError && (err.code === 401 || err.code === 404))) throw err;
    outcome = `access key ${login.name} no longer works on the server`;
  } finally {
    await client.close();
  }
  removeLogin(server);
  return `Signed out of ${login.server} as ${login.user}: ${outcome}, and removed it from this machine.`;
}
