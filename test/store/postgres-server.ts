/**
 * A throwaway PostgreSQL server for the tests: initdb and pg_ctl into a temp folder, on a free
 * loopback port. PostgreSQL refuses to run as root, so as root (CI) it runs as the postgres user.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { startServe, type Served } from '../server/serve-process.js';
import { freePort } from '../support/free-port.js';

export interface PostgresServer {
  url: string;
  /** A new, empty database on this server. */
  database(): Promise<string>;
  /** Stops the server as an operator would (`pg_ctl stop -m fast`: every session is ended); the data stays. */
  halt(): void;
  /** Starts a halted server again, on the same port and data. */
  resume(): void;
  /** Runs one statement as the superuser, on this server's default database or the one named. */
  query<T = Record<string, unknown>>(sql: string, values?: unknown[], database?: string): Promise<T[]>;
  stop(): void;
}

function findBin(name: string): string {
  const which = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  if (which) return which;
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort().reverse() : [];
  for (const v of versions) if (existsSync(`/usr/lib/postgresql/${v}/bin/${name}`)) return `/usr/lib/postgresql/${v}/bin/${name}`;
  throw new Error(`PostgreSQL's ${name} was not found: install PostgreSQL (apt-get install postgresql); these tests start their own server`);
}

export async function startPostgres(): Promise<PostgresServer> {
  const initdb = findBin('initdb');
  const pgCtl = findBin('pg_ctl');
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-pg-'));
  chmodSync(dir, 0o755);
  if (root) execFileSync('chown', ['postgres:postgres', dir]);
  const run = (cmd: string, args: string[]) => {
    const r = root ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' }) : spawnSync(cmd, args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  };
  const data = join(dir, 'data');
  run(initdb, ['-D', data, '-A', 'trust', '-U', 'postgres', '--locale=C', '-E', 'UTF8']);
  const port = await freePort();
  // fsync off: these servers hold test data only, and durability is the SQLite crash test's job.
  const start = () => run(pgCtl, ['-D', data, '-l', join(dir, 'log'), '-o', `-p ${port} -h 127.0.0.1 -k ${dir} -F -c max_connections=200`, '-w', 'start']);
  start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let n = 0;
  return {
    url,
    database: async () => {
      const name = `t${process.pid}_${++n}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`CREATE DATABASE ${name}`);
      await client.end();
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    halt: () => run(pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop']),
    resume: start,
    query: async <T>(sql: string, values: unknown[] = [], database?: string) => {
      const client = new pg.Client({ connectionString: database ?? url });
      await client.connect();
      try {
        return (await client.query(sql, values)).rows as T[];
      } finally {
        await client.end();
      }
    },
    stop: () => {
      try {
        run(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Two `teamkeys serve` replicas on one throwaway database, started at once before the suite (on an
 * empty database only one bootstraps, neither fails) and stopped with the server after it.
 */
export function replicasOnPostgres(adminKey: string): () => [Served, Served] {
  let server: PostgresServer | undefined;
  let a: Served | undefined;
  let b: Served | undefined;
  beforeAll(async () => {
    server = await startPostgres();
    const url = await server.database();
    const start = () => startServe(['--store', url, '--insecure-http'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    [a, b] = await Promise.all([start(), start()]);
  }, 60_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    server?.stop();
  });
  return () => [a!, b!];
}
