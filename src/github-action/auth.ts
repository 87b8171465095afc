/**
 * The key the Action talks to the server with: the token input (a stored key, from a secret), or
 * with `auth: oidc` none at all: the job's OpenID Connect ID token (GitHub's token request endpoint,
 * ACTIONS_ID_TOKEN_REQUEST_URL / _TOKEN, which `permissions: id-token: write` provides) traded at
 * the server's POST /auth/token for a short-lived key on a FederatedCredential (docs/federated.md).
 * Both are masked before anything could print them.
 */
import * as core from '@actions/core';
import { exchangeJobToken } from '../client/token-exchange.js';

export const authModes = ['token', 'oidc'] as const;
export type AuthMode = (typeof authModes)[number];

export interface ServerAuthInputs {
  auth: string;
  server: string;
  token: string;
  audience: string;
  credential: string;
  ca?: Buffer;
}

/** The auth input, refused before anything is read when it is not one of authModes. */
export function authMode(value: string): AuthMode {
  if ((authModes as readonly string[]).includes(value)) return value as AuthMode;
  throw new Error(`the auth input must be ${authModes.join(' or ')}, not "${value}"`);
}

/** The access key for the server, masked: the token input, or a key minted for this job. */
export async function serverKey(inputs: ServerAuthInputs): Promise<string> {
  const mode = authMode(inputs.auth);
  if (mode === 'token') {
    if (!inputs.token) throw new Error('the server input needs the token input (an access key, from a secret), or auth: oidc (no stored key: docs/action.md)');
    return inputs.token;
  }
  // One credential, chosen in the workflow: a stored key beside oidc would leave it unclear which one acts.
  if (inputs.token) throw new Error('auth: oidc takes no token input: the job trades its own ID token for a key; remove the token input (or use auth: token)');
  if (!process.env.ACTIONS_ID_TOKEN_REQUEST_URL || !process.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN) {
    throw new Error('auth: oidc needs the job\'s ID token, which GitHub gives only to jobs with "permissions: id-token: write" (ACTIONS_ID_TOKEN_REQUEST_URL is not set)');
  }
  // getIDToken masks the ID token itself.
  const idToken = await core.getIDToken(inputs.audience);
  const minted = await exchangeJobToken({ server: inputs.server, idToken, ...(inputs.credential ? { credential: inputs.credential } : {}), ...(inputs.ca ? { ca: inputs.ca } : {}), userAgent: 'teamkeys-action' });
  core.setSecret(minted.key);
  core.info(`auth: oidc: exchanged the job's ID token (audience ${inputs.audience}) for a key valid ${minted.expiresInSeconds} s`);
  return minted.key;
}
