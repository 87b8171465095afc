/**
 * A real OpenID provider for the sign-in tests: oidc-provider 8 (OpenID-certified; 9 warns on
 * Node 20) over HTTPS on loopback with a throwaway certificate, run as its own process:
 *
 *   node test/signin/provider.mjs <port> <cert.pem> <key.pem> <client-secret>
 *
 * It prints `issuer <url>` once listening. Its dev interactions serve the login and consent forms
 * (any password). Users and their state are changed between test steps through a tiny admin
 * endpoint: PUT /admin/users/<id> {groups, disabled, name, username}; GET /admin/refresh-tokens; POST /admin/forge {aud|iss} (ID tokens re-signed with those claims; no body: stop); POST /admin/down and /admin/up make every
 * other request fail at the connection (the provider unreachable), keeping its sessions and tokens.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

/** @typedef {{ groups: string[], disabled?: boolean, name?: string }} User */

const [portArg, certFile, keyFile, clientSecret] = process.argv.slice(2);
/** @type {Map<string, User>} */
const users = new Map();
let down = false;
/** Userinfo answers 503 this many more times (a provider's brief outage after its token endpoint answered). */
let failUserinfo = 0;
/** Refresh token values (an opaque token's value is its jti), for the tests that look for them at rest. */
const refreshTokens = [];
/** When set, ID tokens from the token endpoint are re-signed (with the provider's own key) with these claims changed: another audience's or issuer's token. */
let forge;
const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-signing-key', alg: 'RS256', use: 'sig' };

const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) });
await new Promise((resolve) => server.listen(Number(portArg ?? 0), '127.0.0.1', resolve));
const issuer = `https://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'teamkeys',
      client_secret: clientSecret,
      redirect_uris: ['https://127.0.0.1/auth/callback'],
      grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      response_types: ['code'],
    },
  ],
  async findAccount(_ctx, id) {
    const user = users.get(id);
    // A disabled or removed user has no account: the provider refuses its refresh tokens (invalid_grant).
    if (!user || user.disabled) return undefined;
    return {
      accountId: id,
      claims: async () => ({ sub: id, preferred_username: user.username ?? id, name: user.name ?? id, email: `${id}@example.test`, email_verified: true, groups: user.groups, locale: 'en' }),
    };
  },
  claims: { openid: ['sub'], profile: ['preferred_username', 'name', 'locale'], email: ['email', 'email_verified'], groups: ['groups'] },
  scopes: ['openid', 'offline_access', 'profile', 'email', 'groups'],
  // Every scope's claims in the ID token too, as Dex and Keycloak put groups there.
  conformIdTokenClaims: false,
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  // PROVIDER_ROTATE_REFRESH=1: each refresh returns a new refresh token and ends the old one (Dex's default).
  rotateRefreshToken: process.env.PROVIDER_ROTATE_REFRESH === '1',
  features: { devInteractions: { enabled: true }, deviceFlow: { enabled: true } },
  cookies: { keys: ['throwaway-test-cookie-key'] },
  jwks: { keys: [signingKey] },
  ttl: { AccessToken: 600, IdToken: 600, RefreshToken: 86_400, Grant: 86_400, Session: 86_400, Interaction: 600, DeviceCode: 600 },
});
// The teamkeys server under test listens on a random port: any loopback callback of it is registered.
provider.on('refresh_token.saved', (token) => refreshTokens.push(token.jti));
const allowed = /^https:\/\/127\.0\.0\.1:\d+\/auth\/callback$/;
provider.Client.prototype.redirectUriAllowed = (value) => allowed.test(value);

function admin(req, res) {
  let body = '';
  req.on('data', (c) => (body += c.toString()));
  req.on('end', () => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    const user = path.match(/^\/admin\/users\/([^/]+)$/)?.[1];
    if (req.method === 'PUT' && user) users.set(decodeURIComponent(user), JSON.parse(body));
    else if (path === '/admin/refresh-tokens') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(refreshTokens));
    else if (path === '/admin/forge') forge = body ? JSON.parse(body) : undefined;
    else if (path === '/admin/userinfo-fail') failUserinfo = Number(body || '1');
    else if (path === '/admin/down') down = true;
    else if (path === '/admin/up') down = false;
    else return void res.writeHead(404).end();
    res.writeHead(204).end();
  });
}

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.url?.startsWith('/admin/')) return admin(req, res);
  if (down) return void req.socket.destroy();
  if (failUserinfo > 0 && req.url?.startsWith('/me')) {
    failUserinfo--;
    return void res.writeHead(503, { 'content-type': 'text/plain' }).end('userinfo briefly unavailable');
  }
  if (forge && req.method === 'POST' && req.url === '/token') forgeIdToken(res);
  void callback(req, res);
});
/** Re-signs the ID token of this token response with the forged claims, before it is sent. */
function forgeIdToken(res) {
  const end = res.end.bind(res);
  res.end = (chunk, ...rest) => {
    const body = chunk ? JSON.parse(chunk.toString()) : {};
    if (!body.id_token) return end(chunk, ...rest);
    void new SignJWT({ ...decodeJwt(body.id_token), ...forge })
      .setProtectedHeader({ alg: 'RS256', kid: signingKey.kid, typ: 'JWT' })
      .sign(privateKey)
      .then((idToken) => {
        const text = JSON.stringify({ ...body, id_token: idToken });
        res.setHeader('content-length', Buffer.byteLength(text));
        end(text);
      });
    return res;
  };
}

console.log(`issuer ${issuer}`);
