import type pg from 'pg';

/**
 * Connection settings of every connection: a database that does not answer within 5 s is
 * unreachable (pg's default is to wait forever), and TCP keepalive finds peers that vanished.
 */
export const connection = (url: string, applicationName: string): pg.ClientConfig => ({
  connectionString: url,
  application_name: applicationName,
  connectionTimeoutMillis: 5_000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
});
