/** The ApiClient over an in-process registry on the embedded store (no HTTP, no authentication). */
import { storeOperatorSetter } from '../api/key-types.js';
import type { AuditEvent, AuditFilter, AuditReader } from '../api/audit-event.js';
import { ApiError } from '../api/errors.js';
import type { KubeObject } from '../api/types.js';
import type { Registry } from '../registry/registry.js';
import { ClientError, gitopsManager, type ApiClient, type ClientEvent, type ClientWatch, type DeleteOptions, type KeyRotationSpec, type ApiPlural, type Plural, type RotateOptions, type WriteOptions } from './types.js';

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) throw new ClientError(err.toStatus());
    throw err;
  }
}

/** What every write of this client is, unless told otherwise: the reconciler's, strictly decoded, by the store's operator. */
const writeDefaults = { fieldManager: gitopsManager, fieldValidation: 'Strict' as const, valueSetBy: storeOperatorSetter };

export class EmbeddedClient implements ApiClient {
  readonly apiVersion: string;

  constructor(
    private readonly registry: Registry,
    readonly target: string,
    private readonly closeStore: () => Promise<void> = async () => {},
    /** The audit trail of the process hosting the registry (the sidecar's server), if any. */
    private readonly audit?: AuditReader,
  ) {
    this.apiVersion = registry.teams.info.apiVersion;
  }

  private r(plural: ApiPlural) {
    return this.registry.byPlural(plural)!;
  }

  async list(plural: ApiPlural): Promise<KubeObject[]> {
    return call(async () => (await this.r(plural).list()).items);
  }

  async get(plural: ApiPlural, name: string): Promise<KubeObject | undefined> {
    try {
      return await this.r(plural).get(name);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err instanceof ApiError ? new ClientError(err.toStatus()) : err;
    }
  }

  create(plural: ApiPlural, obj: KubeObject, opts: WriteOptions = {}): Promise<KubeObject> {
    return call(async () => (await this.r(plural).create(obj, { ...writeDefaults, ...opts })).object);
  }

  replace(plural: ApiPlural, name: string, obj: KubeObject, opts: WriteOptions = {}): Promise<KubeObject> {
    return call(async () => (await this.r(plural).update(name, obj, { ...writeDefaults, ...opts })).object);
  }

  patch(plural: ApiPlural, name: string, ops: unknown[], opts: WriteOptions = {}): Promise<KubeObject> {
    return call(async () => (await this.r(plural).patch(name, 'json', ops, { ...writeDefaults, ...opts })).object);
  }

  rotate(name: string, spec: KeyRotationSpec, opts: RotateOptions = {}): Promise<KubeObject> {
    const { fieldManager, resourceVersion, ...rest } = opts;
    const body = { apiVersion: this.apiVersion, kind: 'KeyRotation', ...(resourceVersion ? { metadata: { resourceVersion } } : {}), spec };
    return call(async () => (await this.registry.ownedaccesskeys.rotate(name, body, { ...writeDefaults, fieldManager: fieldManager ?? gitopsManager, ...rest })).object);
  }

  async delete(plural: ApiPlural, name: string, opts: DeleteOptions = {}): Promise<void> {
    await call(() => this.r(plural).delete(name, { ...(opts.preconditions ? { preconditions: opts.preconditions } : {}), dryRun: opts.dryRun ?? false }));
  }

  watch(plural: ApiPlural): ClientWatch {
    const r = this.r(plural);
    let inner: ReturnType<typeof r.watch> | undefined;
    let stopped = false;
    const events = async function* (): AsyncGenerator<ClientEvent> {
      const { metadata } = await r.list({ limit: 1 });
      if (stopped) return;
      inner = r.watch({ resourceVersion: metadata.resourceVersion });
      for await (const e of inner) yield e as ClientEvent;
    };
    return {
      stop: () => {
        stopped = true;
        inner?.stop();
      },
      [Symbol.asyncIterator]: () => events(),
    };
  }

  async auditEvents(filter: AuditFilter): Promise<AuditEvent[] | undefined> {
    return this.audit?.list(filter);
  }

  close(): Promise<void> {
    return this.closeStore();
  }
}
