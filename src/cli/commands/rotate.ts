/**
 * `teamkeys rotate NAME`: rotates an access key through its rotation subresource (a server with
 * --server, or the embedded store), with an overlap during which the previous value keeps working.
 * The new value goes to --key-file (0600, never through a link) or to stdout, and nowhere else:
 * what the command says about the rotation goes to stderr when stdout carries the value.
 */
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { ClientError, type ApiClient, type KeyRotationSpec, type RotateOptions } from '../../client/types.js';
import type { KubeObject } from '../../api/types.js';
import type { TargetFlags } from '../gitops-flags.js';
import { CliError } from '../errors.js';
import { parseDuration } from '../duration.js';
import { addFlags, targetFlags } from '../flag-specs.js';

interface Options extends TargetFlags {
  overlap?: string;
  awaitConfirmation?: boolean;
  confirm?: boolean;
  keyFile?: string;
  dryRun?: boolean;
  resourceVersion?: string;
  idempotencyKey?: string;
}

/** The rotation subresource's limit (src/api/key-rotation.ts): 30 days. */
const maxOverlapMs = 30 * 86_400_000;

/** --overlap as whole seconds: a duration (30s, 5m, 1h, 30d), or 0 in any unit (0, 0s, 0m): no overlap. */
export function overlapSeconds(value: string): number {
  if (/^0+(ms|s|m|h|d)?$/.test(value)) return 0;
  const ms = parseDuration('--overlap', value);
  if (ms % 1000 !== 0) throw new CliError(`--overlap must be whole seconds (such as 30s, 5m, 1h or 30d), not "${value}"`);
  if (ms > maxOverlapMs) throw new CliError(`--overlap may be at most 30d, not "${value}"`);
  return ms / 1000;
}

/** What the rotation did, for a person: when the previous value stops, or that it awaits confirmation. */
function summary(name: string, key: KubeObject, opts: Options): string {
  const rotation = (key.status as { rotation?: { previousValidUntil?: string; awaitingConfirmation?: boolean } } | undefined)?.rotation;
  const dry = opts.dryRun ? ' (dry run: nothing was changed)' : '';
  const what = `ownedaccesskey.${opts.apiGroup}/${name}`;
  if (opts.confirm) return `${what}: rotation confirmed; the previous value works until ${rotation?.previousValidUntil ?? 'now'}${dry}`;
  const rv = key.metadata.resourceVersion;
  const previous = rotation?.awaitingConfirmation
    ? `the previous value works until the rotation is confirmed (teamkeys rotate ${name} --confirm${rv && !opts.dryRun ? ` --resource-version ${rv}` : ''})`
    : `the previous value works until ${rotation?.previousValidUntil ?? 'now'}`;
  return `${what} rotated; ${previous}${dry}`;
}

export function registerRotate(program: Command): void {
  addFlags(
    program
      .command('rotate')
      .description('rotate an access key: a new value, the previous one working for --overlap (on a server with --server, or the embedded store)')
      .argument('<name>', 'the OwnedAccessKey to rotate')
      .option('--overlap <duration>', 'how long the previous value keeps working: 0 or 0s (default: none), 30s, 5m, 1h, 30d at most')
      .option('--await-confirmation', 'keep the previous value working until `teamkeys rotate NAME --confirm`; the overlap starts then')
      .option('--confirm', 'confirm a rotation made with --await-confirmation: its overlap starts now')
      .option('--resource-version <rv>', 'a precondition: act only if the key is still at this resourceVersion (409 otherwise); with --confirm, the one the rotation printed, so only that rotation is confirmed')
      .option('--key-file <path>', 'write the new value to this file (mode 0600) instead of printing it'),
    targetFlags,
  )
    .option('--dry-run', 'validate and show what would happen without rotating')
    .option('--idempotency-key <key>', 'names this rotation (1 to 128 of A-Z a-z 0-9 . _ : -): the same command again with it rotates no second time (default: a new one per run)')
    .action(async (name: string, opts: Options) => {
      if (opts.confirm && (opts.overlap !== undefined || opts.awaitConfirmation || opts.keyFile)) {
        throw new CliError('--confirm takes no --overlap, --await-confirmation or --key-file: it only starts the overlap of a rotation that awaits confirmation');
      }
      if (opts.confirm && opts.idempotencyKey) throw new CliError('--confirm takes no --idempotency-key: a confirmation changes nothing when repeated');
      const spec = opts.confirm
        ? { confirm: true }
        : { overlapSeconds: opts.overlap === undefined ? 0 : overlapSeconds(opts.overlap), ...(opts.awaitConfirmation ? { awaitConfirmation: true } : {}), idempotencyKey: opts.idempotencyKey ?? randomUUID() };
      // Refused before the rotation, not after it: a value that could not be written would be lost.
      if (opts.keyFile && !opts.dryRun) return rotateToFile(name, spec as { overlapSeconds: number; awaitConfirmation?: boolean }, opts, opts.keyFile);
      if (opts.keyFile) await checkKeyFile(opts.keyFile);
      const { openClient } = await import('../gitops-flags.js');
      const client = await openClient(opts);
      let key: KubeObject;
      try {
        key = await rotateRetried(client, name, spec, { fieldManager: 'teamkeys', ...(opts.dryRun ? { dryRun: true } : {}), ...(opts.resourceVersion ? { resourceVersion: opts.resourceVersion } : {}) });
      } finally {
        await client.close();
      }
      const value = (key.spec as { key?: string } | undefined)?.key;
      const said = summary(name, key, opts);
      // A dry run's value was never stored: printing it, or writing it over a key file, would only mislead.
      if (!opts.confirm && !opts.dryRun && value === undefined) throw lostValue(name, opts, spec as KeyRotationSpec);
      if (opts.confirm || opts.dryRun || value === undefined) {
        console.log(said);
        return;
      }
      console.error(said);
      process.stdout.write(`${value}\n`);
    });
}

/**
 * --key-file: the file is created first (exclusive, 0600, beside the target), the key rotated
 * awaiting confirmation, the value written and renamed into place, and only then the rotation
 * confirmed (unless --await-confirmation asked to leave that to the user). A file that cannot be
 * made or written leaves the previous value working: nothing rotated, or a rotation awaiting
 * confirmation that the next `teamkeys rotate` replaces.
 */
async function rotateToFile(name: string, spec: { overlapSeconds: number; awaitConfirmation?: boolean; idempotencyKey?: string }, opts: Options, keyFile: string): Promise<void> {
  await checkKeyFile(keyFile);
  const [{ open, rename, rm }, { constants }, { randomBytes }, { basename, dirname, join }] = await Promise.all([import('node:fs/promises'), import('node:fs'), import('node:crypto'), import('node:path')]);
  const temporary = join(dirname(keyFile), `.${basename(keyFile)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600).catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`--key-file ${keyFile}: cannot create a file in ${dirname(keyFile)} (${err.code ?? err.message}): nothing was rotated`);
  });
  const { openClient } = await import('../gitops-flags.js');
  let client: Awaited<ReturnType<typeof openClient>> | undefined;
  try {
    client = await openClient(opts);
    const rotated = await rotateRetried(client, name, { ...spec, awaitConfirmation: true }, { fieldManager: 'teamkeys' });
    const value = (rotated.spec as { key?: string } | undefined)?.key;
    if (value === undefined) throw lostValue(name, opts, { ...spec, awaitConfirmation: true });
    try {
      await handle.writeFile(`${value}\n`);
      await handle.chmod(0o600);
      await handle.close();
      await rename(temporary, keyFile);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new CliError(`ownedaccesskey.${opts.apiGroup}/${name}: rotated, but the new value could not be written to ${keyFile} (${e.code ?? e.message}); the previous value keeps working (the rotation awaits confirmation): run teamkeys rotate ${name} again`);
    }
    // Confirmed as rotated (its resourceVersion): another rotation meanwhile (a second run, the
    // reconciler's schedule) makes this a 409, not a confirmation of that one's value while this
    // file holds a dead one (found by a review).
    const key = spec.awaitConfirmation ? rotated : await confirmRotation(client, name, rotated, keyFile, opts);
    console.log(`${summary(name, key, opts)}; the new value is in ${keyFile}`);
  } finally {
    await handle.close().catch(() => undefined);
    await rm(temporary, { force: true });
    await client?.close();
  }
}

/**
 * Confirms the rotation this run made, and no other: at the resourceVersion the rotation returned.
 * A 409 is not always another rotation: the server's record of the key's use (status.lastActivity),
 * a label, are writes too and keep the generation, so the key is read again and confirmed at its
 * new version while its generation is still the rotation's (as the reconciler does:
 * keys/key-delivery.ts mayConfirmAgain). Another rotation moved the generation: the file's value is
 * not the key's, and the command says so (found by a review, then by the review of the fix).
 */
export async function confirmRotation(client: Pick<ApiClient, 'rotate' | 'get'>, name: string, rotated: KubeObject, keyFile: string, opts: Pick<Options, 'apiGroup'>): Promise<KubeObject> {
  const confirm = (resourceVersion: string | undefined) => client.rotate(name, { confirm: true }, { fieldManager: 'teamkeys', ...(resourceVersion ? { resourceVersion } : {}) });
  try {
    return await confirm(rotated.metadata.resourceVersion);
  } catch (err) {
    if (!(err instanceof ClientError && err.fromServer && err.code === 409)) throw err;
    // Loaded here, on a conflict only: the command's module is loaded for --help and completion too.
    const { mayConfirmAgain } = await import('../../gitops/keys/key-delivery.js');
    const now = await client.get('ownedaccesskeys', name);
    if (mayConfirmAgain(rotated.metadata, now)) return confirm(now.metadata.resourceVersion);
    throw new CliError(`ownedaccesskey.${opts.apiGroup}/${name}: another rotation replaced this one before it was confirmed, so the value in ${keyFile} is not the key's and stops working: run teamkeys rotate ${name} again`);
  }
}

/** A key file must be a regular file or nothing, in a folder that exists: never a link. */
async function checkKeyFile(path: string): Promise<void> {
  const { lstat } = await import('node:fs/promises');
  const { dirname } = await import('node:path');
  const info = await lstat(path).catch(() => undefined);
  if (info && (info.isSymbolicLink() || !info.isFile())) throw new CliError(`--key-file ${path} is a symbolic link or not a regular file: refusing to write a key there`);
  const folder = await lstat(dirname(path)).catch(() => undefined);
  if (!folder?.isDirectory()) throw new CliError(`--key-file ${path}: the folder ${dirname(path)} does not exist or is not a folder`);
}

type RotateClient = Pick<ApiClient, 'rotate'>;

/**
 * Sends a rotation, and once more with the same idempotency key when no answer came (the
 * connection broke): the server makes it at most once, and a retry of one it made answers without
 * the value (lostValue).
 */
async function rotateRetried(client: RotateClient, name: string, spec: KeyRotationSpec, opts: RotateOptions): Promise<KubeObject> {
  try {
    return await client.rotate(name, spec, opts);
  } catch (err) {
    if (!(err instanceof ClientError && !err.fromServer && spec.idempotencyKey)) throw err;
    return client.rotate(name, spec, opts);
  }
}

/** A rotation made whose answer (the server-made value) was lost: it cannot be shown again; what to do. */
function lostValue(name: string, opts: Options, spec: { awaitConfirmation?: boolean; idempotencyKey?: string }): CliError {
  const previous = spec.awaitConfirmation ? 'the previous value keeps working until a rotation is confirmed' : 'the previous value works only for the --overlap asked';
  return new CliError(
    `ownedaccesskey.${opts.apiGroup}/${name}: rotated (idempotency key ${spec.idempotencyKey ?? 'none'}), but the answer with the new value was lost, and a value the server generated cannot be shown again; ${previous}: run teamkeys rotate ${name} again (without that --idempotency-key) to get a value you hold`,
  );
}
