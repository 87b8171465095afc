/** From the provider's claims to a Login key's identity: the table of rules (src/signin/claims.ts). */
import { describe, expect, it } from 'vitest';
import { identityFromClaims, mergeClaims } from '../../src/signin/claims.js';
import { usernamePrefixFor } from '../../src/signin/options.js';

const mapping = { usernameClaim: 'preferred_username', usernamePrefix: '', groupsClaim: 'groups', groupsPrefix: '', allowedGroups: [] as string[], connectorName: 'dex' };
const ana = { iss: 'https://idp', sub: 'u-1', aud: 'teamkeys', exp: 1, iat: 1, nonce: 'n', preferred_username: 'ana', email: 'ana@x', email_verified: true, groups: ['b', 'a', 'a'], name: 'Ana', locale: 'pt', age: 40 };

describe('identityFromClaims', () => {
  const cases: [string, Record<string, unknown>, Partial<typeof mapping>, unknown][] = [
    ['maps the standard claims; other string claims go to extraClaims; protocol claims and non-strings do not', ana, {}, {
      username: 'ana',
      identity: { userId: 'u-1', username: 'ana', preferredUsername: 'ana', email: 'ana@x', emailVerified: true, groups: ['a', 'b'], connector: 'dex', extraClaims: { name: 'Ana', locale: 'pt' } },
    }],
    ['another username claim', ana, { usernameClaim: 'email' }, { username: 'ana@x' }],
    ['an unverified email does not name a user (email_verified false, as kube-apiserver refuses it)', { ...ana, email_verified: false }, { usernameClaim: 'email' }, { refusal: 'the identity provider has not verified the email ana@x that would name you; verify it there, or ask your administrator' }],
    ['an email without email_verified names the user (providers that never send it, as kube-apiserver)', { ...ana, email_verified: undefined }, { usernameClaim: 'email' }, { username: 'ana@x' }],
    ['the username prefix is prepended to the claim (the identity names the prefixed user too)', ana, { usernamePrefix: 'https://idp#' }, { username: 'https://idp#ana', identity: expect.objectContaining({ username: 'https://idp#ana', preferredUsername: 'ana' }) }],
    ['a missing username claim refuses', { sub: 'u-1' }, {}, { refusal: 'the identity provider gave no preferred_username claim to name you by; ask your administrator' }],
    ['allowed groups filter the groups, then the prefix applies', ana, { allowedGroups: ['a', 'z'], groupsPrefix: 'oidc:' }, { identity: expect.objectContaining({ groups: ['oidc:a'] }) }],
    ['none of the allowed groups refuses', ana, { allowedGroups: ['z'] }, { refusal: 'ana is in none of the groups allowed to sign in (z)' }],
    ['a single group given as a string counts', { ...ana, groups: 'solo' }, {}, { identity: expect.objectContaining({ groups: ['solo'] }) }],
    ['email_verified other than true is not verified', { ...ana, email_verified: 'true' }, {}, { identity: expect.not.objectContaining({ emailVerified: true }) }],
    ['a name with the reserved system: prefix refuses (the server records its own writes as system:teamkeys)', { ...ana, preferred_username: 'system:teamkeys' }, {}, { refusal: 'system:teamkeys names you with the reserved system: prefix; ask your administrator' }],
    ['a prefixed name is not the reserved one', { ...ana, preferred_username: 'system:teamkeys' }, { usernamePrefix: 'https://idp#' }, { username: 'https://idp#system:teamkeys' }],
  ];
  for (const [name, claims, opts, expected] of cases) {
    it(name, () => expect(identityFromClaims(claims, { ...mapping, ...opts })).toMatchObject(expected as object));
  }
});

describe('usernamePrefixFor (as kube-apiserver --oidc-username-prefix)', () => {
  it.each([
    [undefined, 'preferred_username', 'https://idp.example#'],
    [undefined, 'sub', 'https://idp.example#'],
    [undefined, 'email', ''],
    ['-', 'preferred_username', ''],
    ['oidc:', 'email', 'oidc:'],
  ])('flag %s with claim %s: %j', (flag, claim, prefix) => expect(usernamePrefixFor(flag, claim, 'https://idp.example')).toBe(prefix));
});

describe('mergeClaims', () => {
  it("the ID token's claims win; userinfo fills the rest", () => {
    expect(mergeClaims({ sub: 's', groups: ['id'] }, { sub: 's', groups: ['ui'], email: 'e' })).toEqual({ sub: 's', groups: ['id'], email: 'e' });
  });
});
