/**
 * The sign-in tests' shared setup: a real OpenID provider process with its accounts
 * (test/signin/fixture.ts), one `teamkeys serve` that is its relying party, a browser trusting
 * both, and a home folder whose XDG_CONFIG_HOME keeps the CLI's sign-ins. Start one per
 * `describe` (beforeAll) and stop it in afterAll: the provider and the server are the costly part.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, oidcFlags, startProvider, teamkeysLogin, type ProviderUser, type TestProvider } from '../signin/fixture.js';
import { teamkeys, type Run } from './cli.js';
import { startServe, type Served } from './serve-process.js';

/** What `teamkeys login` caches for a server: the Login key and its object's name. */
export interface CachedLogin {
  key: string;
  name: string;
  uid?: string;
}

export interface SignInWorld {
  provider: TestProvider;
  served: Served;
  /** The shared browser, trusting the provider's and the server's certificates. */
  browser: Browser;
  /** A temporary folder removed by stop(); the CLI's config lives in its `config/`. */
  home: string;
  /** The CLI's environment: XDG_CONFIG_HOME in `home`. */
  env: { XDG_CONFIG_HOME: string };
  /** The server's certificate, as `teamkeys login --ca-file` takes it. */
  serverCa: string;
  /** The provider's and the server's certificates, for another Browser or an undici Agent. */
  cas: Buffer[];
  /** `--server URL --ca-file CA`: how the CLI reaches this server. */
  target: string[];
  /** `teamkeys login --no-browser` to this server, the person signing in as `user` in the shared browser. */
  login(user: string, extra?: string[]): ReturnType<typeof teamkeysLogin>;
  /** The Login key the CLI cached (the one file under config/teamkeys/logins). */
  cachedLogin(): CachedLogin;
  /** `teamkeys ARGS --server URL --ca-file CA` with the world's environment, at once. */
  cli(args: string[]): Run;
  stop(): Promise<void>;
}

export interface SignInWorldOptions {
  /** The provider's accounts, made before the server starts. */
  users: Record<string, ProviderUser>;
  /** More `teamkeys serve` flags after the OIDC ones; given the home folder for files (a SQLite store, an audit log). */
  serve?: (home: string) => string[];
}

export async function startSignInWorld(opts: SignInWorldOptions): Promise<SignInWorld> {
  const home = mkdtempSync(join(tmpdir(), 'teamkeys-signin-'));
  const provider = await startProvider();
  let served: Served | undefined;
  try {
    for (const [id, user] of Object.entries(opts.users)) await provider.setUser(id, user);
    served = await startServe([...oidcFlags(provider), ...(opts.serve?.(home) ?? [])]);
  } catch (err) {
    await provider.stop();
    rmSync(home, { recursive: true, force: true });
    throw err;
  }
  const server = served;
  const serverCa = join(server.dir, 'tls', 'cert.pem');
  const cas = [readFileSync(provider.caFile), readFileSync(serverCa)];
  const browser = new Browser(cas);
  const env = { XDG_CONFIG_HOME: join(home, 'config') };
  const target = ['--server', server.url, '--ca-file', serverCa];
  return {
    provider,
    served: server,
    browser,
    home,
    env,
    serverCa,
    cas,
    target,
    login: (user, extra = []) => teamkeysLogin(browser, user, [...target, ...extra], env),
    cachedLogin: () => {
      const dir = join(home, 'config/teamkeys/logins');
      return JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]!), 'utf8')) as CachedLogin;
    },
    cli: (args) => teamkeys([...args, ...target], { env }),
    stop: async () => {
      await browser.close();
      await server.stop();
      await provider.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
