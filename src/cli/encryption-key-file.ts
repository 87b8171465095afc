/**
 * The encryption key file (`--encryption-key-file`, default <state dir>/encryption.yaml): named
 * AES-256 keys, the first encrypts, every one decrypts (kube's EncryptionConfiguration, reduced to
 * what this server seals). Made with one random key, mode 0600, on first start; refused when
 * others may read it.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parse, stringify } from 'yaml';
import { FieldCipher, type CipherKey } from '../api/field-cipher.js';
import { CliError } from './errors.js';

/** The default key file name inside the state directory. */
export const encryptionKeyFileName = 'encryption.yaml';

const header = `# teamkeys: keys that encrypt sealed fields (identity.connectorData, oidcLogin tokens) at rest.
# The first key encrypts, every key decrypts. To rotate: put a new key first, restart every process
# that opens the store, write each object once (any update re-encrypts), then remove the old key.
# A new key: {name: <unique name>, secret: <32 random bytes, base64>} (openssl rand -base64 32).
`;

async function create(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const name = `key-${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
  const body = header + stringify({ keys: [{ name, secret: randomBytes(32).toString('base64') }] });
  // wx: two processes starting together must not both write one; the loser reads the winner's.
  await writeFile(path, body, { mode: 0o600, flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  await chmod(path, 0o600);
}

function parseKeys(path: string, text: string): CipherKey[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new CliError(`${path}: not YAML: ${(err as Error).message}`);
  }
  const list = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list) || list.length === 0) throw new CliError(`${path}: keys: must list at least one key`);
  const names = new Set<string>();
  return list.map((k: { name?: unknown; secret?: unknown }, i) => {
    if (typeof k?.name !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(k.name)) throw new CliError(`${path}: keys[${i}].name: must be 1-64 of [A-Za-z0-9._-]`);
    if (names.has(k.name)) throw new CliError(`${path}: keys[${i}].name: "${k.name}" appears twice`);
    names.add(k.name);
    const secret = typeof k.secret === 'string' ? Buffer.from(k.secret, 'base64') : Buffer.alloc(0);
    if (secret.length !== 32) throw new CliError(`${path}: keys[${i}].secret: must be 32 bytes, base64-encoded`);
    return { name: k.name, secret };
  });
}

/** The cipher of the key file at `path`, creating the file on first use. */
export async function loadCipher(path: string): Promise<FieldCipher> {
  const mode = await stat(path).then((s) => s.mode, () => undefined);
  if (mode === undefined) await create(path);
  else if ((mode & 0o077) !== 0) {
    throw new CliError(`${path}: others may read this encryption key file (mode ${(mode & 0o777).toString(8)}); run chmod 600 ${path}`);
  }
  return new FieldCipher(parseKeys(path, await readFile(path, 'utf8')));
}
