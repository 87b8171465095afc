/** The token exchange's wire names (RFC 8693, docs/federated.md), shared by the server and its clients. */
export const tokenExchangeGrant = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const subjectTokenTypes = ['urn:ietf:params:oauth:token-type:id_token', 'urn:ietf:params:oauth:token-type:jwt'];
export const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
/** The parameter naming the FederatedCredential to use (optional when exactly one rule matches). */
export const credentialParameter = 'federated_credential';
