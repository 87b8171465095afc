/**
 * `teamkeys credential --server URL [--ca-file F]`: kubectl's exec credential plugin
 * (client.authentication.k8s.io/v1). It runs before every kubectl command, so main.ts runs it
 * without loading commander or any other command: it reads the cached Login key and prints an
 * ExecCredential. Only when there is no valid key does it load the login (in an interactive
 * session, as kubectl tells it through KUBERNETES_EXEC_INFO).
 */
import { apiRoot } from '../api/resources.js';
import { loginValid, readLogin, writeLogin, type CachedLogin } from './login-cache.js';

const execApiVersion = 'client.authentication.k8s.io/v1';

/** `--flag value` and `--flag=value` of the few flags credential takes. */
function flag(args: string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}`) return args[i + 1];
    if (args[i]!.startsWith(`--${name}=`)) return args[i]!.slice(name.length + 3);
  }
  return undefined;
}

/** A word as a POSIX shell reads it back: quoted only when it holds anything but safe characters. */
const shellWord = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);

/** What kubectl says of this call (KUBERNETES_EXEC_INFO): whether a person is at the terminal, and the cluster it is about to call. */
function execInfo(): { interactive?: boolean; cluster?: { server?: unknown } } {
  try {
    const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO ?? '') as { spec?: { interactive?: boolean; cluster?: { server?: unknown } } };
    return info.spec ?? {};
  } catch {
    return {};
  }
}

const interactive = () => execInfo().interactive === true;

/**
 * The server kubectl is about to call, when it says (provideClusterInfo, which teamkeys' kubeconfig
 * entries set), and it is not the one this credential is for: `kubectl --server https://other`
 * with the teamkeys context, or a context pairing the teamkeys user with another cluster, would
 * hand that server the Login key (found by a review). No key is printed then. A caller that does
 * not say (an entry written before stop 62, a client that passes no cluster) is served as before.
 */
function otherServer(server: string): string | undefined {
  const target = execInfo().cluster?.server;
  if (typeof target !== 'string' || target === '') return undefined;
  try {
    return apiRoot(target) === apiRoot(server) ? undefined : target;
  } catch {
    return target;
  }
}

/** When the cached key expires if used now: its lifetime counts from its last use. */
const expiryIfUsed = (login: CachedLogin, now: number) => new Date(now + login.ttlSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The ExecCredential for a cached key, whose lifetime starts again now (kubectl is about to use it). */
export function execCredential(login: CachedLogin, now = Date.now()): string {
  const expirationTimestamp = expiryIfUsed(login, now);
  return `${JSON.stringify({ kind: 'ExecCredential', apiVersion: execApiVersion, spec: { interactive: false }, status: { expirationTimestamp, token: login.key } })}\n`;
}

/** Runs the plugin; resolves with the exit code. */
export async function runCredential(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write('Usage: teamkeys credential --server URL [--ca-file FILE]\n\nkubectl exec credential plugin: prints the cached Login key for the server as an ExecCredential (client.authentication.k8s.io/v1); signs in first when there is none and the session is interactive.\n');
    return 0;
  }
  const server = flag(args, 'server');
  if (!server) {
    process.stderr.write('teamkeys credential: --server URL is required\n');
    return 1;
  }
  const other = otherServer(server);
  if (other !== undefined) {
    process.stderr.write(`teamkeys credential: kubectl is calling ${other}, not ${apiRoot(server)}: the key of a sign-in there is given to no other server\n`);
    return 1;
  }
  let login = readLogin(server);
  const caFile = flag(args, 'ca-file');
  // Given to this very kubectl already: client-go runs the plugin again after a 401 to that key.
  if (loginValid(login) && login.handedTo === process.ppid) {
    const { checkKey } = await import('./credential-check.js');
    const checked = await checkKey(server, login.key, caFile);
    // Read again: a sign-in elsewhere (teamkeys login, another kubectl) may have cached a new key
    // while the server was asked, and only the key that was refused is marked.
    const current = readLogin(server);
    if (checked.verdict === 'refused' && current?.name === login.name && current.key === login.key) {
      login = { ...current, refused: checked.message };
      writeLogin(login);
    } else if (current?.key !== login.key) login = current;
  }
  const refused = login?.refused !== undefined ? login : undefined;
  if (!loginValid(login)) {
    if (!interactive()) {
      // A command that works as printed: with the CA the kubeconfig trusts the server by.
      const command = ['teamkeys', 'login', '--server', server, ...(caFile ? ['--ca-file', caFile] : [])].map(shellWord).join(' ');
      const why = refused ? `the server refused the key of your sign-in (${refused.name}): ${refused.refused};` : `no valid sign-in for ${server}:`;
      process.stderr.write(`teamkeys: ${why} run ${command}\n`);
      return 1;
    }
    const { login: signIn } = await import('./login-flow.js');
    // stdout carries the credential: the login talks to the person on stderr.
    login = await signIn({ server, ...(caFile ? { caFile } : {}), out: process.stderr });
  }
  const now = Date.now();
  const expirationTimestamp = expiryIfUsed(login, now);
  // The key's lifetime counts from its last use: remembered, so a key in daily use never looks
  // expired; and whom it was given to, so a call after a 401 is told from the first.
  if (expirationTimestamp !== login.expirationTimestamp || login.handedTo !== process.ppid) writeLogin({ ...login, expirationTimestamp, handedTo: process.ppid });
  process.stdout.write(execCredential(login, now));
  return 0;
}
